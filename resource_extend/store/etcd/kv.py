"""The key-value operations the node store needs, whatever carries them to etcd: the ``Entry`` a read returns.

Both transports (gateway.py, grpc.py) implement ``KV`` (protocol.py, types only); the node store sees nothing
else of etcd. The errors they raise are errors.py's ``StoreUnavailable`` (no endpoint answered, or every answer
was an error) and ``AmbiguousWrite`` (a guarded write may or may not have landed), both ``PluginError``s.
The plan of a read of many keys is chunks.py's, imported by such reads only.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.typeshim import Fields


class Entry(Fields):
    """One key as read, never changed afterwards (hashable, like the frozen record it was)."""

    __slots__ = ("key", "mod_revision", "value")

    def __init__(self, key: str, value: bytes, mod_revision: int) -> None:
        self.key = key
        self.value = value
        self.mod_revision = mod_revision

    def __hash__(self) -> int:
        return hash((self.key, self.value, self.mod_revision))


def single(key: str, entries: list[Entry]) -> Entry | None:
    """The one entry a read of ``key`` found, if any: more than one is etcd breaking its own contract."""
    if len(entries) > 1:
        raise PluginError(f"key: {key}: bad `Count` value, entity count invalid")
    return entries[0] if entries else None
