"""The node store and its etcd transports, against a real etcd: every store test runs over both."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.errors import AmbiguousWrite, NodeNotExists, PluginError, StoreUnavailable
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.store.etcd import chunks as chunks_module
from resource_extend.store.etcd import gatewaybulk
from resource_extend.store.etcd import transport as transports
from resource_extend.store.etcd.chunks import prefix_end
from resource_extend.store.etcd.connection import Connection
from resource_extend.store.etcd.gateway import GatewayKV
from resource_extend.store.etcd.kv import Entry, Snapshot
from resource_extend.store.nodes import NodeStore
from resource_extend_dev.devetcd import DevEtcd, free_port
from tests.support import PASSWORD, ROOT

TRANSPORTS = ("gateway", "grpc")


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """The store contract holds over each transport: tests that take this fixture run once per transport."""
    name: str = request.param
    return name


def store_for(etcd: DevEtcd, prefix: str, transport: str = "gateway", **kw: object) -> NodeStore[GpuRecord]:
    config = EtcdConfig(machines=(etcd.url,), prefix=prefix, transport=transport, **kw)  # type: ignore[arg-type]
    kv = transports.open(config)
    return NodeStore(kv, prefix, "gpu", GpuRecord)


def test_key_is_prefix_plus_plugin_directory_by_plain_concatenation(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store_for(etcd, prefix + "/", transport).put("n1", GpuRecord({"a": 1}, {}))
    assert etcd.get(f"{prefix}//resource/gpu/n1") is not None


def test_put_writes_the_reference_bytes(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store_for(etcd, prefix, transport).put("n1", GpuRecord({"nvidia-3090": 4, "nvidia-3070": 4}, {}))
    assert etcd.get(f"{prefix}/resource/gpu/n1") == (
        '{"capacity":{"prod_count_map":{"nvidia-3070":4,"nvidia-3090":4}},"usage":{"prod_count_map":{}}}'
    )


def test_get_of_a_missing_node_is_node_not_exists(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    with pytest.raises(NodeNotExists, match="key: ghost: node not exists"):
        store.get("ghost")
    assert store.get_or_empty("ghost") == GpuRecord({}, {})


def test_get_many_returns_each_distinct_node_in_request_order(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    store.put("b", GpuRecord({"x": 2}, {}))
    store.put("a", GpuRecord({"x": 1}, {}))
    got = store.get_many(["b", "ghost", "a", "b"])
    assert list(got) == ["b", "ghost", "a"]
    assert got["ghost"] == GpuRecord({}, {})
    assert got["a"].capacity == {"x": 1}
    assert store.get_many([]) == {}


@pytest.mark.parametrize("between", [1, 40])
def test_get_many_returns_the_wanted_keys_and_no_other_over_a_span_or_point_reads(
    etcd: DevEtcd, prefix: str, transport: str, between: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_for(etcd, prefix, transport)
    # Names a span or prefix read would also find: one a prefix of another, non-ASCII around the wanted
    # ones, and `between` others: 1, and the chunk is read as its span; 40, by point reads (chunks.dense).
    others = ["a", "n1/x", "z", "\u4e00", *[f"o{i:02}" for i in range(between)]]
    wanted = ["n10", "ñ", "n1", "ghost", "n2", "n\ufffd", *[f"w{i}" for i in range(10)]]
    for count, node in enumerate([*others, *wanted], start=1):
        if node not in ("ghost", "n\ufffd"):
            store.put(node, GpuRecord({"x": count}, {}))
    # A key that is not UTF-8 between them reads as "n\ufffd", and must not answer for that name.
    etcd.call("/v3/kv/put", {"key": _b64bytes(f"{prefix}/resource/gpu/n\xff".encode("latin-1")),
                             "value": _b64(json.dumps(SEED_GPU))})  # fmt: skip
    plans: list[bool] = []
    real_dense = chunks_module.dense

    def planned(count: int, asked: int) -> bool:
        plans.append(real_dense(count, asked))
        return plans[-1]

    # The module that plans a bulk read: the gateway's is gatewaybulk.py.
    monkeypatch.setattr(f"resource_extend.store.etcd.{transport.replace('gateway', 'gatewaybulk')}.dense", planned)
    got = store.get_many(wanted)
    assert plans == [between == 1]
    stored = {node: count for count, node in enumerate([*others, *wanted], start=1)}
    assert {node: record.capacity for node, record in got.items()} == {
        node: {} if node in ("ghost", "n\ufffd") else {"x": stored[node]} for node in wanted
    }


def test_get_many_over_many_chunks_finds_what_single_reads_find(
    etcd: DevEtcd, prefix: str, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunks_module, "CHUNK_KEYS", 7)  # many chunks from a few dozen nodes
    store = store_for(etcd, prefix, transport)
    everyone = [f"n{i}" for i in range(60)] + ["n5/x", "ñ", "\u4e00"]
    for count, node in enumerate(everyone, start=1):
        store.put(node, GpuRecord({"x": count}, {}))
    wanted = [*random.Random(7).sample(everyone, 45), "ghost", "n50", "zz"]
    chunks: list[int] = []
    real_reads = store._kv.reads

    def counting_reads(given: list[list[str]]) -> Iterator[list[Entry | None]]:
        chunks.append(len(given))
        return real_reads(given)

    monkeypatch.setattr(store._kv, "reads", counting_reads)
    got = store.get_many(wanted)
    assert chunks == [7]  # 47 distinct wanted keys, 7 per chunk
    assert list(got) == list(dict.fromkeys(wanted))
    for node, record in got.items():
        assert record == store.get_or_empty(node), node


class UnreadablePipeline(GatewayKV):
    """The real gateway client, recording how many requests each write carries; with ``spoil`` "answer" or
    "connection", the pipeline's second request is spoiled on its way out or the connection lost after it."""

    def __init__(self, config: EtcdConfig, spoil: str) -> None:
        super().__init__(config)
        self.spoil = spoil
        self.sends: list[int] = []
        self.wrapped: list[Connection] = []

    def _connection(
        self, failures: list[str], read: tuple[str, bytes] | None
    ) -> tuple[Connection, tuple[int, bytes] | None]:
        conn, early = super()._connection(failures, read)
        if conn in self.wrapped:
            return conn, early
        self.wrapped.append(conn)
        real_send, spoil, sends = conn.send, self.spoil, self.sends

        def send(requests: list[tuple[str, bytes]], token: str | None, timeout: float) -> None:
            sends.append(len(requests))
            if len(requests) > 1:  # the pipeline: spoil its second request, or lose the connection after it
                if spoil == "answer":
                    requests = [requests[0], ("/v3/kv/txn", b'{"success": 12}'), *requests[2:]]
                real_send(requests, token, timeout)
                if spoil == "connection":
                    conn.close()
                return
            real_send(requests, token, timeout)

        conn.send = send  # type: ignore[method-assign]
        return conn, early


def without_h2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Span reads go the gateway's pipelined way, as they do whenever h2/client.py cannot read them."""
    monkeypatch.setattr(gatewaybulk, "_spans_over_h2", lambda *_: None)


def chunks_of(directory: str, names: list[str], size: int) -> list[list[str]]:
    return [[directory + name for name in names[i : i + size]] for i in range(0, len(names), size)]


@pytest.mark.parametrize("spoil", ["answer", "connection"])
def test_a_pipelined_read_that_fails_is_read_again_the_usual_way(
    etcd: DevEtcd, prefix: str, spoil: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_h2(monkeypatch)
    writer = store_for(etcd, prefix)
    for i in range(12):
        writer.put(f"n{i:02}", GpuRecord({"x": i + 1}, {}))
    kv = UnreadablePipeline(EtcdConfig(machines=(etcd.url,), prefix=prefix), spoil)
    chunks = chunks_of(f"{prefix}/resource/gpu/", [f"n{i:02}" for i in range(12)], 3)
    read = [[entry.key[-3:] for entry in entries if entry] for entries in kv.reads(chunks)]
    assert read == [[f"n{j:02}" for j in range(i, i + 3)] for i in range(0, 12, 3)]
    assert kv.sends[:2] == [1, 4]  # the counting alone, then the four reads in one write
    assert kv.get(f"{prefix}/resource/gpu/n05") is not None  # and the connection serves what comes next


@pytest.mark.parametrize("how", ["gateway", "grpc", "gateway, no h2", "gateway, no h2, pipeline lost"])
def test_chunks_are_read_at_the_first_ones_revision(
    etcd: DevEtcd, prefix: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "no h2" in how:
        without_h2(monkeypatch)
    writer = store_for(etcd, prefix)
    for i in range(6):
        writer.put(f"n{i}", GpuRecord({"x": 1}, {}))
    config = EtcdConfig(machines=(etcd.url,), prefix=prefix, transport=how.split(",")[0])
    kv = UnreadablePipeline(config, "connection") if "lost" in how else transports.open(config)
    reading = kv.reads(chunks_of(f"{prefix}/resource/gpu/", [f"n{i}" for i in range(6)], 2))
    next(reading)
    writer.put("n5", GpuRecord({"x": 2}, {}))  # lands after the first chunk was read
    last = list(reading)[-1][-1]
    assert last is not None and json.loads(last.value)["capacity"]["prod_count_map"] == {"x": 1}
    assert writer.get("n5").capacity == {"x": 2}


@pytest.mark.parametrize("cluster", ["tls", "auth"])
def test_pipelined_chunks_carry_tls_and_the_auth_token(
    cluster: str, tls_etcd: tuple[DevEtcd, dict[str, str]], auth_etcd: DevEtcd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunks_module, "CHUNK_KEYS", 5)
    if cluster == "tls":
        server, files = tls_etcd
        config = EtcdConfig(
            machines=(server.url,), prefix="/tls-spans", ca=files["ca"], cert=files["client"], key=files["client-key"]
        )
    else:
        config = EtcdConfig(machines=(auth_etcd.url,), prefix="/eru-auth/spans", username="eru", password=PASSWORD)
    kv = UnreadablePipeline(config, "nothing")
    store = NodeStore(kv, config.prefix, "gpu", GpuRecord)
    for i in range(23):
        store.put(f"n{i:02}", GpuRecord({"x": i + 1}, {}))
    kv.sends.clear()
    got = store.get_many([f"n{i:02}" for i in range(23)])
    assert [record.capacity for record in got.values()] == [{"x": i + 1} for i in range(23)]
    # The counting, then over TLS the five reads pipelined; from a plain member they go over h2 (h2/client.py),
    # which carries the token too: nothing is read again over the gateway.
    assert kv.sends == ([1, 5] if cluster == "tls" else [1])


def test_a_caller_that_stops_reading_chunks_early_leaves_no_answer_behind(etcd: DevEtcd, prefix: str) -> None:
    writer = store_for(etcd, prefix)
    for i in range(6):
        writer.put(f"n{i}", GpuRecord({"x": i + 1}, {}))
    kv = GatewayKV(EtcdConfig(machines=(etcd.url,), prefix=prefix))
    directory = f"{prefix}/resource/gpu/"
    reading = kv.reads(chunks_of(directory, [f"n{i}" for i in range(6)], 1))
    assert [entry.key for entry in next(reading) if entry] == [directory + "n0"]
    reading.close()  # five answers were still due on the connection
    entry = kv.get(directory + "n4")
    assert entry is not None and json.loads(entry.value)["capacity"]["prod_count_map"] == {"x": 5}


def test_create_refuses_an_existing_node(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    store.create("n1", GpuRecord({"a": 1}, {}))
    with pytest.raises(PluginError, match="node already exists"):
        store.create("n1", GpuRecord({"a": 2}, {}))
    assert store.get("n1").capacity == {"a": 1}


def test_invalid_records_are_never_written(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    with pytest.raises(PluginError, match="invalid capacity"):
        store.put("n1", GpuRecord({"a": 0}, {}))
    assert etcd.get(f"{prefix}/resource/gpu/n1") is None


def test_update_retries_when_another_writer_wins_the_race(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    rival = store_for(etcd, prefix, transport)
    store.put("n1", GpuRecord({"a": 1}, {}))
    attempts = []

    def add_one(record: GpuRecord | None) -> GpuRecord:
        assert record is not None
        attempts.append(dict(record.usage or {}))
        if len(attempts) == 1:  # a concurrent writer lands between our read and our write
            rival.put("n1", GpuRecord({"a": 1}, {"a": 5}))
        return GpuRecord(record.capacity, {"a": (record.usage or {}).get("a", 0) + 1})

    done = store.update("n1", add_one)
    assert attempts == [{}, {"a": 5}]
    assert done.after.usage == {"a": 6}
    assert store.get("n1").usage == {"a": 6}


def test_update_of_an_absent_node_is_guarded_too(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    rival = store_for(etcd, prefix, transport)
    seen = []

    def change(record: GpuRecord | None) -> GpuRecord:
        seen.append(record)
        if len(seen) == 1:
            rival.put("n1", GpuRecord({"a": 3}, {}))
        return GpuRecord((record.capacity if record else {}) or {}, {"a": 1})

    store.update("n1", change)
    assert seen[0] is None and seen[1] == GpuRecord({"a": 3}, {})
    assert store.get("n1") == GpuRecord({"a": 3}, {"a": 1})


def test_update_that_returns_the_record_unchanged_writes_nothing(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    store.put("n1", GpuRecord({"a": 1}, {}))
    before = etcd.call("/v3/kv/range", {"key": _b64(f"{prefix}/resource/gpu/n1")})["kvs"][0]["mod_revision"]
    store.update("n1", lambda record: record)  # type: ignore[arg-type,return-value]
    after = etcd.call("/v3/kv/range", {"key": _b64(f"{prefix}/resource/gpu/n1")})["kvs"][0]["mod_revision"]
    assert before == after


def test_update_to_the_stored_bytes_writes_nothing_and_answers_as_a_write_would(
    etcd: DevEtcd, prefix: str, transport: str
) -> None:
    # Core sends each plugin every workload's usage: a workload without GPUs changes nothing here, and must
    # not cost etcd a commit. A record that differs in any byte is written.
    store = store_for(etcd, prefix, transport)
    store.put("n1", GpuRecord({"a": 2}, {}))

    def revision() -> int:
        return int(etcd.call("/v3/kv/range", {"key": _b64(f"{prefix}/resource/gpu/n1")})["kvs"][0]["mod_revision"])

    def same(record: GpuRecord | None) -> GpuRecord:
        assert record is not None
        return GpuRecord(dict(record.capacity or {}), dict(record.usage or {}))  # equal, not the same object

    def one_used(record: GpuRecord | None) -> GpuRecord:
        assert record is not None
        return GpuRecord(dict(record.capacity or {}), {"a": 1})

    first = revision()
    change = store.update("n1", same)
    assert revision() == first
    assert (change.before, change.after) == (GpuRecord({"a": 2}, {}), GpuRecord({"a": 2}, {}))
    store.update("n1", one_used)
    assert revision() > first
    assert store.get("n1") == GpuRecord({"a": 2}, {"a": 1})


def test_delete_of_a_missing_node_succeeds(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    store.delete("ghost")
    store.put("n1", GpuRecord({}, {}))
    store.delete("n1")
    assert etcd.get(f"{prefix}/resource/gpu/n1") is None


def test_each_guarded_write_leaves_a_token_of_its_own_beside_the_record_and_delete_a_tombstone(
    etcd: DevEtcd, prefix: str, transport: str
) -> None:
    store = store_for(etcd, prefix, transport)
    token = f"{prefix}/write-token/gpu/n1"
    store.create("n1", GpuRecord({"a": 2}, {}))
    created = etcd.get(token)
    assert created is not None and etcd.get(f"{prefix}/resource/gpu/n1") is not None
    store.update("n1", lambda r: GpuRecord({"a": 2}, {"a": 1}))
    updated = etcd.get(token)
    assert updated is not None and updated != created  # one token per attempt
    assert store_for(etcd, prefix, transport)._token() not in (created.encode(), updated.encode())  # per call too
    store.delete("n1")
    tombstone = etcd.get(token)
    assert etcd.get(f"{prefix}/resource/gpu/n1") is None
    assert tombstone is not None and tombstone.startswith("removed.")  # the token key never goes back to absent
    store.create("n1", GpuRecord({"a": 2}, {}))  # the create is guarded by the tombstone's revision
    assert etcd.get(token) not in (None, tombstone)


def test_a_failed_compare_answers_with_the_record_and_token_it_found(
    etcd: DevEtcd, prefix: str, transport: str
) -> None:
    kv = transports.open(EtcdConfig(machines=(etcd.url,), prefix=prefix, transport=transport))
    key, token = f"{prefix}/k", f"{prefix}/t"
    assert kv.put_if(key, b"v1", 0, token, b"t1") is None
    found = kv.put_if(key, b"v2", 0, token, b"t2")
    assert found is not None
    record, made = found.entries
    assert record is not None and made is not None
    assert (record.value, made.value) == (b"v1", b"t1")
    assert record.mod_revision == record.create_revision == made.mod_revision == found.revision
    pinned = kv.history([key, token], found.revision - 1)
    assert pinned.entries == [None, None] and pinned.revision == found.revision - 1


def test_unreadable_stored_record_is_a_clear_error(etcd: DevEtcd, prefix: str, transport: str) -> None:
    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps({"capacity": {"prod_count_map": {"a": 1.5}}}))
    with pytest.raises(PluginError, match="node n1: stored record is unreadable"):
        store_for(etcd, prefix, transport).get("n1")


def test_next_machine_is_tried_when_the_first_refuses(etcd: DevEtcd, prefix: str, transport: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    kv = transports.open(EtcdConfig(machines=(dead, etcd.url), prefix=prefix, transport=transport))
    store = NodeStore(kv, prefix, "gpu", GpuRecord)
    store.put("n1", GpuRecord({"a": 1}, {}))
    assert store.get("n1").capacity == {"a": 1}


def test_no_reachable_machine_names_every_endpoint_tried(prefix: str, transport: str) -> None:
    dead = (f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}")
    kv = transports.open(EtcdConfig(machines=dead, prefix=prefix, transport=transport))
    with pytest.raises(StoreUnavailable) as caught:
        NodeStore(kv, prefix, "gpu", GpuRecord).get("n1")
    assert all(url in str(caught.value) for url in dead)


def test_large_scans_arrive_whole(etcd: DevEtcd, prefix: str, transport: str) -> None:
    store = store_for(etcd, prefix, transport)
    for i in range(300):  # big enough that the gateway streams the reply in chunks
        store.put(f"node-{i:03}", GpuRecord({f"product-{j}": j + 1 for j in range(8)}, {}))
    got = store.get_many([f"node-{i:03}" for i in range(300)])
    assert all(record.capacity and len(record.capacity) == 8 for record in got.values())


def test_iter_many_yields_get_manys_records_in_name_order_as_the_chunks_arrive(
    etcd: DevEtcd, prefix: str, transport: str
) -> None:
    store = store_for(etcd, prefix, transport)
    names = [f"node-{i:03}" for i in range(300)]  # three chunks of chunks.CHUNK_KEYS
    for i, name in enumerate(names):
        if i % 7:
            store.put(name, GpuRecord({"p": i}, {}))
    etcd.put(f"{prefix}/resource/gpu/node-005", "not json")  # unreadable: empty, as get_many reads it
    wanted = [*reversed(names), "node-010", "ghost"]
    streamed = store.iter_many(wanted)
    first = next(streamed)  # a generator: the first node comes before the rest are asked for
    rest = list(streamed)
    assert [first, *rest] == sorted(store.get_many(wanted).items())
    assert dict([first, *rest])["node-005"] == GpuRecord({}, {})
    assert dict([first, *rest])["ghost"] == GpuRecord({}, {})


def test_prefix_end_is_the_next_key_after_the_prefix() -> None:
    assert prefix_end(b"/a/") == b"/a0"
    assert prefix_end(b"a\xff") == b"b"


def _b64(text: str) -> str:
    return _b64bytes(text.encode())


def _b64bytes(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


SEED_GPU = {"capacity": {"prod_count_map": {"a": 1}}, "usage": {"prod_count_map": {}}}


@pytest.mark.parametrize(
    ("url", "scheme", "host", "port"),
    [("http://127.0.0.1:2379", "http", "127.0.0.1", 2379), ("https://etcd.example:443/", "https", "etcd.example", 443),
     ("HTTP://10.0.0.1:2380", "http", "10.0.0.1", 2380), ("http://[::1]:2379", "http", "::1", 2379),
     ("http://etcd", "http", "etcd", 2379)],
)  # fmt: skip
def test_endpoints_are_parsed_like_etcd_clients_read_them(url: str, scheme: str, host: str, port: int) -> None:
    from resource_extend.endpoints import parse_endpoint

    endpoint = parse_endpoint(url)
    assert (endpoint.scheme, endpoint.host, endpoint.port) == (scheme, host, port)


# Decision 15: the scheme is required (it decides TLS), so a bare host:port is refused too.
@pytest.mark.parametrize("url", ["ftp://x:1", "http://x:99999", "http://", "http://a b:1", "10.0.0.1:2380"])
def test_malformed_endpoints_are_a_config_error(url: str) -> None:
    from resource_extend.endpoints import parse_endpoint

    with pytest.raises(PluginError, match=r"etcd\.machines"):
        parse_endpoint(url)


class LostAnswers(GatewayKV):
    """The real gateway client, except that the first guarded write loses its answer: applied, or not, then
    silent; ``meanwhile`` runs before the loss is reported (other writers' changes)."""

    def __init__(self, config: EtcdConfig, apply: bool, meanwhile: Callable[[], None] = lambda: None) -> None:
        super().__init__(config)
        self.apply = apply
        self.lost = 0
        self.meanwhile = meanwhile

    def put_if(
        self,
        key: str,
        value: bytes | None,
        mod_revision: int,
        token_key: str,
        token: bytes,
        token_revision: int | None = None,
    ) -> Snapshot | None:
        if self.lost == 0:
            self.lost += 1
            if self.apply:
                super().put_if(key, value, mod_revision, token_key, token, token_revision)
            self.meanwhile()
            raise AmbiguousWrite("etcd: no answer (injected)")
        return super().put_if(key, value, mod_revision, token_key, token, token_revision)


def one_more(record: GpuRecord | None) -> GpuRecord:
    assert record is not None
    return GpuRecord(record.capacity, {"a": (record.usage or {}).get("a", 0) + 1})


@pytest.mark.parametrize("applied", [True, False])
@pytest.mark.parametrize("others", [1, 2, 7, 40])
def test_a_lost_write_is_settled_by_the_first_change_after_its_guard_however_many_came_after(
    etcd: DevEtcd, prefix: str, applied: bool, others: int
) -> None:
    # Other writers' +1s (each with a token, and some unrelated keys' revisions between them) after the lost
    # write: the settling searches the revisions for the first change after the guard, whichever it is.
    other = store_for(etcd, prefix, "gateway")
    other.put("n1", GpuRecord({"a": 100}, {}))

    def meanwhile() -> None:
        for i in range(others):
            other.update("n1", one_more)
            etcd.put(f"{prefix}/elsewhere/{i}", "x")

    kv = LostAnswers(EtcdConfig(machines=(etcd.url,), prefix=prefix), apply=applied, meanwhile=meanwhile)
    done = NodeStore(kv, prefix, "gpu", GpuRecord).update("n1", one_more)
    assert other.get("n1").usage == {"a": others + 1}  # this call's +1 once, whether its lost write landed or not
    assert done.after.usage == {"a": 1 if applied else others + 1}


@pytest.mark.parametrize("applied", [True, False])
def test_a_guarded_write_whose_answer_is_lost_is_applied_exactly_once(
    etcd: DevEtcd, prefix: str, applied: bool
) -> None:
    kv = LostAnswers(EtcdConfig(machines=(etcd.url,), prefix=prefix), apply=applied)
    store = NodeStore(kv, prefix, "gpu", GpuRecord)
    store_for(etcd, prefix, "gateway").put("n1", GpuRecord({"a": 10}, {"a": 1}))
    done = store.update(
        "n1", lambda r: GpuRecord(r.capacity, {"a": (r.usage or {})["a"] + 1}) if r else GpuRecord({}, {})
    )
    assert kv.lost == 1
    assert done.after.usage == {"a": 2}
    assert store.get("n1").usage == {"a": 2}  # one increment, whether or not the lost write had landed


FAILURE_ONLY_MODULES = ["resource_extend.store.etcd.failing", "resource_extend.store.etcd.retry"]


@pytest.mark.parametrize("cluster", ["one endpoint", "auth", "several endpoints"])
def test_a_gateway_call_that_succeeds_loads_no_failure_handling(
    cluster: str, etcd: DevEtcd, auth_etcd: DevEtcd, prefix: str
) -> None:
    # failing.py and retry.py (with BadReply) are the
    # gateway's failure half: a call that reads and writes without a failure never loads them, whether it
    # connects plainly, authenticates (greeting.py) or races several endpoints (race.py).
    if cluster == "auth":
        config = f"machines=({auth_etcd.url!r},), prefix='/eru-auth/quiet', username='eru', password={PASSWORD!r}"
    elif cluster == "several endpoints":
        config = f"machines=({etcd.url!r}, {etcd.url!r}), prefix={prefix!r}"
    else:
        config = f"machines=({etcd.url!r},), prefix={prefix!r}"
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from resource_extend.config import EtcdConfig\n"
        "from resource_extend.gpu.manifest import GpuRecord\n"
        "from resource_extend.store.etcd.gateway import GatewayKV\n"
        "from resource_extend.store.nodes import NodeStore\n"
        f"config = EtcdConfig({config})\n"
        "store = NodeStore(GatewayKV(config), config.prefix, 'gpu', GpuRecord)\n"
        "store.put('n1', GpuRecord({'x': 2}, {}))\n"
        "store.update('n1', lambda r: GpuRecord(r.capacity, {'x': 1}))\n"
        "assert store.get('n1').usage == {'x': 1}\n"
        f"print(' '.join(m for m in {FAILURE_ONLY_MODULES!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


@pytest.mark.parametrize("then", ["removed", "removed and added again"])
def test_a_lost_create_is_settled_once_though_the_node_was_removed_after_it(
    etcd: DevEtcd, prefix: str, then: str
) -> None:
    # A record's absence holds again after a remove-node: guarded by absence alone, the lost create was
    # taken for one that never landed and made again (the removed node back), or, with the node added
    # again, for another's ("node already exists" though it had applied). The token key's revision, which
    # a remove-node's tombstone keeps growing, settles it: it landed, once.
    other = store_for(etcd, prefix, "gateway")

    def meanwhile() -> None:
        other.delete("n1")
        if then != "removed":
            other.create("n1", GpuRecord({"b": 7}, {}))

    kv = LostAnswers(EtcdConfig(machines=(etcd.url,), prefix=prefix), apply=True, meanwhile=meanwhile)
    created = NodeStore(kv, prefix, "gpu", GpuRecord).create("n1", GpuRecord({"a": 1}, {}))
    assert created == GpuRecord({"a": 1}, {})
    stored = etcd.get(f"{prefix}/resource/gpu/n1")
    assert stored is None if then == "removed" else other.get("n1") == GpuRecord({"b": 7}, {})
