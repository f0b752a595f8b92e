"""The errors a verb can fail with.

Every failure a caller can cause or a store can report is a ``PluginError``; the command line prints its
message on one stderr line and exits 128. Anything else escaping a verb is a bug, reported the same way
(never as a traceback) so that core's combined-output reader still gets one line.
"""

from __future__ import annotations


class PluginError(Exception):
    """A verb failed; ``str(error)`` is the one line an operator reads."""


class NodeNotExists(PluginError):
    """The store holds no record for the node (reference sentinel ``node not exists``)."""

    def __init__(self, node: str) -> None:
        super().__init__(f"key: {node}: node not exists")
        self.node = node


class Sentinel(PluginError):
    """A failure the reference words as ``<detail>: <its sentinel error>``; core and operators match the suffix."""

    SUFFIX = ""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{detail}: {self.SUFFIX}")


class InvalidVolume(Sentinel):
    """A volume or volume binding the reference refuses (``ErrInvalidVolume``)."""

    SUFFIX = "invalid volume"


class InvalidDisk(Sentinel):
    """A disk the reference refuses (``ErrInvalidDisk``)."""

    SUFFIX = "invalid disk"


class InvalidStorage(Sentinel):
    """A storage size the reference refuses (``ErrInvalidStorage``)."""

    SUFFIX = "invalid storage"


class InsufficientResource(Sentinel):
    """No placement fits (``ErrInsufficientResource``)."""

    SUFFIX = "cannot alloc a plan, not enough resource"


class Conflict(PluginError):
    """A guarded write kept losing to concurrent writers after every retry."""


class UsageError(Exception):
    """A malformed command line: exit status 2, never touches the store."""


class StoreUnavailable(PluginError):
    """No etcd endpoint answered, or every answer was an error."""


class HistoryCompacted(StoreUnavailable):
    """etcd no longer holds the revision a read asked for (``etcd compact``, or its auto-compaction)."""


class AmbiguousWrite(StoreUnavailable):
    """A guarded write reached etcd but its answer did not come back: it may or may not have applied.

    Sending it again would fail its compare if it had applied, and the store would then apply the
    change a second time; the store settles it instead, by the write token its transaction carried
    (store/nodes.py, decision 20).
    """
