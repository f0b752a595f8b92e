"""The staggered race both transports connect with when several endpoints are configured.

Its own module: a call to a single endpoint, the usual case, never creates these classes (nor imports
``threading``).
"""

from __future__ import annotations

import time

from resource_extend import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Generic, TypeVar

    from resource_extend.endpoints import Endpoint
    from resource_extend.store.etcd.policy import Policy

    T = TypeVar("T")
else:
    from resource_extend.typeshim import Generic

    T = None

# How long the first endpoint has to answer before the next one is tried as well (happy eyeballs):
# a silent member costs a call this much, not dial_timeout + request_timeout.
STAGGER = 0.25


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
        self._error: errors.PluginError | None = None
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
        except (Unanswered, errors.StoreUnavailable) as exc:  # StoreUnavailable: the call's deadline passed
            why = str(exc) if isinstance(exc, Unanswered) else "timed out"
            with self._cond:
                self.failures.append(f"{endpoint.url}: {why}")
                self._finished += 1
                self._cond.notify()
            return
        except errors.PluginError as exc:  # an answer that settles the call
            with self._cond:
                if self._error is None and not self._winner and not self._over:
                    self._error = exc
                self._finished += 1
                self._cond.notify()
            return
        except Exception as exc:  # a thread's own would print a traceback on the call's stderr
            # Anything else an attempt raises (a loser whose channel the race's end closed under it: gRPC's
            # "Cannot invoke RPC on closed channel!") fails that endpoint, in words, never a traceback.
            with self._cond:
                self.failures.append(f"{endpoint.url}: {type(exc).__name__}: {exc}")
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
