"""Node-store behaviours hand mutants of store/ survived (issue 37, docs/testing.md#mutant-sample-issue-37),
against a real etcd: each test names the behaviour it pins; the mutant is in the table there."""

from __future__ import annotations

import pytest

from resource_extend.command import prefetch
from resource_extend.config import EtcdConfig
from resource_extend.errors import Conflict, StoreUnavailable
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.store import nodes, settle
from resource_extend.store.etcd import transport as transports
from resource_extend.store.etcd.kv import Entry, Snapshot
from resource_extend.store.nodes import NodeStore
from resource_extend_dev.devetcd import DevEtcd, free_port


def store_for(etcd: DevEtcd | str, prefix: str) -> NodeStore[StorageRecord]:
    url = etcd if isinstance(etcd, str) else etcd.url
    kv = transports.open(EtcdConfig(machines=(url,), prefix=prefix, dial_timeout=1.0))
    return NodeStore(kv, prefix, "storage", StorageRecord)


def record(storage: int, used: int = 0) -> StorageRecord:
    return StorageRecord(NodeResource({}, [], storage), NodeResource({}, [], used))


def test_a_put_of_the_stored_bytes_writes_nothing(etcd: DevEtcd, prefix: str) -> None:
    store = store_for(etcd, prefix)
    store.put("n1", record(10))
    before = store.read("n1")
    store.put("n1", record(10))
    after = store.read("n1")
    assert [entry and entry.mod_revision for entry in after.entries] == [
        entry and entry.mod_revision for entry in before.entries
    ]


def test_an_update_that_loses_every_race_gives_up_as_a_conflict(
    etcd: DevEtcd, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every attempt's compare fails because another writer changed the record first: settled, each attempt
    # is dead (another's change came first), so the call gives up saying so, not that its outcome is unknown.
    monkeypatch.setattr(nodes, "MAX_ATTEMPTS", 2)
    store, rival = store_for(etcd, prefix), store_for(etcd, prefix)
    store.put("n1", record(10))
    calls = []

    def change(stored: StorageRecord | None) -> StorageRecord:
        calls.append(stored)
        rival.put("n1", record(10, len(calls)))  # lands between this read and the write
        return record(10, 100)

    with pytest.raises(Conflict, match=r"^node n1: gave up after 2 conflicting concurrent writes$"):
        store.update("n1", change)
    assert len(calls) == 2 and store.get("n1") == record(10, 2)


def test_a_write_refused_before_it_was_sent_fails_as_it_is_not_as_an_unknown_outcome(
    etcd: DevEtcd, prefix: str
) -> None:
    # The node was read (add-node reads first), then the only endpoint refuses the connection: the write never
    # left, so the failure is the refusal itself; "whether the write applied is unknown" would send an
    # operator to check a write that cannot have landed (settle.unknown of no pending attempt).
    read = store_for(etcd, prefix).read("n1")
    with pytest.raises(StoreUnavailable) as refused:
        store_for(f"http://127.0.0.1:{free_port()}", prefix).create("n1", record(10), read)
    assert "unknown" not in str(refused.value)
    assert store_for(etcd, prefix).exists("n1") is False


@pytest.mark.parametrize("changed_at", [4, 5])
def test_a_token_key_said_to_change_no_later_than_it_was_read_unchanged_is_a_bad_reply(
    etcd: DevEtcd, prefix: str, changed_at: int
) -> None:
    # A create read the token key at revision 5 holding revision 3; now etcd says it was last changed at 5
    # (or before): the answers contradict each other, and the write is not settled on them.
    kv = transports.open(EtcdConfig(machines=(etcd.url,), prefix=prefix))
    key, tokens = nodes.node_key(prefix, "storage", "n1"), nodes.token_key(prefix, "storage", "n1")
    now = Snapshot(9, [None, Entry(tokens, b"someone.1", changed_at)])
    with pytest.raises(StoreUnavailable, match="bad reply: the write token read at revision 5 with revision 3"):
        settle.first_token(kv, key, tokens, 3, 5, now)


def test_a_bulk_read_of_one_node_named_twice_takes_the_read_sent_early(etcd: DevEtcd, prefix: str) -> None:
    # iter_many reads one distinct node with a single read, so the early read (prefetch.send_reads) must be
    # that read, judged on the distinct names: a read of a chunk would not be taken, and the connection it
    # holds would be dropped for the read sent again.
    store_for(etcd, prefix).put("n1", record(10))
    kv = transports.open(EtcdConfig(machines=(etcd.url,), prefix=prefix))
    store = NodeStore(kv, prefix, "storage", StorageRecord)
    prefetch.send_reads(kv, store.key(""), ["n1", "n1"])
    conn = kv._conn  # type: ignore[attr-defined]
    assert conn is not None and kv._pending is not None  # type: ignore[attr-defined]
    assert store.get_many(["n1", "n1"]) == {"n1": record(10)}
    assert kv._pending is None and kv._conn is conn and not conn.closed  # type: ignore[attr-defined]
