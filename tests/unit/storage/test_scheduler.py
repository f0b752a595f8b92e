"""The storage scheduler: the spec's worked examples and the scheduler-level facts of the vectors.

Vector-derived tests build their inputs from a vector's stored record and request (the request's binding
strings, sorted by full form as request validation sorts them) and compare against the vector's expected
response, so no expected number here is copied by hand unless a comment names its source.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from resource_extend.errors import InsufficientResource, InvalidVolume
from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.disk import Disk
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler.affinity import affinity_plan
from resource_extend.storage.scheduler.assembly import Placement
from resource_extend.storage.scheduler.classes import classify_bindings
from resource_extend.storage.scheduler.count import volume_capacity
from resource_extend.storage.scheduler.placement import volume_plans
from resource_extend.storage.scheduler.resize import merge_bindings

GIB = 1 << 30
TIB = 1 << 40


def on(
    capacity_volumes: dict[str, int], usage_volumes: dict[str, int], capacity_disks: list[Disk], usage_disks: list[Disk]
) -> StorageRecord:
    """The node the scheduler reads: a record with these capacity and usage sides."""
    return StorageRecord(NodeResource(capacity_volumes, capacity_disks), NodeResource(usage_volumes, usage_disks))


VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "storage-scheduler.jsonl"
Node = tuple[dict[str, int], dict[str, int], list[Disk], list[Disk]]


def _vectors() -> dict[str, dict[str, Any]]:
    cases = (json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip())
    return {case["id"]: case for case in cases}


VECTOR = _vectors()


def bindings(*texts: str) -> list[VolumeBinding]:
    """Parsed and sorted by full form, the order request validation leaves them in."""
    return sorted((VolumeBinding.parse(text) for text in texts), key=lambda b: b.to_string())


def node_from_record(record: dict[str, Any] | None) -> Node:
    record = record or {"capacity": {}, "usage": {}}
    capacity, usage = record["capacity"], record["usage"]
    return (
        dict(capacity.get("volumes") or {}),
        dict(usage.get("volumes") or {}),
        [Disk.from_json(disk) for disk in capacity.get("disks") or ()],
        [Disk.from_json(disk) for disk in usage.get("disks") or ()],
    )


def vector_node(case_id: str, name: str = "node-1") -> Node:
    return node_from_record(VECTOR[case_id]["store"].get(name))


def fixture_node() -> Node:
    """The reference's generateResourceInfo, as stored in the schedule-* vectors."""
    return vector_node("storage/get-nodes-deploy-capacity/schedule-single-normal")


def plans_json(placements: list[Placement]) -> list[dict[str, dict[str, int]]]:
    return [plan.to_json() for plan, _ in placements]


def disks_json(placements: list[Placement]) -> list[list[dict[str, Any]]]:
    return [[disk.to_json() for disk in disks] for _, disks in placements]


# ---------------------------------------------------------------------------------------------------------
# §2 classification


def test_classes_split_monopoly_first_and_sort_by_size_stably() -> None:
    classes = classify_bindings(
        [
            VolumeBinding.parse(text)
            for text in (
                "AUTO:/b:rwm:2G",
                "AUTO:/n2:rw:3G",
                "/host:/m:rw:0:10:0:0:0",
                "AUTO:/u:rw:0",
                "AUTO:/a:rwm:1G",
                "AUTO:/n1:rw:1G",
                "AUTO:/c:rwm:1G",
                ":/e:rw",
                "AUTO:/q:rw:0:100:0:0:0",
            )
        ]
    )
    assert [b.destination for b in classes.mono] == ["/a", "/c", "/b"]
    assert [b.destination for b in classes.unlimited] == ["/u", "/e"]
    # IOPS keep a size-0 binding out of "unlimited".
    assert [b.destination for b in classes.normal] == ["/q", "/n1", "/n2"]
    assert [b.destination for b in classes.mount] == ["/m"]


# ---------------------------------------------------------------------------------------------------------
# §3.2 early exits


def test_request_without_placement_gets_bound_empty_plans() -> None:
    placements = volume_plans(on(*fixture_node()), bindings("/mnt:/dir:rw"), 5)
    assert plans_json(placements) == [{}] * 5
    assert disks_json(placements) == [[]] * 5
    assert volume_capacity(on(*fixture_node()), bindings("/mnt:/dir:rw"), 5) == 5


def test_node_without_volumes_places_nothing() -> None:
    empty: Node = ({}, {}, [], [])
    assert volume_plans(on(*empty), bindings("AUTO:/dir:rw:0"), 10) == []
    assert volume_capacity(on(*empty), bindings("AUTO:/dir:rwm:1G"), 10) == 0


# ---------------------------------------------------------------------------------------------------------
# §3.3 normal and monopoly placement


def test_monopoly_group_takes_whole_device_split_in_doubles() -> None:
    # Spec §3.3 worked example: 100GiB + 200GiB monopoly on a 1TiB device.
    node: Node = ({"/data0": TIB}, {}, [], [])
    [(plan, disks)] = volume_plans(on(*node), bindings("AUTO:/dir0:rwm:100GiB", "AUTO:/dir1:rwm:200GiB"), 1)
    assert plan.to_json() == {
        "AUTO:/dir0:mrw:107374182400:0:0:0:0": {"/data0": 366503875926},
        "AUTO:/dir1:mrw:214748364800:0:0:0:0": {"/data0": 733007751850},
    }
    assert disks == []


def test_monopoly_rounding_remainder_goes_to_smallest_binding() -> None:
    # Three equal thirds of 10 bytes truncate to 3 each; the remaining byte joins the first binding.
    node: Node = ({"/v": 10}, {}, [], [])
    [(plan, _)] = volume_plans(on(*node), bindings("AUTO:/b:rwm:1", "AUTO:/a:rwm:1", "AUTO:/c:rwm:1"), 1)
    assert plan.to_json() == {
        "AUTO:/a:mrw:1:0:0:0:0": {"/v": 4},
        "AUTO:/b:mrw:1:0:0:0:0": {"/v": 3},
        "AUTO:/c:mrw:1:0:0:0:0": {"/v": 3},
    }


def test_monopoly_split_matches_vector_bench_mono_proportional_split() -> None:
    case = VECTOR["storage/calculate-deploy/bench-mono-proportional-split"]
    request = case["request"]
    placements = volume_plans(
        on(*vector_node(case["id"])),
        bindings(*request["workload_resource_request"]["volumes"]),
        request["deploy_count"],
    )
    expected = case["expect"]["response"]["workloads_resource"]
    assert plans_json(placements) == [w["volume_plan_request"] for w in expected]


def test_normal_binding_goes_to_used_volume_with_least_room_that_fits() -> None:
    node: Node = ({"/a": 100, "/b": 100, "/c": 100, "/d": 100}, {"/a": 10, "/b": 60, "/c": 55}, [], [])
    [(plan, _)] = volume_plans(on(*node), bindings("AUTO:/x:rw:41"), 1)
    # /b has 40 left (too small), /c 45 (best fit), /a 90; the unused /d is never touched by normal bindings.
    assert plan.to_json() == {"AUTO:/x:rw:41:0:0:0:0": {"/c": 41}}


def test_equal_room_ties_go_to_smaller_device_name() -> None:
    node: Node = ({"/b": 100, "/a": 100}, {"/b": 50, "/a": 50}, [], [])
    placements = volume_plans(on(*node), bindings("AUTO:/x:rw:10"), 1)
    assert plans_json(placements) == [{"AUTO:/x:rw:10:0:0:0:0": {"/a": 10}}]


def test_a_size_0_binding_goes_to_the_used_volume_with_least_room_whatever_the_record_order() -> None:
    # The record lists /e (2 left) before /b (full): the used volumes are taken by (room, name), not as
    # listed, so the size-0 binding, which any volume holds, lands on the full /b. Unsorted, it went to /e.
    node: Node = ({"/e": 10, "/b": 40}, {"/e": 8, "/b": 40}, [], [])
    placements = volume_plans(on(*node), bindings("AUTO:/x:rw:1", "AUTO:/y:rw:0"), 3)
    assert plans_json(placements) == [{"AUTO:/x:rw:1:0:0:0:0": {"/e": 1}, "AUTO:/y:rw:0:0:0:0:0": {"/b": 0}}] * 2


def test_binding_with_iops_skips_volumes_whose_disk_lacks_quota() -> None:
    node: Node = (
        {"/small": 100, "/big": 200},
        {"/small": 1, "/big": 1},
        [Disk("/dev/s", ["/small"], 5, 5, 5, 5), Disk("/dev/b", ["/big"], 50, 50, 50, 50)],
        [],
    )
    [(plan, disks)] = volume_plans(on(*node), bindings("AUTO:/x:rw:10:10:0:0:0"), 1)
    assert plan.to_json() == {"AUTO:/x:rw:10:10:0:0:0": {"/big": 10}}
    assert [d.to_json() for d in disks] == [Disk("/dev/b", ["/big"], 10, 0, 0, 0).to_json()]


def test_disk_plan_of_vector_iops_case_charges_one_disk() -> None:
    # Spec §10 (TestGetVolumePlansWithIOPS): disk plan /dev/vda 600:200:200MiB:200MiB.
    case = VECTOR["storage/get-nodes-deploy-capacity/schedule-iops-fits-once"]
    request = bindings(*case["request"]["workload_resource"]["volumes"])
    [(_, disks)] = volume_plans(on(*vector_node(case["id"])), request, 1000)
    assert [d.disk_string() for d in disks] == [f"/dev/vda:/,/data:600:200:{200 << 20}:{200 << 20}"]


def test_mount_only_request_counts_by_disk_quota() -> None:
    node: Node = ({"/data0": TIB}, {}, [Disk("/dev/vda", ["/"], 1000, 1000, 0, 0)], [])
    request = bindings("/srv/a:/a:rw:0:300:0:0:0", "/srv/b:/b:rw:0:0:100:0:0")
    assert volume_capacity(on(*node), request, 100) == 3
    placements = volume_plans(on(*node), request, 100)
    assert plans_json(placements) == [{}] * 3
    assert [d.disk_string() for _, disks in placements for d in disks] == ["/dev/vda:/:300:100:0:0"] * 3


def test_mount_without_quota_charges_nothing() -> None:
    case = VECTOR["storage/calculate-deploy/skip-quota-free-disks"]
    request = bindings(*case["request"]["workload_resource_request"]["volumes"])
    placements = volume_plans(on(*vector_node(case["id"])), request, 1000)
    assert disks_json(placements) == [[]] * len(placements)


# ---------------------------------------------------------------------------------------------------------
# §3.5 promotion, §3.9 capacity vs deploy


def test_deploy_opens_no_more_devices_than_needed() -> None:
    # Spec §3.9 example (fixture generateResourceInfo): 500GiB normal, capacity 6.
    request = bindings("AUTO:/dir1:rw:500GiB")
    assert volume_capacity(on(*fixture_node()), request, 1000) == 6
    two = volume_plans(on(*fixture_node()), request, 2)
    assert [next(iter(plan.volumes())) for plan, _ in two] == ["/data1", "/data0"]
    three = volume_plans(on(*fixture_node()), request, 3)
    assert {device for plan, _ in three for device in plan.volumes()} == {"/data0", "/data1", "/data2"}


def test_normal_only_capacity_stops_promoting_at_bound() -> None:
    case = VECTOR["storage/get-nodes-deploy-capacity/bench-normal-bounded-by-max"]
    request = bindings(*case["request"]["workload_resource"]["volumes"])
    bound = case["config"]["scheduler"]["max_deploy_count"]
    assert volume_capacity(on(*vector_node(case["id"])), request, bound) == case["expect"]["response"]["total"]


def test_last_pass_plans_are_taken_even_when_capacity_is_not_monotone() -> None:
    # The divergence fixture: pass 1 gives 3 normal / 5 monopoly plans, pass 2 (after /v1 is promoted) 4 / 4.
    case = VECTOR["storage/calculate-deploy/divergence-four"]
    request = bindings(*case["request"]["workload_resource_request"]["volumes"])
    placements = volume_plans(on(*vector_node(case["id"])), request, case["request"]["deploy_count"])
    expected = case["expect"]["response"]["workloads_resource"]
    assert plans_json(placements) == [w["volume_plan_request"] for w in expected]
    assert disks_json(placements) == [w["disks_request"] for w in expected]
    assert volume_capacity(on(*vector_node(case["id"])), request, 1000) == 4


def test_capacity_query_can_report_less_than_a_deploy_accepts() -> None:
    # Normal capacity is not monotone in promoted volumes: promoting /v (the tightest fit) moves the IOPS
    # binding onto /dev/b, whose read IOPS the mount binding also needs. The deploy of 8 stops before
    # promoting; the capacity query promotes and ends on the poorer pass. The spec's loop does the same.
    huge = 1 << 40
    node: Node = (
        {"/a": 101 * GIB, "/v": 20 * GIB},
        {"/a": GIB},
        [
            Disk("/dev/a", ["/a"], huge, huge, huge, huge),
            Disk("/dev/b", ["/v", "/mnt/b"], 100, huge, huge, huge),
        ],
        [],
    )
    request = bindings("AUTO:/n:rw:10GiB:50:0:0:0", "/mnt/b/x:/m:rw:0:10:0:0:0")
    assert volume_capacity(on(*node), request, 1000) == 5
    assert len(volume_plans(on(*node), request, 8)) == 8
    assert volume_capacity(on(*node), request, 8) == 8


# ---------------------------------------------------------------------------------------------------------
# §3.6 unlimited bindings


def test_unlimited_bindings_all_go_to_volume_with_most_room_left() -> None:
    # /a (90 free) is too small for the normal binding; /b (250 free) hosts it.
    node: Node = ({"/a": 100, "/b": 300}, {"/a": 10, "/b": 50}, [], [])
    request = bindings("AUTO:/n:rw:100", "AUTO:/u:rw:0", "AUTO:/w:rw:0")
    # Two plans take 200 of /b, leaving 50 < 90: every unlimited binding of every plan goes to /a.
    assert (
        plans_json(volume_plans(on(*node), request, 2))
        == [
            {
                "AUTO:/n:rw:100:0:0:0:0": {"/b": 100},
                "AUTO:/u:rw:0:0:0:0:0": {"/a": 0},
                "AUTO:/w:rw:0:0:0:0:0": {"/a": 0},
            },
        ]
        * 2
    )
    # With a bound of 1 only one normal plan is enumerated: /b keeps 150 > 90.
    assert plans_json(volume_plans(on(*node), request, 1)) == [
        {
            "AUTO:/n:rw:100:0:0:0:0": {"/b": 100},
            "AUTO:/u:rw:0:0:0:0:0": {"/b": 0},
            "AUTO:/w:rw:0:0:0:0:0": {"/b": 0},
        },
    ]


def test_shared_destination_merges_into_one_entry_on_the_later_device() -> None:
    # Validation lets two bindings share a destination; plan merging (spec §1.4) then sums them into one
    # entry on the device of the later one. Here the unlimited target (/data0, first of the equally
    # full volumes) takes over the monopoly bytes of the second plan, as in the reference.
    node: Node = ({"/data0": GIB, "/data1": GIB}, {}, [], [])
    placements = volume_plans(on(*node), bindings("AUTO:/shared:rwm:1G", "AUTO:/shared:rw:0"), 2)
    assert plans_json(placements) == [{"AUTO:/shared:rw:1073741824:0:0:0:0": {"/data0": GIB}}] * 2


def test_unlimited_only_request_fills_bound() -> None:
    case = VECTOR["storage/get-nodes-deploy-capacity/schedule-unlimited-only"]
    request = bindings(*case["request"]["workload_resource"]["volumes"])
    assert volume_capacity(on(*vector_node(case["id"])), request, 1000) == case["expect"]["response"]["total"]
    placements = volume_plans(on(*vector_node(case["id"])), request, 1000)
    assert len({json.dumps(plan) for plan in plans_json(placements)}) == 1


# ---------------------------------------------------------------------------------------------------------
# The scheduler-level facts of every expressible vector


def _storage_cap(node_record: dict[str, Any] | None, request: list[VolumeBinding]) -> int | None:
    """The storage limit of get-nodes-deploy-capacity for a volumes-only request (volumes fold in)."""
    wanted = sum(b.size for b in request)
    if wanted <= 0:
        return None
    record = node_record or {"capacity": {}, "usage": {}}
    left = record["capacity"].get("storage", 0) - record["usage"].get("storage", 0)
    return int(left / wanted)


CAPACITY_CASES = [
    case_id
    for case_id, case in VECTOR.items()
    if case["verb"] == "get-nodes-deploy-capacity"
    and case["expect"]["exit"] == 0
    and set(case["request"].get("workload_resource") or {"-": 0}) == {"volumes"}
]


@pytest.mark.parametrize("case_id", CAPACITY_CASES)
def test_capacity_total_matches_vector(case_id: str) -> None:
    case = VECTOR[case_id]
    request = bindings(*case["request"]["workload_resource"]["volumes"])
    bound = case["config"]["scheduler"]["max_deploy_count"]
    total = 0
    for name in case["request"]["nodenames"]:
        count = volume_capacity(on(*node_from_record(case["store"].get(name))), request, bound)
        assert count == len(volume_plans(on(*node_from_record(case["store"].get(name))), request, bound))
        cap = _storage_cap(case["store"].get(name), request)
        total += count if cap is None else min(count, cap)
    assert total == case["expect"]["response"]["total"]


DEPLOY_CASES = [
    case_id
    for case_id, case in VECTOR.items()
    if case["verb"] == "calculate-deploy"
    and set(case["request"].get("workload_resource_request") or {"-": 0}) == {"volumes"}
]


@pytest.mark.parametrize("case_id", DEPLOY_CASES)
def test_deploy_plans_match_vector(case_id: str) -> None:
    case = VECTOR[case_id]
    request = bindings(*case["request"]["workload_resource_request"]["volumes"])
    count = case["request"]["deploy_count"]
    placements = volume_plans(on(*vector_node(case_id)), request, count)
    if case["expect"]["exit"] != 0:
        # calculate-deploy fails exactly when fewer than deploy_count plans come back.
        assert len(placements) < count
        return
    expected = case["expect"]["response"]["workloads_resource"]
    assert plans_json(placements) == [w["volume_plan_request"] for w in expected]
    assert disks_json(placements) == [w["disks_request"] for w in expected]


# ---------------------------------------------------------------------------------------------------------
# §4 realloc


def _realloc_inputs(
    case: dict[str, Any],
) -> tuple[Node, list[VolumeBinding], VolumePlan, list[VolumeBinding]]:
    """calculate-realloc steps 1-4 for a request of plain volumes: merge onto the workload, then sort."""
    workload = case["request"]["workload_resource"]
    old_bindings = [VolumeBinding.parse(text) for text in workload["volumes_request"]]
    asked = case["request"]["workload_resource_request"]
    texts = next(asked[key] for key in ("volumes", "volume-request", "volumes-request") if asked.get(key))
    change = [VolumeBinding.parse(text) for text in texts]
    merged = sorted(merge_bindings(change, old_bindings), key=lambda b: b.to_string())
    old_plan = VolumePlan.from_json(workload["volume_plan_request"])
    return node_from_record(case["store"][case["request"]["nodename"]]), merged, old_plan, old_bindings


AFFINITY_CASES = [
    case_id
    for case_id in VECTOR
    if case_id.startswith(("storage/calculate-realloc/affinity-", "storage/calculate-realloc/mono-grow-"))
]


@pytest.mark.parametrize("case_id", AFFINITY_CASES)
def test_affinity_plan_matches_vector(case_id: str) -> None:
    case = VECTOR[case_id]
    node, merged, old_plan, old_bindings = _realloc_inputs(case)
    if case["expect"]["exit"] != 0:
        with pytest.raises(InsufficientResource, match="not enough resource"):
            affinity_plan(on(*node), merged, old_plan, old_bindings)
        return
    plan, disks = affinity_plan(on(*node), merged, old_plan, old_bindings)
    expected = case["expect"]["response"]["workload_resource"]
    assert plan.to_json() == expected["volume_plan_request"]
    assert [d.to_json() for d in disks] == expected["disks_request"]


def _affinity_fixture() -> tuple[Node, VolumePlan, list[VolumeBinding]]:
    """The reference's generateResourceInfo with generateExistingVolumePlan's holdings added to usage."""
    node = vector_node("storage/calculate-realloc/affinity-normal-grow")
    case = VECTOR["storage/calculate-realloc/affinity-normal-grow"]["request"]["workload_resource"]
    old_plan = VolumePlan.from_json(case["volume_plan_request"])
    return node, old_plan, [VolumeBinding.parse(text) for text in case["volumes_request"]]


def test_affinity_without_change_returns_existing_plan() -> None:
    # Spec §10 / TestGetAffinityPlan "no request": the merged list is the workload's own.
    node, old_plan, old_bindings = _affinity_fixture()
    plan, _ = affinity_plan(on(*node), sorted(old_bindings, key=lambda b: b.to_string()), old_plan, old_bindings)
    assert plan.to_json() == old_plan.to_json()


def test_affinity_new_monopoly_joins_kept_group_and_resplits_device() -> None:
    # TestGetAffinityPlan "realloc mono without reschedule" (/dir1 kept, /dir3 new): both share /data2.
    node, old_plan, old_bindings = _affinity_fixture()
    merged = sorted(
        merge_bindings(bindings("AUTO:/dir1:rwm:1GiB", "AUTO:/dir3:rwm:1GiB"), old_bindings),
        key=lambda b: b.to_string(),
    )
    plan, _ = affinity_plan(on(*node), merged, old_plan, old_bindings)
    mono = {entry[0].destination: entry[1] for entry in plan if entry[0].monopoly}
    assert set(mono) == {"/dir1", "/dir3"}
    assert {device for volumes in mono.values() for device in volumes} == {"/data2"}
    assert sum(size for volumes in mono.values() for size in volumes.values()) == TIB


def test_affinity_dropped_monopoly_group_moves_to_unused_devices() -> None:
    # TestGetAffinityPlan "realloc mono with reschedule": /dir1 shrinks below zero and is dropped,
    # so /dir3 and /dir4 have no affinity and are placed as a fresh group on an unused volume.
    node, old_plan, old_bindings = _affinity_fixture()
    change = bindings("AUTO:/dir1:rwm:-1TiB", "AUTO:/dir3:rwm:100GiB", "AUTO:/dir4:rwm:100GiB")
    merged = sorted(merge_bindings(change, old_bindings), key=lambda b: b.to_string())
    plan, _ = affinity_plan(on(*node), merged, old_plan, old_bindings)
    devices = {entry[0].destination: next(iter(entry[1])) for entry in plan}
    assert devices["/dir3"] == devices["/dir4"] == "/data3"
    assert devices["/dir0"] == "/data0"


def test_affinity_rejects_holding_on_unknown_volume() -> None:
    node, _, old_bindings = _affinity_fixture()
    stray = VolumePlan.from_json({"AUTO:/dir0:rw:1G": {"/nowhere": GIB}})
    with pytest.raises(InvalidVolume, match="invalid volume"):
        affinity_plan(on(*node), bindings("AUTO:/dir0:rw:2G"), stray, old_bindings)


def test_affinity_without_anything_to_schedule_is_empty() -> None:
    node, old_plan, old_bindings = _affinity_fixture()
    plan, disks = affinity_plan(on(*node), bindings("/mnt:/m:rw"), old_plan, old_bindings)
    assert (len(plan), disks) == (0, [])


# ---------------------------------------------------------------------------------------------------------
# §9 speed


def _bench_node() -> Node:
    """capacity_bench_test.go: 12 volumes of 1TiB, odd ones using i GiB, one disk per volume."""
    node = vector_node("storage/get-nodes-deploy-capacity/bench-normal")
    assert len(node[0]) == 12
    return node


@pytest.mark.parametrize(
    ("volumes", "expected"),
    [
        # Counts from the reference's capacity_bench_test.go, also pinned by vectors bench-normal/bench-mono.
        (["AUTO:/dir0:rw:10GiB", "AUTO:/dir1:rw:20GiB:100:100:1M:1M", "/data0:/mnt:rw:0:100:100:1M:1M"], 406),
        (["AUTO:/dir0:rwm:100GiB", "AUTO:/dir1:rwm:200GiB"], 6),
        (
            [
                "AUTO:/dir0:rw:10GiB",
                "AUTO:/dir1:rw:20GiB:100:100:1M:1M",
                "AUTO:/dir2:rwm:100GiB",
                "AUTO:/dir3:rwm:200GiB",
                "/data0:/mnt:rw:0:100:100:1M:1M",
            ],
            6,
        ),
        # Not a reference case: the costliest shape for this node, bounded by 10000 after four promotions.
        (["AUTO:/dir0:rw:1GiB"], 10000),
    ],
)
def test_capacity_query_on_twelve_tib_volumes_is_fast(volumes: list[str], expected: int) -> None:
    request = bindings(*volumes)
    start = time.perf_counter()
    count = volume_capacity(on(*_bench_node()), request, 10000)
    elapsed = time.perf_counter() - start
    assert count == expected
    assert len(volume_plans(on(*_bench_node()), request, 10000)) == expected
    assert elapsed < 1.0, f"capacity query took {elapsed:.3f}s"
