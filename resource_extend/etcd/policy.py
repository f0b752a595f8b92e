"""How both transports spend one call's time: one deadline, the endpoint order, paced retries.

Core starts a process per call and waits 30 s for it, so a dead or silent etcd member must cost a call
a fraction of that. The gateway and the gRPC client share this module, so they stay alike wherever
their protocols allow: what counts as a failed endpoint and what may be sent again is theirs.
"""

from __future__ import annotations

import time

from resource_extend import errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig
    from resource_extend.etcd.endpoints import Endpoint

# How often one request is sent before the call gives up (the store's MAX_ATTEMPTS counts something else:
# guarded writes lost to other writers). Bounded by the call's deadline too; enough to ride out one
# leader election on a small cluster.
REQUEST_ATTEMPTS = 12
# How long past the call's deadline the read-back of an ambiguous guarded write may take (Policy.grace).
READ_BACK_GRACE = 0.5


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
            raise errors.StoreUnavailable("etcd unavailable: timed out")
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
