"""How both transports spend one call's time: one deadline and the endpoint order (retry.py: what changes them).

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

# How often one request is sent before the call gives up (the store's MAX_ATTEMPTS counts something else:
# guarded writes lost to other writers). Bounded by the call's deadline too; enough to ride out one
# leader election on a small cluster.
REQUEST_ATTEMPTS = 12
# How long past the call's deadline the read-back of an ambiguous guarded write may take (retry.grace).
READ_BACK_GRACE = 0.5


class Policy:
    """One call's deadline and its endpoints, in the order the next connection tries them."""

    __slots__ = ("_config", "deadline", "endpoints", "limit", "total_timeout")

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self.endpoints = list(config.endpoints)
        self.total_timeout = config.total_timeout  # the deadline's length, which retry.unavailable names
        self.deadline = 0.0
        self.limit = 0.0  # the deadline plus READ_BACK_GRACE: how far retry.grace may move it

    def start(self) -> None:
        # One deadline per process call: endpoints, retries and every byte read never add up past it.
        if not self.deadline:
            self.deadline = time.monotonic() + self.total_timeout
            self.limit = self.deadline + READ_BACK_GRACE

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
