"""How both transports spend one call's time: one deadline, the endpoint order, paced retries, the race.

Core starts a process per call and waits 30 s for it, so a dead or silent etcd member must cost a call
a fraction of that. The gateway and the gRPC client share this module, so they stay alike wherever
their protocols allow: what counts as a failed endpoint and what may be sent again is theirs.
"""

from __future__ import annotations

import time

from resource_extend.errors import PluginError, StoreUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Generic, TypeVar

    from resource_extend.config import EtcdConfig
    from resource_extend.etcd.endpoints import Endpoint

    T = TypeVar("T")
else:
    from resource_extend.typeshim import Generic

    T = None

# How often one request is sent before the call gives up (the store's MAX_ATTEMPTS counts something else:
# guarded writes lost to other writers). Bounded by the call's deadline too; enough to ride out one
# leader election on a small cluster.
REQUEST_ATTEMPTS = 12
# How long past the call's deadline the read-back of an ambiguous guarded write may take (Policy.grace).
READ_BACK_GRACE = 0.5
# How long the first endpoint has to answer before the next one is tried as well (happy eyeballs):
# a silent member costs a call this much, not dial_timeout + request_timeout.
STAGGER = 0.25


class Policy:
    """One call's deadline and its endpoints, in the order the next connection tries them."""

    __slots__ = ("_config", "_limit", "deadline", "endpoints")

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self.endpoints = list(config.endpoints)
        self.deadline = 0.0
        self._limit = 0.0

    def start(self) -> None:
        # One deadline per process call: endpoints, retries and every byte read never add up past it.
        if not self.deadline:
            self.deadline = time.monotonic() + self._config.total_timeout
            self._limit = self.deadline + READ_BACK_GRACE

    def grace(self) -> None:
        """Leave a guarded write whose answer could not be read time to read its key back, even when the
        answer took all the call's time: else such a call could only end "outcome unknown". Never past
        the deadline plus READ_BACK_GRACE, however many writes were ambiguous."""
        self.deadline = min(self._limit, max(self.deadline, time.monotonic() + READ_BACK_GRACE))

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def request_timeout(self) -> float:
        """The time one request may take: ``etcd.request_timeout``, less when the call's deadline is nearer."""
        left = self.left()
        if left <= 0:
            raise StoreUnavailable("etcd unavailable: timed out")
        return min(self._config.request_timeout, left)

    def dial_timeout(self) -> float:
        """The time one connection attempt may take; a ``TimeoutError`` (a failed dial) once the call's is up."""
        left = self.left()
        if left <= 0:
            raise TimeoutError("timed out")
        return min(self._config.dial_timeout, left)

    def rotate(self, failed: Endpoint) -> None:
        # The next connection starts with the endpoints that have not just failed.
        if failed in self.endpoints:
            self.endpoints.remove(failed)
            self.endpoints.append(failed)

    def pause(self, retry: int) -> None:
        """A growing pause before the ``retry``-th resend (from 0), so that an election can finish."""
        time.sleep(min(0.05 * 2**retry, 0.5, max(self.left(), 0)))

    def tried(self) -> str:
        return ", ".join(e.url for e in self.endpoints)


def backoff(attempt: int) -> None:
    """Sleep a jittered, growing pause before retrying a lost guarded write."""
    import random  # only a lost race pays for it

    time.sleep(random.uniform(0, min(0.1, 0.005 * (2**attempt))))  # jitter, not crypto


class Unanswered(Exception):
    """An endpoint that did not answer (refused, silent, a failed handshake), why in the transport's words."""


class Race(Generic[T]):
    """Reach several endpoints in staggered parallel: the first to answer wins.

    Endpoint i starts when every earlier attempt has failed or STAGGER after the previous start,
    whichever is first; all within the call's deadline. ``attempt`` connects and gets a first answer, or
    raises ``Unanswered`` (try the next endpoint) or a ``PluginError`` that settles the call (bad
    credentials, a TLS file). Losers are released when they finish; one still waiting when the race ends
    runs in a daemon thread and never delays the exit."""

    __slots__ = ("_attempt", "_cond", "_endpoints", "_error", "_finished", "_over", "_policy", "_release",
                 "_threading", "_winner", "failures", "started")  # fmt: skip

    def __init__(
        self,
        policy: Policy,
        endpoints: list[Endpoint],
        attempt: Callable[[Endpoint], T],
        release: Callable[[T], None],
    ) -> None:
        import threading  # only a first connection with several endpoints pays for it

        self._policy, self._endpoints, self._attempt, self._release = policy, endpoints, attempt, release
        self._threading = threading
        self._cond = threading.Condition()
        self._winner: list[T] = []  # empty until an attempt wins
        self._error: PluginError | None = None
        self._over = False
        self._finished = 0
        self.started = 0
        self.failures: list[str] = []

    def run(self) -> T | None:
        """The winner's answer, or None when every endpoint failed or the deadline passed (``failures`` says why)."""
        next_start = time.monotonic()
        with self._cond:
            while True:
                if self._error is not None:
                    self._over = True
                    raise self._error
                if self._winner:
                    return self._winner[0]
                now = time.monotonic()
                left = self._policy.deadline - now
                if left <= 0 or (self.started == len(self._endpoints) and self._finished == self.started):
                    # Attempts still waiting are named too; when they end they release what they opened.
                    failed = {f.partition(": ")[0] for f in self.failures}
                    self.failures += [
                        f"{e.url}: timed out" for e in self._endpoints[: self.started] if e.url not in failed
                    ]
                    self._over = True
                    return None
                if self.started < len(self._endpoints) and (now >= next_start or self._finished == self.started):
                    endpoint = self._endpoints[self.started]
                    self.started += 1
                    next_start = now + STAGGER
                    self._threading.Thread(target=self._run_attempt, args=(endpoint,), daemon=True).start()
                    continue
                wait = left if self.started == len(self._endpoints) else min(left, next_start - now)
                self._cond.wait(wait)

    def _run_attempt(self, endpoint: Endpoint) -> None:
        try:
            found = self._attempt(endpoint)
        except (Unanswered, StoreUnavailable) as exc:  # StoreUnavailable: the call's deadline passed
            why = str(exc) if isinstance(exc, Unanswered) else "timed out"
            with self._cond:
                self.failures.append(f"{endpoint.url}: {why}")
                self._finished += 1
                self._cond.notify()
            return
        except PluginError as exc:  # an answer that settles the call
            with self._cond:
                if self._error is None and not self._winner and not self._over:
                    self._error = exc
                self._finished += 1
                self._cond.notify()
            return
        with self._cond:
            self._finished += 1
            if not self._winner and self._error is None and not self._over:
                self._winner.append(found)
                self._cond.notify()
                return
        self._release(found)
