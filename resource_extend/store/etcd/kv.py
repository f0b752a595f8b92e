"""The key-value operations the node store needs, whatever carries them to etcd: the ``Entry`` a read returns.

Both transports (gateway.py, grpc.py) implement ``KV`` (protocol.py, types only); the node store sees nothing
else of etcd. The errors they raise are errors.py's ``StoreUnavailable`` (no endpoint answered, or every answer
was an error) and ``AmbiguousWrite`` (a guarded write may or may not have landed), both ``PluginError``s.
The plan of a read of many keys is chunks.py's, imported by such reads only.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.typeshim import Fields

# etcd's refusal of a read at a revision it no longer holds (mvcc.ErrCompacted), in both transports' answers.
COMPACTED = "required revision has been compacted"


class Entry(Fields):
    """One key as read, never changed afterwards (hashable, like the frozen record it was).

    ``create_revision`` is read where a write is settled (``KV.history``, a failed compare's answer) and 0
    elsewhere: the revision at which the key was last created, which an ambiguous create is settled at."""

    __slots__ = ("create_revision", "key", "mod_revision", "value")

    def __init__(self, key: str, value: bytes, mod_revision: int, create_revision: int = 0) -> None:
        self.key = key
        self.value = value
        self.mod_revision = mod_revision
        self.create_revision = create_revision

    def __hash__(self) -> int:
        return hash((self.key, self.value, self.mod_revision))


class Snapshot:
    """Some keys as etcd held them at one revision: ``entries[i]`` is ``keys[i]``'s (None: absent then).

    What ``KV.history`` reads, and what a guarded write's failed compare answers with (the record and its
    write token as the compare found them), so the store can tell whose change came first."""

    __slots__ = ("entries", "revision")

    def __init__(self, revision: int, entries: list[Entry | None]) -> None:
        self.revision = revision
        self.entries = entries


def single(key: str, entries: list[Entry]) -> Entry | None:
    """The one entry a read of ``key`` found, if any: more than one is etcd breaking its own contract."""
    if len(entries) > 1:
        raise PluginError(f"key: {key}: bad `Count` value, entity count invalid")
    return entries[0] if entries else None
