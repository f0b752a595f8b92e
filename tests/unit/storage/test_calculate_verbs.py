"""The storage calculate verbs' pure logic (storage/scheduler/workloads.py), without etcd: deploy capacity,
deploy and realloc assembly; a realloc that gives back everything a deploy took leaves the node's usage as
it was before the deploy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.storage.record import NodeResource, StorageRecord, combine
from resource_extend.storage.scheduler.count import node_deploy_capacity
from resource_extend.storage.scheduler.resize import realloc
from resource_extend.storage.scheduler.workloads import deploy
from resource_extend.storage.workload import WorkloadResource
from resource_extend.storage.workload_request import WorkloadRequest
from tests.support import FOUR, GiB, TiB, examples, node


def request(**keys: Any) -> WorkloadRequest:
    return WorkloadRequest.parse(keys).validated()


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


GIB = 1 << 30


def nonzero(resource: NodeResource) -> dict[str, int]:
    return {device: size for device, size in (resource.volumes or {}).items() if size}


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.sampled_from([100, 500, 1024]), min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(["/a", "/b", "/c"]), st.sampled_from([1, 10, 50]), min_size=1),
    st.sampled_from([0, 1, 5]),
)
def test_storage_realloc_giving_back_a_deploy_restores_usage(
    volume_gib: list[int], bindings: dict[str, int], flat_gib: int
) -> None:
    volumes = {f"/data{i}": size * GIB for i, size in enumerate(volume_gib)}
    capacity = NodeResource(volumes, [], sum(volumes.values()) + 100 * GIB)
    record = StorageRecord(capacity, NodeResource({}, [], 0))
    want: dict[str, object] = {"volumes": [f"AUTO:{dst}:rw:{size}G" for dst, size in bindings.items()]}
    if flat_gib:
        want["storage"] = f"{flat_gib}G"
    try:
        _, (workload,) = deploy(record, WorkloadRequest.parse(want).validated(), 1)
    except PluginError:
        assume(False)
    usage = combine(record.usage or NodeResource(), None, [workload], delta=True, incr=True)
    deployed = StorageRecord(capacity, usage)

    give_back: dict[str, object] = {"volumes": [f"AUTO:{dst}:rw:-{size}G" for dst, size in bindings.items()]}
    if flat_gib:
        give_back["storage"] = f"-{flat_gib}G"
    _, delta, _ = realloc(deployed, WorkloadRequest.parse(give_back), workload)
    restored = combine(usage, None, [delta], delta=True, incr=True)
    assert nonzero(restored) == {}
    assert restored.storage == 0
