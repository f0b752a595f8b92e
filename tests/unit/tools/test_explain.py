"""explain's pure half: its counts are get-nodes-deploy-capacity's for any node and request of either plugin
(the same scheduler functions, asked why), its words name the limit and its numbers, and its summary
counts the nodes by limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.bounds import Bounds
from resource_extend.capacity import Limit, deploy_capacity_response
from resource_extend.config import Config, EtcdConfig
from resource_extend.envelope.capacity import DeployCapacity
from resource_extend.errors import PluginError
from resource_extend.gpu import calculate_verbs as gpu_verbs
from resource_extend.gpu import scheduler as gpu_scheduler
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.gpu.payloads import CountedPayloads
from resource_extend.storage import calculate_verbs as storage_verbs
from resource_extend.storage.payloads import PAYLOADS as STORAGE_PAYLOADS
from resource_extend.storage.record import StorageRecord
from resource_extend.storage.scheduler import count as storage_count
from resource_extend.tools import explain
from tests.support import examples

GIB = 1 << 30
SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def config(max_deploy_count: int = 1000) -> Config:
    return Config("test.yaml", EtcdConfig(("http://127.0.0.1:1",), "/eru"), Bounds("test.yaml", max_deploy_count))


def verb_answer(plugin: str, request: dict[str, Any], records: dict[str, Any], bound: int) -> dict[str, Any]:
    """get-nodes-deploy-capacity's answer for these records, as the verb computes it after its read."""
    if plugin == "gpu":
        gpu = DeployCapacity.from_json(request, Bounds("test.yaml"), CountedPayloads(GpuRecord))
        return dict(
            deploy_capacity_response(
                sorted(records.items()), lambda r: gpu_scheduler.node_deploy_capacity(r, gpu.request)
            )
        )
    storage = DeployCapacity.from_json(request, Bounds("test.yaml"), STORAGE_PAYLOADS)
    return dict(
        deploy_capacity_response(
            sorted(records.items()), lambda r: storage_count.node_deploy_capacity(r, storage.request, bound)
        )
    )


def rows_for(plugin: str, request: dict[str, Any], raw: dict[str, bytes | None], asked: int, bound: int) -> list[Any]:
    module: Any = gpu_verbs if plugin == "gpu" else storage_verbs
    record_type: Any = GpuRecord if plugin == "gpu" else StorageRecord
    payloads: Any = CountedPayloads(GpuRecord) if plugin == "gpu" else STORAGE_PAYLOADS
    return explain.explain_records(
        raw, record_type, module.explainer(payloads.request(request, "workload_resource"), config(bound).bounds), asked
    )


# -- generated nodes and requests ------------------------------------------------------------------------

products = st.sampled_from(["nvidia-3090", "nvidia-a100", "a10"])


@st.composite
def gpu_records(draw: Any) -> bytes:
    capacity = draw(st.dictionaries(products, st.integers(1, 8)))
    usage = {p: draw(st.integers(0, k + 2)) for p, k in capacity.items() if draw(st.booleans())}
    return json.dumps({"capacity": {"prod_count_map": capacity}, "usage": {"prod_count_map": usage}}).encode()


gpu_requests = st.dictionaries(products, st.integers(1, 4)).map(lambda m: {"prod_count_map": m})


@st.composite
def storage_records(draw: Any) -> bytes:
    devices = [f"/data{i}" for i in range(draw(st.integers(0, 4)))]
    capacity = {d: draw(st.integers(1, 64)) * GIB for d in devices}
    usage = {d: draw(st.sampled_from([0, 0, size, draw(st.integers(0, size))])) for d, size in capacity.items()}
    disks, used_disks = [], []
    for i in range(draw(st.integers(0, 2))):
        mounts = draw(st.lists(st.sampled_from([*devices, "/mnt"]), min_size=1, max_size=2, unique=True))
        quota = [draw(st.integers(0, 1000)) for _ in range(4)]
        left = [draw(st.integers(0, q)) for q in quota]
        names = ("read_IOPS", "write_IOPS", "read_bps", "write_bps")
        disks.append({"device": f"/dev/vd{'ab'[i]}", "mounts": mounts, **dict(zip(names, quota))})
        used_disks.append({"device": f"/dev/vd{'ab'[i]}", "mounts": mounts, **dict(zip(names, left))})
    storage = draw(st.integers(0, 300)) * GIB
    return json.dumps(
        {
            "capacity": {"volumes": capacity, "disks": disks, "storage": storage},
            "usage": {"volumes": usage, "disks": used_disks, "storage": draw(st.integers(0, storage))},
        }
    ).encode()


@st.composite
def storage_requests(draw: Any) -> dict[str, Any]:
    texts = []
    for i in range(draw(st.integers(0, 3))):
        size = f"{draw(st.integers(1, 16))}G"
        quota = f"{draw(st.integers(0, 200))}:{draw(st.integers(0, 200))}:{draw(st.integers(0, 50))}:0"
        texts.append(
            draw(
                st.sampled_from(
                    [
                        f"AUTO:/d{i}:rw:{size}",
                        f"AUTO:/d{i}:rw:{size}:{quota}",
                        f"AUTO:/d{i}:rwm:{size}",
                        f"AUTO:/d{i}:rw",
                        f"/mnt/x:/d{i}:rw:0:{quota}",
                    ]
                )
            )
        )
    request: dict[str, Any] = {"volumes": texts}
    if draw(st.booleans()):
        request["storage"] = f"{draw(st.integers(0, 40))}G"
    return request


def nodes_of(records: st.SearchStrategy[bytes]) -> st.SearchStrategy[dict[str, bytes | None]]:
    # Now and then a node without a record: the verb and explain both read it as the empty record.
    return st.dictionaries(st.sampled_from(["n1", "n2", "n3", "n4"]), st.one_of(records, st.none()), min_size=1)


def assert_explain_agrees(
    plugin: str, workload: dict[str, Any], raw: dict[str, bytes | None], asked: int, bound: int, record_type: Any
) -> None:
    request = {"nodenames": list(raw), "workload_resource": workload}
    # As the verb's bulk read gives them: a node without a record is the empty record.
    records = {node: record_type.empty() if data is None else record_type.decode(data) for node, data in raw.items()}
    try:
        answer = verb_answer(plugin, request, records, bound)
    except PluginError as refused:
        with pytest.raises(PluginError) as also:
            rows_for(plugin, request, raw, asked, bound)
        assert str(also.value) == str(refused)
        return
    rows = rows_for(plugin, request, raw, asked, bound)
    assert [row.node for row in rows] == list(raw)
    fits = answer["nodes_deploy_capacity_map"]
    for row in rows:
        # The verb lists only nodes that take at least one workload; explain lists every node.
        assert (row.capacity if row.capacity > 0 else None) == fits.get(row.node, {}).get("capacity"), row.node
        assert (row.limit is None) == (row.capacity >= asked), row.node
        # Every pass that stops records where: no limit falls back to a bare count.
        assert row.limit is None or " room for " not in row.limit.text, row.limit
        assert row.limit is None or "do not fit" not in row.limit.text, row.limit
    assert sum(row.capacity for row in rows if row.capacity > 0) == answer["total"]


@SETTINGS
@given(nodes_of(gpu_records()), gpu_requests, st.integers(0, 5))
def test_gpu_explain_counts_what_get_nodes_deploy_capacity_counts(
    raw: dict[str, bytes | None], workload: dict[str, Any], asked: int
) -> None:
    assert_explain_agrees("gpu", workload, raw, asked, 1000, GpuRecord)


@SETTINGS
@given(nodes_of(storage_records()), storage_requests(), st.integers(0, 12), st.sampled_from([1, 3, 10, 1000]))
def test_storage_explain_counts_what_get_nodes_deploy_capacity_counts(
    raw: dict[str, bytes | None], workload: dict[str, Any], asked: int, bound: int
) -> None:
    assert_explain_agrees("storage", workload, raw, asked, bound, StorageRecord)


# -- the words --------------------------------------------------------------------------------------------


def storage_node(volumes: dict[str, int], used: dict[str, int] | None = None, **extra: Any) -> bytes:
    capacity = {"volumes": volumes, "disks": extra.get("disks", []), "storage": extra.get("storage", 1 << 50)}
    usage = {"volumes": used or {}, "disks": extra.get("used_disks", []), "storage": 0}
    return json.dumps({"capacity": capacity, "usage": usage}).encode()


def disk(device: str, mounts: list[str], *quota: int) -> dict[str, Any]:
    return {
        "device": device,
        "mounts": mounts,
        **dict(zip(("read_IOPS", "write_IOPS", "read_bps", "write_bps"), quota)),
    }


def limit_of(plugin: str, workload: dict[str, Any], data: bytes, asked: int = 1) -> tuple[int | None, str]:
    (row,) = rows_for(plugin, {"workload_resource": workload}, {"n": data}, asked, 1000)
    return row.capacity, "" if row.limit is None else row.limit.text


def test_a_volume_too_big_for_every_volume_names_the_largest_free_one() -> None:
    data = storage_node({"/data0": 100 * GIB, "/data3": 120 * GIB})
    assert limit_of("storage", {"volumes": ["AUTO:/data:rw:200G"]}, data) == (
        0,
        "volume AUTO:/data:rw:200G: largest free volume /data3 has 120G",
    )


def test_a_disk_out_of_iops_names_the_disk_the_quota_and_what_each_workload_takes() -> None:
    data = storage_node(
        {"/data0": 1 << 40},
        disks=[disk("/dev/vdb", ["/data0"], 1000, 1000, 0, 0)],
        used_disks=[disk("/dev/vdb", ["/data0"], 0, 700, 0, 0)],
    )
    assert limit_of("storage", {"volumes": ["AUTO:/data:rw:10G:0:100:0:0"]}, data, asked=4) == (
        3,
        "disk /dev/vdb write_IOPS: 300 of 1000 left, 100 per workload",
    )


def test_a_mount_out_of_quota_names_its_disk() -> None:
    data = storage_node({}, disks=[disk("/dev/vdb", ["/mnt"], 500, 0, 0, 0)])
    assert limit_of("storage", {"volumes": ["/mnt/x:/d:rw:0:200:0:0:0"]}, data, asked=3) == (
        2,
        "disk /dev/vdb read_IOPS: 500 of 500 left, 200 per workload",
    )


def test_flat_storage_names_what_is_free_and_what_each_workload_takes() -> None:
    data = storage_node({}, storage=100 * GIB)
    assert limit_of("storage", {"storage": "30G"}, data, asked=4) == (3, "storage: 100G free, 30G per workload")


def test_monopoly_bindings_count_unused_volumes() -> None:
    data = storage_node({"/data0": 100 * GIB, "/data1": 100 * GIB}, {"/data0": GIB})
    capacity, text = limit_of("storage", {"volumes": ["AUTO:/m:rwm:10G"]}, data, asked=2)
    assert (capacity, text) == (
        1,
        "monopoly volume AUTO:/m:mrw:10G: 1 of 1 unused volumes hold 10G (one workload each)",
    )


def test_a_gpu_product_names_what_is_free_and_what_each_workload_takes() -> None:
    data = json.dumps(
        {"capacity": {"prod_count_map": {"nvidia-a100": 2}}, "usage": {"prod_count_map": {"nvidia-a100": 1}}}
    )
    assert limit_of("gpu", {"prod_count_map": {"nvidia-a100": 1}}, data.encode(), asked=2) == (
        1,
        "nvidia-a100: 1 free, 1 per workload",
    )
    assert limit_of("gpu", {"prod_count_map": {"a10": 1}}, data.encode()) == (
        0,
        "a10: none on the node, 1 per workload",
    )


def test_an_unreadable_record_is_shown_with_the_decoders_words_and_no_count() -> None:
    data = b'{"capacity":{"volumes":{"/data0":99999999999999999999}},"usage":{}}'
    capacity, text = limit_of("storage", {"storage": "1G"}, data)
    assert capacity is None
    assert text.startswith("record unreadable: ") and "int64" in text and text.endswith("(run doctor)")


def test_a_node_that_takes_the_asked_count_has_no_limit_shown() -> None:
    assert limit_of("storage", {"storage": "30G"}, storage_node({}, storage=100 * GIB), asked=3) == (3, "")


def test_summary_counts_nodes_by_their_first_limit() -> None:
    rows = [
        explain.Row("n7", "ok", 0, Limit("volume space", "…")),
        explain.Row("n8", "ok", 1, Limit("volume space", "…")),
        explain.Row("n4", "unreadable", None, Limit("unreadable", "…")),
    ]
    assert explain.summary(2, rows) == "0/3 nodes can take 2: 2 short of volume space, 1 unreadable"
    assert explain.summary(1, [explain.Row("n1", "ok", 5, None)]) == "1/1 node can take 1"


def test_the_table_puts_a_dash_for_an_unreadable_count_and_the_summary_last() -> None:
    rows = [explain.Row("n1", "ok", 5, None), explain.Row("n22", "unreadable", None, Limit("unreadable", "x"))]
    assert explain.report("/eru/resource/gpu/", 1, rows).splitlines() == [
        "NODE  FITS  FIRST LIMIT REACHED",
        "n1    5",
        "n22   —     x",
        "1/2 nodes can take 1: 1 unreadable",
    ]
