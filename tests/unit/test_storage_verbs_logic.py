"""The storage verbs' pure logic, without etcd: record encoding, capacity changes, deploy capacity,
deploy and realloc assembly, metric rows, and the helpers both plugins share."""

from __future__ import annotations

import json
from typing import Any

import pytest

from resource_extend.capacity import MAX_DEPLOY_COUNT, ratio, trunc_div
from resource_extend.errors import PluginError
from resource_extend.metrics import metrics_nodes
from resource_extend.storage.calculate_verbs import (
    deploy,
    node_deploy_capacity,
    realloc,
)
from resource_extend.storage.metrics import metric_rows
from resource_extend.storage.node_verbs import new_capacity, storage_total, stored_form
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.request import NodeRequest, WorkloadRequest
from resource_extend.storage.verbs import PLUGIN
from resource_extend.storage.workload import WorkloadResource

TiB, GiB = 1 << 40, 1 << 30
VDA = {
    "device": "/dev/vda",
    "mounts": ["/", "/data0"],
    "read_IOPS": 1000,
    "write_IOPS": 1000,
    "read_bps": GiB,
    "write_bps": GiB,
}
VDB = {"device": "/dev/vdb", "mounts": ["/data1"], "read_IOPS": 10, "write_IOPS": 10, "read_bps": 0, "write_bps": 0}


def node(volumes: dict[str, int], storage: int, used: dict[str, int] | None = None, disks: Any = ()) -> StorageRecord:
    return StorageRecord.from_json(
        {
            "capacity": {"volumes": volumes, "disks": list(disks), "storage": storage},
            "usage": {"volumes": used or {}, "disks": [], "storage": sum((used or {}).values())},
        }
    )


FOUR = node({f"/data{i}": TiB for i in range(4)}, 4 * TiB)


def request(**keys: Any) -> WorkloadRequest:
    return WorkloadRequest.parse(keys).validated()


# -- record type -------------------------------------------------------------------------------------


def test_records_are_written_as_compact_json_in_the_reference_field_order() -> None:
    record = StorageRecord(NodeResource({"/b": 2, "/a": 1}, [], 3), NodeResource())
    data = StorageRecord.encode(record)
    assert data == (
        b'{"capacity":{"volumes":{"/a":1,"/b":2},"disks":[],"storage":3},"usage":{"volumes":{},"disks":[],"storage":0}}'
    )
    assert StorageRecord.decode(data) == record


def test_a_record_that_is_not_json_is_a_plugin_error() -> None:
    with pytest.raises(PluginError, match="invalid JSON"):
        StorageRecord.decode(b"{nope")


def test_records_are_validated_before_they_are_written() -> None:
    checked = StorageRecord.checked(
        StorageRecord.from_json({"capacity": {"disks": [VDB, VDA], "storage": 0}, "usage": {"storage": 0}})
    )
    assert [d.device for d in capacity_of(checked).disks or ()] == ["/dev/vda", "/dev/vdb"]
    with pytest.raises(PluginError, match="invalid storage"):
        StorageRecord.checked(StorageRecord(NodeResource(storage=-1), NodeResource()))


def test_the_empty_record_is_what_an_unknown_node_reads_as() -> None:
    assert StorageRecord.empty().to_json() == {
        "capacity": {"volumes": {}, "disks": [], "storage": 0},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
    }


# -- node verbs --------------------------------------------------------------------------------------


def test_engine_storage_total_reads_as_zero_when_absent() -> None:
    assert storage_total({}) == 0
    assert storage_total({"StorageTotal": 1e12}) == 10**12


def test_set_node_resource_info_sides_without_keys_keep_null_fields() -> None:
    assert stored_form(None, "usage").to_json() == {"volumes": None, "disks": None, "storage": 0}


def capacity_of(record: StorageRecord) -> NodeResource:
    assert record.capacity is not None
    return record.capacity


def test_a_delta_request_adds_its_volumes_and_their_total() -> None:
    req = NodeRequest.parse({"volumes": ["/data4:1T"], "storage": "1T"})
    after = new_capacity(capacity_of(FOUR), req, None, delta=True, incr=True)
    assert after.storage == 6 * TiB and (after.volumes or {})["/data4"] == TiB


def test_a_delta_decrease_drops_the_volumes_that_reach_zero() -> None:
    grown = new_capacity(capacity_of(FOUR), None, NodeResource({"/data4": TiB}, [], TiB), True, True)
    shrunk = new_capacity(grown, None, NodeResource({"/data4": TiB}, [], TiB), True, False)
    assert shrunk.volumes == capacity_of(FOUR).volumes and shrunk.storage == 4 * TiB


def test_an_absolute_request_keeps_what_it_leaves_out() -> None:
    assert new_capacity(capacity_of(FOUR), NodeRequest.parse({}), None, False, False) == capacity_of(FOUR)
    after = new_capacity(capacity_of(FOUR), NodeRequest.parse({"volumes": ["/data4:2T"]}), None, False, True)
    assert after.volumes == {"/data4": 2 * TiB} and after.storage == 2 * TiB


def test_an_absolute_call_with_nothing_given_empties_the_capacity() -> None:
    assert new_capacity(capacity_of(FOUR), None, None, False, True) == NodeResource()


def test_rm_disks_drop_capacity_disks_but_not_with_delta() -> None:
    capacity = NodeResource.from_json({"volumes": {}, "disks": [VDA, VDB], "storage": 0})
    after = new_capacity(capacity, NodeRequest.parse({"rm-disks": "/dev/vdb"}), None, False, False)
    assert [d.device for d in after.disks or ()] == ["/dev/vda"]
    with pytest.raises(PluginError, match="invalid engine args"):
        new_capacity(capacity, NodeRequest.parse({"rm-disks": "/dev/vdb"}), None, True, True)


# -- deploy capacity ---------------------------------------------------------------------------------


def test_a_request_for_nothing_fits_the_scheduler_bound() -> None:
    assert node_deploy_capacity(StorageRecord.empty(), request(), 100) == (100, 0.0, 0.0)


def test_storage_caps_the_placement_count() -> None:
    assert node_deploy_capacity(FOUR, request(storage="1T"), 100)[0] == 4
    assert node_deploy_capacity(FOUR, request(storage="1G"), 100)[0] == 100
    assert node_deploy_capacity(FOUR, request(volumes=["AUTO:/dir0:rwm:1G"], storage="1T"), 100)[0] == 3


def test_an_unknown_node_fits_nothing_that_asks_for_volumes_or_storage() -> None:
    assert node_deploy_capacity(StorageRecord.empty(), request(volumes=["AUTO:/d:rw:1G"]), 100)[0] == 0
    assert node_deploy_capacity(StorageRecord.empty(), request(storage="1G"), 100)[0] == 0


def test_storage_only_requests_are_rated_against_flat_storage() -> None:
    used = node({"/data0": TiB}, 4 * TiB)
    assert used.usage is not None
    used.usage.storage = TiB
    _, usage, rate = node_deploy_capacity(used, request(storage="1T"), 100)
    assert (usage, rate) == (0.25, 0.25)


def test_volume_requests_are_rated_against_the_volumes() -> None:
    half = node({"/data0": TiB, "/data1": TiB}, 2 * TiB, used={"/data0": TiB})
    _, usage, rate = node_deploy_capacity(half, request(volumes=["AUTO:/d:rw:512G"]), 100)
    assert (usage, rate) == (0.5, 0.25)


def test_overdrawn_storage_counts_toward_zero_like_go() -> None:
    over = node({}, TiB)
    assert over.usage is not None
    over.usage.storage = TiB + 3 * GiB
    assert node_deploy_capacity(over, request(storage="2G"), 100)[0] == -1


# -- deploy --------------------------------------------------------------------------------------------


def test_deploy_without_placement_repeats_empty_plans() -> None:
    engines, resources = deploy(FOUR, request(volumes=["/src:/dst"]), 2)
    assert [e.volumes for e in engines] == [["/src:/dst:rw:0"]] * 2
    assert all(r.volume_plan_request.to_json() == {} and r.disks_request == [] for r in resources)


def test_deploy_plans_each_workload_on_a_device_and_keeps_limit_headroom() -> None:
    engines, resources = deploy(
        FOUR, request(**{"volumes-request": ["AUTO:/d:rw:1G"], "volumes": ["AUTO:/d:rw:2G"]}), 1
    )
    assert resources[0].volume_plan_request.to_json() == {"AUTO:/d:rw:1073741824:0:0:0:0": {"/data0": GiB}}
    assert resources[0].volume_plan_limit.to_json() == {"AUTO:/d:rw:2147483648:0:0:0:0": {"/data0": 2 * GiB}}
    assert engines[0].volumes == ["/data0:/d:rw:2147483648"] and engines[0].storage == 2 * GiB


@pytest.mark.parametrize(
    ("req", "count", "words"),
    [
        ({"storage": "3T"}, 2, "not enough storage"),
        ({"volumes": ["AUTO:/d:rwm:2T"]}, 1, "not enough volume plan"),
        ({}, MAX_DEPLOY_COUNT + 1, "deploy_count 1000001 > 1000000"),
    ],
)
def test_deploy_shortfalls_are_insufficient_resource(req: dict[str, Any], count: int, words: str) -> None:
    with pytest.raises(PluginError, match=f"{words}.*not enough resource"):
        deploy(FOUR, request(**req), count)


def test_a_negative_deploy_count_plans_nothing() -> None:
    assert deploy(FOUR, request(storage="1G"), -3) == ([], [])


# -- realloc -------------------------------------------------------------------------------------------


def deployed(volumes: list[str], storage: str = "0") -> WorkloadResource:
    return deploy(FOUR, request(volumes=volumes, storage=storage), 1)[1][0]


def test_a_storage_only_resize_keeps_the_plan_and_disks() -> None:
    origin = deployed(["AUTO:/d:rw:1G"])
    origin.disks_request = None
    engine, delta, target = realloc(FOUR, WorkloadRequest.parse({"storage": "1G"}), origin)
    assert target.volume_plan_request == origin.volume_plan_request and target.disks_request is None
    assert delta.storage_request == GiB and not engine.volume_changed


def test_a_grown_binding_stays_on_its_device_and_the_delta_counts_the_growth() -> None:
    origin = deployed(["AUTO:/d:rw:1G"])
    engine, delta, target = realloc(FOUR, WorkloadRequest.parse({"volumes": ["AUTO:/d:rw:1G"]}), origin)
    assert target.volume_plan_request.volumes() == {"/data0": 2 * GiB}
    assert delta.to_json()["volume_plan_request"] == {
        "fake-source:fake-destination:fake-flags:0:0:0:0:0": {"/data0": GiB}
    }
    assert engine.volumes == ["/data0:/d:rw:2147483648"] and not engine.volume_changed


def test_a_holding_the_node_does_not_have_is_reported_as_insufficient() -> None:
    origin = WorkloadResource.from_json(
        {
            "volumes_request": ["AUTO:/d:rw:1G"],
            "volumes_limit": ["AUTO:/d:rw:1G"],
            "volume_plan_request": {"AUTO:/d:rw:1G": {"/gone": GiB}},
        }
    )
    with pytest.raises(PluginError, match=r"invalid volume.*not enough resource"):
        realloc(FOUR, WorkloadRequest.parse({"volumes": ["AUTO:/d:rw:1G"]}), origin)


def test_realloc_beyond_free_storage_is_insufficient() -> None:
    with pytest.raises(PluginError, match="not enough"):
        realloc(FOUR, WorkloadRequest.parse({"storage": "5T"}), WorkloadResource())


# -- metrics, table, shared helpers --------------------------------------------------------------------


def test_metric_rows_use_a_dot_free_key_and_the_raw_name_in_labels() -> None:
    rows = metric_rows("pod", "a.b", FOUR)
    assert [(r["name"], r["key"], r["value"]) for r in rows] == [
        ("storage_used", "core.node.a_b.storage.used", "0"),
        ("storage_capacity", "core.node.a_b.storage.capacity", str(4 * TiB)),
    ]
    assert rows[0]["labels"] == ["pod", "a.b"]


def test_metrics_requests_come_in_both_shapes() -> None:
    assert metrics_nodes({"nodes": [{"podname": "p", "nodename": "n"}, {"nodename": None}]}) == [("p", "n"), ("", "")]
    assert metrics_nodes({"podname": "p", "nodename": "n"}) == [("p", "n")]
    with pytest.raises(PluginError):
        metrics_nodes({"nodes": "n"})


def test_ratio_and_division_follow_go() -> None:
    assert ratio(0, 5) == 0.0 and ratio(5, 0) == 0.0 and ratio(1, 4) == 0.25
    assert ratio(2**60 + 1, 2**60) == float(2**60 + 1) / float(2**60)
    assert [trunc_div(-7, 2), trunc_div(7, -2), trunc_div(7, 2), trunc_div(-7, -2)] == [-3, -3, 3, 3]


def test_the_verb_table_matches_the_gpu_plugin() -> None:
    from resource_extend.gpu.verbs import PLUGIN as GPU

    assert PLUGIN.advertised() == GPU.advertised()
    assert "calculate-remap" not in PLUGIN.advertised() and PLUGIN.verb("calculate-remap") is not None
    remap = PLUGIN.verb("calculate-remap")
    assert remap is not None and json.dumps(remap.run(None)) == '{"engine_params_map": {}}'  # type: ignore[arg-type]
