"""Node records in etcd: one key per node, ``<prefix>/resource/<plugin>/<node>``.

The key layout and the record bytes are the reference's, so both implementations can share one etcd.
Unlike the reference, every write that depends on a read is guarded by the record's mod_revision
(absence: revision 0) and retried, so two writers outside core's node lock never lose an update.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Generic, Protocol, TypeVar

from resource_extend import jsonio
from resource_extend.errors import AmbiguousWrite, Conflict, NodeNotExists, PluginError, StoreUnavailable
from resource_extend.kv import KV, backoff

R = TypeVar("R")

# Enough for 20 writers racing on one node (a test does exactly that), bounded so a livelock ends.
MAX_ATTEMPTS = 64


class RecordType(Protocol[R]):
    """How one plugin's records are made, read, checked and written."""

    def empty(self) -> R: ...

    def decode(self, data: bytes) -> R: ...

    def checked(self, record: R) -> R:
        """The record as it will be stored, or a PluginError saying why it may not be."""
        ...

    def encode(self, record: R) -> bytes: ...


class JsonRecord(Protocol):
    def to_json(self) -> Any: ...


J = TypeVar("J", bound=JsonRecord)


class JsonRecords(Generic[J]):
    """A ``RecordType`` whose record is one JSON object, written the way the Go reference marshals it.

    Subclasses say how to make an empty record, read one from decoded JSON, and check one before a write.
    """

    def empty(self) -> J:
        raise NotImplementedError

    def from_json(self, doc: Any) -> J:
        raise NotImplementedError

    def checked(self, record: J) -> J:
        raise NotImplementedError

    def decode(self, data: bytes) -> J:
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise PluginError(f"invalid JSON: {exc}") from None
        return self.from_json(doc)

    def encode(self, record: J) -> bytes:
        return jsonio.dumps(record.to_json()).encode()


@dataclass(frozen=True)
class Change(Generic[R]):
    before: R | None
    after: R


class NodeStore(Generic[R]):
    def __init__(self, kv: KV, prefix: str, plugin: str, records: RecordType[R]) -> None:
        self._kv = kv
        # Plain concatenation, as the reference's namespaced client does: "/eru/" gives "/eru//resource/…".
        self._dir = f"{prefix}/resource/{plugin}/"
        self._records = records

    def key(self, node: str) -> str:
        return self._dir + node

    def get(self, node: str) -> R:
        entry = self._kv.get(self.key(node))
        if entry is None:
            raise NodeNotExists(node)
        return self._decode(node, entry.value)

    def get_or_empty(self, node: str) -> R:
        entry = self._kv.get(self.key(node))
        return self._records.empty() if entry is None else self._decode(node, entry.value)

    def get_many(self, nodes: list[str]) -> dict[str, R]:
        """One record per distinct node, in request order; nodes without a record read as empty."""
        wanted = list(dict.fromkeys(nodes))
        if not wanted:
            return {}
        if len(wanted) == 1:
            return {wanted[0]: self.get_or_empty(wanted[0])}
        # One range read for the whole plugin directory, indexed by the last key segment as the
        # reference does; only the requested records are decoded.
        found = {entry.key.rsplit("/", 1)[-1]: entry.value for entry in self._kv.scan(self._dir)}
        result = {}
        for node in wanted:
            data = found.get(node)
            result[node] = self._records.empty() if data is None else self._decode(node, data)
        return result

    def create(self, node: str, record: R) -> R:
        """Write a new record; fails with ``node already exists`` when any record is there."""
        stored = self._records.checked(record)
        if not self._put_if(self.key(node), self._records.encode(stored), 0):
            raise PluginError(f"node already exists: {node}")
        return stored

    def put(self, node: str, record: R) -> R:
        """Overwrite unconditionally: for writes that do not depend on what was stored."""
        stored = self._records.checked(record)
        self._kv.put(self.key(node), self._records.encode(stored))
        return stored

    def update(self, node: str, change: Callable[[R | None], R]) -> Change[R]:
        """Read, change and write back one record as one guarded step, retried when another writer won.

        ``change`` gets the stored record (``None`` when there is none) and returns the new one without
        mutating its argument: a lost race runs it again on the fresh record, and ``before`` is reported.
        Returning ``before`` itself means "no change" and writes nothing.
        """
        key = self.key(node)
        for attempt in range(MAX_ATTEMPTS):
            entry = self._kv.get(key)
            before = None if entry is None else self._decode(node, entry.value)
            changed = change(before)
            if before is not None and changed is before:
                return Change(before, before)
            after = self._records.checked(changed)
            if self._put_if(key, self._records.encode(after), 0 if entry is None else entry.mod_revision):
                return Change(before, after)
            backoff(attempt)
        raise Conflict(f"node {node}: gave up after {MAX_ATTEMPTS} conflicting concurrent writes")

    def _put_if(self, key: str, data: bytes, mod_revision: int) -> bool:
        """A guarded write; when its answer was lost, whether it landed is read back from etcd.

        It landed if the key now holds exactly these bytes at a newer revision. (Another writer writing
        the very same bytes in between is indistinguishable, and harmless for absolute values.)
        """
        try:
            return self._kv.put_if(key, data, mod_revision)
        except AmbiguousWrite as exc:
            try:
                entry = self._kv.get(key)
            except StoreUnavailable:
                raise StoreUnavailable(f"{exc}; whether the write applied is unknown") from None
            return entry is not None and entry.value == data and entry.mod_revision != mod_revision

    def delete(self, node: str) -> None:
        self._kv.delete(self.key(node))

    def _decode(self, node: str, data: bytes) -> R:
        try:
            return self._records.decode(data)
        except PluginError as exc:
            raise PluginError(f"node {node}: stored record is unreadable: {exc}") from None
