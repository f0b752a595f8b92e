"""get-nodes-deploy-capacity skips the scheduler's passes on a node whose flat storage runs out first
(``VolumeCount.floor``, ``capacity_or_room``): the count it answers must be the one the passes give.

The floor is a lower bound on the placement count (the proof is in ``VolumeCount.floor``'s docstring);
these properties check it against the attempt-by-attempt simulation, and the shortcut's answer against
the full count, on the simulation tests' nodes and requests.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler import count as count_module
from resource_extend.storage.scheduler.count import DeployCount, VolumeCount
from resource_extend.storage.scheduler.passes import schedule
from resource_extend.storage.scheduler.workloads import storage_room
from resource_extend.storage.workload_request import WorkloadRequest
from tests.unit.storage.test_scheduler_simulation import (
    ALL_KINDS,
    GIB,
    MIB,
    SETTINGS,
    TIB,
    Node,
    bounds,
    nodes,
    on,
    requests,
    simulated_capacity,
)

BINDINGS = [VolumeBinding.parse("AUTO:/dir0:rw:10G"), VolumeBinding.parse("AUTO:/dir1:rw:20G")]


def stored(node: Node, storage: int, used: int) -> StorageRecord:
    """``on(*node)`` with a flat storage capacity and usage."""
    record = on(*node)
    assert record.capacity is not None and record.usage is not None
    record.capacity.storage, record.usage.storage = storage, used
    return record


@SETTINGS
@given(nodes(), requests(("normal", "normal", "unlimited", "mount")), bounds)
def test_the_floor_is_never_above_the_simulated_count(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    floor = VolumeCount(bindings).floor(on(*node))
    assert simulated_capacity(on(*node), bindings, bound) >= min(floor, bound)


@SETTINGS
@given(nodes(), requests(ALL_KINDS), bounds, st.integers(-3, 400), st.integers(0, 2 * TIB))
def test_a_count_cut_short_by_storage_is_the_full_count(
    node: Node, bindings: list[VolumeBinding], bound: int, per_workload_gib: int, used: int
) -> None:
    # The node holds 1 TiB of flat storage; the workload asks for -3 GiB to 400 GiB of it, so the storage
    # room runs from far below the volumes' count to far above it (and past the bound).
    request = WorkloadRequest(bindings, storage_request=per_workload_gib * GIB)
    record = stored(node, TIB, used)
    answer = DeployCount(request, bound)(record)[0]
    full = VolumeCount(bindings).capacity(stored(node, TIB, used), bound)
    if per_workload_gib > 0:
        full = min(full, storage_room(record, per_workload_gib * GIB))
    assert answer == full


def test_a_node_whose_storage_runs_out_first_is_counted_without_the_passes() -> None:
    node: Node = (
        {f"/data{i}": TIB for i in range(8)},
        {"/data0": 100 * GIB},
        [Disk("/dev/vdb", ["/data0"], 1, 1, 1, 1)],
        [],
    )
    request = WorkloadRequest(BINDINGS, storage_request=40 * GIB)
    record = stored(node, 8 * TIB, 100 * GIB)
    assert VolumeCount(BINDINGS).floor(record) == 30 + 7 * 34  # 924 GiB hold 30 GiB 30 times, 1 TiB 34 times
    with mock.patch.object(count_module, "schedule", side_effect=AssertionError("the passes ran")):
        assert DeployCount(request, 10000)(record)[0] == (8 * 1024 - 100) // 40


def test_a_node_whose_volumes_run_out_first_is_scheduled_unless_its_bounds_meet() -> None:
    request = WorkloadRequest(BINDINGS, storage_request=4 * GIB)  # room for thousands: the volumes decide
    fresh: Node = ({f"/data{i}": TIB for i in range(8)}, {}, [], [])  # 34 plans each, 4 GiB left over each
    with mock.patch.object(count_module, "schedule", side_effect=AssertionError("the passes ran")):
        assert DeployCount(request, 10000)(stored(fresh, 8 * TIB, 0))[0] == 272
    # 1020 + 50 + 40 GiB could hold 37 plans by bytes, whole plans on one volume make 36: the passes decide.
    mixed: Node = ({"/data0": TIB, "/data1": 50 * GIB, "/data2": 40 * GIB}, {}, [], [])
    assert VolumeCount(BINDINGS).bounds(on(*mixed)) == (36, 37)
    with mock.patch.object(count_module, "schedule", wraps=schedule) as passes:
        assert DeployCount(request, 10000)(stored(mixed, 8 * TIB, 0))[0] == simulated_capacity(
            on(*mixed), BINDINGS, 10000
        )
    assert passes.called


@SETTINGS
@given(nodes(), requests(("normal", "normal", "unlimited", "mount")), bounds)
def test_the_simulated_count_lies_within_the_bounds(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    known = VolumeCount(bindings).bounds(on(*node))
    if known is not None:
        low, high = known
        assert min(low, bound) <= simulated_capacity(on(*node), bindings, bound) <= high


def test_the_floor_is_zero_where_it_does_not_hold() -> None:
    fresh = on({"/data0": TIB}, {}, [Disk("/dev/vdb", ["/data0"], 100, 100, 100, 100)], [])
    assert VolumeCount(BINDINGS).floor(fresh) == 34
    # A monopoly group, bindings that draw IOPS, and a disk already past its quota: the argument needs
    # none of them, so the passes count.
    assert VolumeCount([*BINDINGS, VolumeBinding.parse("AUTO:/m:rwm:1G")]).floor(fresh) == 0
    assert VolumeCount([VolumeBinding.parse("AUTO:/dir0:rw:10G:1:1:0:0")]).floor(fresh) == 0
    overdrawn = on({"/data0": TIB}, {}, [], [Disk("/dev/vdz", ["/"], 1, 0, 0, 0)])
    assert VolumeCount(BINDINGS).floor(overdrawn) == 0
    empty = StorageRecord(NodeResource(), NodeResource())
    assert VolumeCount(BINDINGS).floor(empty) == 0


@SETTINGS
@given(nodes(), requests(ALL_KINDS), bounds, st.integers(-3, 400), st.integers(0, 2 * TIB))
def test_explain_names_the_limit_the_full_passes_name(
    node: Node, bindings: list[VolumeBinding], bound: int, per_workload_gib: int, used: int
) -> None:
    # explain skips the passes only where the storage stops the count strictly before the floor: where
    # storage and volumes meet, the volumes' limit is the one named, as when the passes run.
    request = WorkloadRequest(bindings, storage_request=per_workload_gib * GIB)
    count, limit = DeployCount(request, bound).limit(stored(node, TIB, used))
    with mock.patch.object(VolumeCount, "floor", return_value=0):
        full_count, full_limit = DeployCount(request, bound).limit(stored(node, TIB, used))
    assert (count, limit.kind, limit.text) == (full_count, full_limit.kind, full_limit.text)
    assert count == DeployCount(request, bound)(stored(node, TIB, used))[0]


def test_where_storage_and_volumes_run_out_together_explain_names_the_volumes() -> None:
    node: Node = ({"/data0": TIB}, {}, [], [])  # 34 plans of 30 GiB, and room for 34 workloads of 30 GiB
    request = WorkloadRequest(BINDINGS, storage_request=30 * GIB)
    count, limit = DeployCount(request, 10000).limit(stored(node, TIB, 0))
    assert (count, limit.kind) == (34, "volume space")
    request = WorkloadRequest(BINDINGS, storage_request=31 * GIB)  # room for 33: the storage, passes or not
    with mock.patch.object(count_module, "schedule", side_effect=AssertionError("the passes ran")):
        count, limit = DeployCount(request, 10000).limit(stored(node, TIB, 0))
    assert (count, limit.kind) == (33, "storage")


@SETTINGS
@given(
    st.lists(st.sampled_from([1, 2, 3, 5, 7, 8, 10, 12, 13, 20, 21]), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 6), st.integers(-2, 2), st.integers(0, 200), st.booleans()), max_size=9),
    st.sampled_from([1, 2, 3, 5, 10, 1000]),
)
def test_counts_on_volumes_near_multiples_of_a_plan_equal_the_simulation(
    sizes: list[int], shapes: list[tuple[int, int, int, bool]], bound: int
) -> None:
    # Where the two bounds part or meet: volumes a few MiB either side of whole plans, or of any size.
    whole = sum(sizes)
    volumes = {f"/v{i}": max(whole * k + d if near else other, 0) * MIB for i, (k, d, other, near) in enumerate(shapes)}
    bindings = [VolumeBinding.parse(f"AUTO:/d{i}:rw:{size}M") for i, size in enumerate(sizes)]
    node: Node = (volumes, {}, [], [])
    assert VolumeCount(bindings).capacity(on(*node), bound) == simulated_capacity(on(*node), bindings, bound)
