"""The key-value operations the node store needs, whatever carries them to etcd.

Both transports (gateway.py, grpc.py) implement ``KV``; the node store sees nothing else of etcd. The
errors they raise are errors.py's ``StoreUnavailable`` (no endpoint answered, or every answer was an
error) and ``AmbiguousWrite`` (a guarded write may or may not have landed), both ``PluginError``s.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol
else:
    from resource_extend.typeshim import Protocol


class Entry(Fields):
    """One key as read, never changed afterwards (hashable, like the frozen record it was)."""

    __slots__ = ("key", "mod_revision", "value")

    def __init__(self, key: str, value: bytes, mod_revision: int) -> None:
        self.key = key
        self.value = value
        self.mod_revision = mod_revision

    def __hash__(self) -> int:
        return hash((self.key, self.value, self.mod_revision))


class KV(Protocol):
    def get(self, key: str) -> Entry | None: ...

    def scan(self, prefix: str) -> list[Entry]:
        """Every key under ``prefix``."""
        ...

    def reads(self, chunks: list[list[str]]) -> Iterator[list[Entry | None]]:
        """``get(key)`` of every key, one chunk at a time (one read-only transaction each, so at most
        etcd's ``--max-txn-ops``, 128 by default), each chunk's list as soon as it is read, in its keys'
        order; all at the first chunk's revision, one consistent read. Only the keys asked for are read,
        however many others lie between them. A caller that decodes one chunk while the next is read
        overlaps its work with etcd's."""
        ...

    def put(self, key: str, value: bytes) -> None: ...

    def put_if(self, key: str, value: bytes, mod_revision: int) -> bool:
        """Write only if the key's mod_revision still equals ``mod_revision`` (0: the key is absent)."""
        ...

    def delete(self, key: str) -> None: ...


def single(key: str, entries: list[Entry]) -> Entry | None:
    """The one entry a read of ``key`` found, if any: more than one is etcd breaking its own contract."""
    if len(entries) > 1:
        raise PluginError(f"key: {key}: bad `Count` value, entity count invalid")
    return entries[0] if entries else None


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with ``prefix`` (etcd's range_end)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"  # every key
