"""Node records in etcd: one key per node, ``<prefix>/resource/<plugin>/<node>``.

The key layout and the record bytes are the reference's, so both implementations can share one etcd.
Unlike the reference, every write that depends on a read is guarded by the record's mod_revision
(absence: revision 0) and retried, so two writers outside core's node lock never lose an update.

Nothing is written that could not be read back (decision 9): every record passes its type's checks and
is decoded again from the very bytes about to be written. A node is its whole key (decision 10), and a
name no operator could have meant is refused before any write.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.formats.decoding import control_character

# ``typing`` and ``dataclasses`` are not imported on the call path: the generics below exist for the
# type checker, and at run time a subscripted class is the class itself.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Callable, Generic, TypeVar

    from resource_extend.store.etcd.kv import Entry, Snapshot
    from resource_extend.store.etcd.protocol import KV
    from resource_extend.store.record import Record
    from resource_extend.store.settle import Attempt

    R = TypeVar("R", bound=Record)
else:
    from resource_extend.typeshim import Generic

    R = None

# Enough for 20 writers racing on one node (a test does exactly that), bounded so a livelock ends.
MAX_ATTEMPTS = 64
# The longest node name a write accepts, in UTF-8 bytes (decision 10); etcd keys hold far more, but
# no host name does, and every record key is echoed in responses and logs.
MAX_NODE_NAME = 4096


class Change(Generic[R]):
    """What an update found and what it left: ``after is before`` when nothing was written."""

    __slots__ = ("after", "before")

    def __init__(self, before: R | None, after: R) -> None:
        self.before = before
        self.after = after


def check_node_name(node: str) -> None:
    """Refuse a name no write may create a key for (decision 10): too long, or with a control character."""
    size = len(node.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NODE_NAME:
        raise PluginError(f"node name is {size} bytes, longer than {MAX_NODE_NAME}: {node[:40]!r}...")
    found = control_character(node)
    if found is not None:
        raise PluginError(f"node name {node!r} holds the control character {found!r}")


def node_key(prefix: str, plugin: str, node: str) -> str:
    """The key of a node's record: ``NodeStore.key``, for the read a call sends before it opens its store."""
    return f"{prefix}/resource/{plugin}/{node}"


def token_key(prefix: str, plugin: str, node: str) -> str:
    """The key each guarded write of a node's record also writes a token of its own to (decision 20): by
    it, a write whose answer was lost is settled. Outside ``<prefix>/resource/``, so neither plugin's reads
    nor the Go binaries see it; remove-node leaves its token there as the node's tombstone."""
    return f"{prefix}/write-token/{plugin}/{node}"


class NodeStore(Generic[R]):
    __slots__ = ("_base", "_dir", "_kv", "_record", "_tokens", "_written")

    def __init__(self, kv: KV, prefix: str, plugin: str, record: type[R]) -> None:
        self._kv = kv
        # Plain concatenation, as the reference's namespaced client does: "/eru/" gives "/eru//resource/…".
        self._dir = node_key(prefix, plugin, "")
        self._tokens = token_key(prefix, plugin, "")
        self._record = record
        # How many guarded writes this store has sent: each carries a token of its own (``_token``).
        self._written = 0

    def key(self, node: str) -> str:
        return self._dir + node

    def get(self, node: str) -> R:
        entry = self._kv.get(self.key(node))
        if entry is None:
            raise errors.NodeNotExists(node)
        return self._decode(node, entry.value)

    def get_or_empty(self, node: str) -> R:
        entry = self._kv.get(self.key(node))
        return self._record.empty() if entry is None else self._decode(node, entry.value)

    def exists(self, node: str) -> bool:
        """Whether any record is stored for the node, readable or not."""
        return self._kv.get(self.key(node)) is not None

    def get_many(self, nodes: list[str]) -> dict[str, R]:
        """One record per distinct node, in request order, for the verbs that weigh nodes in bulk.

        A node without a record reads as empty, and so does one whose record cannot be read (decision 9):
        one bad record must not fail the answer for every other node. Single-node reads still fail on it.
        """
        wanted = list(dict.fromkeys(nodes))
        decoded = dict(self._read_many(wanted))
        return {node: decoded[node] for node in wanted}

    def iter_many(self, nodes: list[str]) -> Iterator[tuple[str, R]]:
        """``get_many``'s records, each distinct node once, in the order of their names (code point order,
        which is etcd's order of their keys) and as the reads arrive: a caller that weighs each node in
        turn (get-nodes-deploy-capacity) holds one chunk's records at a time, not every node's (10,000
        nodes: ~22 MiB at the peak instead of ~45)."""
        return self._read_many(list(dict.fromkeys(nodes)))

    def _read_many(self, wanted: list[str]) -> Iterator[tuple[str, R]]:
        """``iter_many`` of distinct nodes."""
        if not wanted:
            return
        if len(wanted) == 1:
            entry = self._kv.get(self.key(wanted[0]))
            yield wanted[0], self._decode_or_empty(None if entry is None else entry.value)
            return
        # Reads of the whole keys (decision 10: the reference's last-segment index let "rack7/n1" answer for
        # "n1"), in chunks of keys in etcd's order, each read as its span or as point reads (chunks.py's
        # dense): never the directory, nor many records between two wanted keys. The transport reads the
        # next chunk while this decodes the last.
        by_key = {self.key(node): node for node in wanted}
        chunks = chunked(by_key)
        for chunk, entries in zip(chunks, self._kv.reads(chunks)):
            for key, entry in zip(chunk, entries):
                yield by_key[key], self._decode_or_empty(None if entry is None else entry.value)

    def _decode_or_empty(self, data: bytes | None) -> R:
        if data is None:
            return self._record.empty()
        try:
            return self._record.decode(data)
        except PluginError:
            return self._record.empty()

    def read(self, node: str) -> Snapshot:
        """The node's record and its token key as they are now, in one read: what ``create`` writes after."""
        return self._kv.history([self.key(node), self._tokens + node], 0)

    def create(self, node: str, record: R, read: Snapshot | None = None) -> R:
        """Write a new record; fails with ``node already exists`` when any record is there. ``read``: the
        node as ``read`` found it, when the caller read it first (add-node does, before its request's
        resources, as the reference does)."""
        check_node_name(node)
        stored, data = self._storable(node, record)

        def change(entry: Entry | None) -> tuple[R, bytes] | None:
            if entry is not None:
                raise PluginError(f"node already exists: {node}")
            return stored, data

        self._write(node, change, read)
        return stored

    def put(self, node: str, record: R) -> R:
        """Overwrite whatever is stored (even an unreadable record): for writes that do not depend on it.

        Guarded all the same, so that it lands exactly once: sent again after its answer was lost, a plain
        put could overwrite another writer's change made in between (decision 20)."""
        check_node_name(node)
        stored, data = self._storable(node, record)
        self._write(node, lambda entry: None if entry is not None and entry.value == data else (stored, data))
        return stored

    def update(self, node: str, change: Callable[[R | None], R]) -> Change[R]:
        """Read, change and write back one record as one guarded step, retried when another writer won.

        ``change`` gets the stored record (``None`` when there is none) and returns the new one without
        mutating its argument: a lost race runs it again on the fresh record, and ``before`` is reported.
        Returning ``before`` itself means "no change" and writes nothing, and so does a new record whose
        bytes are the stored ones: core sends every plugin each workload's usage, so most calls of a plugin
        change nothing (a workload without GPUs, say), and a write would cost etcd a commit and its fsync
        for the same bytes. The call is then the read it made; the answer is the same.
        """
        check_node_name(node)
        made: list[Change[R]] = []

        def changed(entry: Entry | None) -> tuple[R, bytes] | None:
            before = None if entry is None else self._decode(node, entry.value)
            after = change(before)
            if before is not None and after is before:
                made.append(Change(before, before))
                return None
            stored, data = self._storable(node, after)
            made.append(Change(before, stored))
            return None if entry is not None and data == entry.value else (stored, data)

        number = self._write(node, changed)
        return made[number if number >= 0 else -1 - number]

    def _write(
        self,
        node: str,
        change: Callable[[Entry | None], tuple[R | None, bytes | None] | None],
        read: Snapshot | None = None,
    ) -> int:
        """Write ``change`` of the record as one guarded transaction, exactly once (decision 20); the
        number of the ``change`` call whose record was written, from 0, or -1 - that number when it found
        nothing to write.

        ``change`` gets the stored entry (``None``: absent) and returns the record and bytes to write (no
        bytes: delete the record), or None to write nothing. ``read``: the record and its token key as the
        caller read them (``read``), in place of the first read. Each attempt's transaction also writes a
        token of its own to the node's token key (``token_key``), beside the record and outside the
        reference's keys; a delete leaves its token there as a tombstone, so the token key's mod_revision
        only ever grows. A write where no record is stored is guarded by that revision too: absence holds
        again after a remove-node, the token key's revision never does. An attempt whose answer is not a
        clean success (another writer's change came first; the answer was lost, cut, or unreadable) is
        pending until settle.py finds out from etcd which change came first after the revision it
        guarded: its own (it landed: the call is done), another's (it can never land: its compare is
        dead, so the change is made again on what is stored now), or none yet (it may still land: the next
        attempt guards the same revision, so at most one of them lands).
        """
        key, tokens = self.key(node), self._tokens + node
        pending: list[Attempt] = []
        found = read  # what was read already (the caller's read, a failed compare's answer)
        for attempt in range(MAX_ATTEMPTS):
            if pending:
                from resource_extend.store import settle  # only a write that was not a clean success

                found = settle.now(self._kv, node, key, tokens, pending, found)
                landed = settle.landed(self._kv, node, key, tokens, pending, found)
                if landed is not None:
                    return landed.number
            entry = found.entries[0] if found is not None else self._kv.get(key)
            if entry is None and found is None:
                # Nothing stored: the write is guarded by the token key's revision too, read with it.
                found = self._kv.history([key, tokens], 0)
                entry = found.entries[0]
            wanted = change(entry)
            if wanted is None:
                return -1 - attempt
            guard, token_guard, since = 0 if entry is None else entry.mod_revision, None, 0
            if entry is None:
                assert found is not None
                made, since = found.entries[1], found.revision
                token_guard = 0 if made is None else made.mod_revision
            token = self._token(removed=wanted[1] is None)
            try:
                found = self._kv.put_if(key, wanted[1], guard, tokens, token, token_guard)
            except errors.StoreUnavailable as exc:
                from resource_extend.store import settle

                if not isinstance(exc, errors.AmbiguousWrite):
                    raise settle.unknown(node, pending, exc) from None
                pending.append(settle.Attempt(guard, token, attempt, str(exc), token_guard, since))
                found = None
                continue
            if found is None:
                return attempt
            # A failed compare is evidence, not proof (a member or proxy may lie): settled like a lost answer.
            from resource_extend.store import settle
            from resource_extend.store.etcd import retry  # only a lost race pays for it

            pending.append(settle.Attempt(guard, token, attempt, "its compare failed", token_guard, since))
            retry.backoff(attempt)
        from resource_extend.store import settle

        if pending:  # the last attempt's answer too is evidence: settled before the call gives up
            landed = settle.landed(
                self._kv, node, key, tokens, pending, settle.now(self._kv, node, key, tokens, pending, found)
            )
            if landed is not None:
                return landed.number
        raise settle.gave_up(node, pending, MAX_ATTEMPTS)

    def _token(self, removed: bool = False) -> bytes:
        """A token no other attempt of any call carries: random per store, numbered per attempt; a delete's
        says so (``removed.``), for an operator reading the key."""
        self._written += 1
        if self._written == 1:
            import posix  # built in, loaded by every interpreter at start: no import paid

            self._base = posix.urandom(12).hex()
        return f"{'removed.' if removed else ''}{self._base}.{self._written}".encode()

    def _storable(self, node: str, record: R) -> tuple[R, bytes]:
        """The checked record and its bytes, proven readable by decoding them again (decision 9)."""
        try:
            stored = record.checked()
            data = stored.encode()
            self._record.decode(data)
        except PluginError as exc:
            raise PluginError(f"node {node}: not written, store unchanged: {exc}") from None
        return stored, data

    def delete(self, node: str) -> None:
        """Remove the node's record in one guarded transaction, settled as every write is (sent again after
        its answer was lost, a plain delete could remove a node added in between). Its token stays as the
        node's tombstone: a write of the node made before it, whose answer was lost, can then never land
        after it (``_write``)."""
        # Not name-checked: removing is how an operator cleans up a name an older version stored.
        self._write(node, lambda entry: None if entry is None else (None, None))

    def _decode(self, node: str, data: bytes) -> R:
        try:
            return self._record.decode(data)
        except PluginError as exc:
            raise PluginError(
                f"node {node}: stored record is unreadable: {exc} (set-node-resource-info or remove-node replaces it)"
            ) from None


# -- the bulk reads' plan of chunks (also the early read's, command/prefetch.py) -----------------------------------


def chunked(keys: Iterable[str]) -> list[list[str]]:
    """The distinct ``keys`` in etcd's order (code point order is its byte order for UTF-8 keys), in chunks."""
    from resource_extend.store.etcd.chunks import CHUNK_KEYS  # bulk reads only

    ordered = sorted(keys)
    return [ordered[i : i + CHUNK_KEYS] for i in range(0, len(ordered), CHUNK_KEYS)]
