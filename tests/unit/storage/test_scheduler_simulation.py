"""The scheduler's normal enumeration charges repeated attempts in closed form (``place_normal``, and
``place_sizes`` when nothing draws quota); it must answer exactly as the attempt-by-attempt simulation
it replaced.

``simulated_place_normal`` below is that simulation, kept verbatim as the oracle (a min-heap keyed by
(free, device), one attempt at a time, its failed last attempt's partial charges kept). ``simulated``
composes the scheduler around it from the package's own steps (the promotion loop of spec §3.5, without
the passes ``skip_futile_passes`` leaves out; the mount-only and monopoly steps; the assembly), so each
property runs the real scheduler and the simulation on the same input and compares everything a caller
or a later step can see: counts, plans, disk plans, the normal bytes the unlimited target reads and the
quota the monopoly pass reads.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from resource_extend.storage.binding import VolumeBinding, need_schedule
from resource_extend.storage.disk import ZERO, Disk
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler import enumeration
from resource_extend.storage.scheduler.assembly import Assembly, Placement
from resource_extend.storage.scheduler.classes import ClassifiedRequest
from resource_extend.storage.scheduler.count import VolumeCount, volume_capacity
from resource_extend.storage.scheduler.enumeration import place_sizes
from resource_extend.storage.scheduler.host import Host, Quotas, charge, quota_of
from resource_extend.storage.scheduler.outcome import Pass
from resource_extend.storage.scheduler.passes import place_mono, schedule, skip_futile_passes
from resource_extend.storage.scheduler.placement import volume_plans
from resource_extend.storage.scheduler.quotaplans import mount_only, place_normal
from tests.support import examples

GIB = 1 << 30
MIB = 1 << 20
TIB = 1 << 40


def on(
    capacity_volumes: dict[str, int], usage_volumes: dict[str, int], capacity_disks: list[Disk], usage_disks: list[Disk]
) -> StorageRecord:
    """The node the scheduler reads: a record with these capacity and usage sides."""
    return StorageRecord(NodeResource(capacity_volumes, capacity_disks), NodeResource(usage_volumes, usage_disks))


def simulated_place_normal(
    host: Host,
    quotas: Quotas,
    request: ClassifiedRequest,
    normal_bound: int,
    result: Pass,
) -> None:
    """The enumeration as it was before the closed form: one attempt, and one heap search, at a time."""
    keep = result.keep
    disk_of = {device: host.disk_at(device) for device in host.used}
    heap = [(host.free[device], device) for device in host.used]
    heapq.heapify(heap)
    specs = [(binding.size, binding.quota) for binding in request.normal]
    mounts = [(host.disk_at(mount.source), mount.quota) for mount in request.iops_mounts]
    kept: list[tuple[str, ...]] = []
    count = 0
    placed: list[str] = []
    failed = False
    while count < normal_bound and not failed:
        placed = []
        for size, quota in specs:
            skipped = []
            device = None
            while heap:
                entry = heapq.heappop(heap)
                index = disk_of[entry[1]]
                left = ZERO if index is None else quotas[index]
                if entry[0] >= size and quota.fits(left):
                    if index is not None:
                        charge(quotas[index], quota)
                    device = entry[1]
                    heapq.heappush(heap, (entry[0] - size, device))
                    break
                skipped.append(entry)
            for entry in skipped:
                heapq.heappush(heap, entry)
            if device is None:
                failed = True
                break
            placed.append(device)
        if failed:
            break
        for index, quota in mounts:
            if not quota.fits(quota_of(quotas, index)):
                failed = True
                break
            if index is not None:
                charge(quotas[index], quota)
        if failed:
            break
        if count < keep:
            kept.append(tuple(placed))
        count += 1

    result.normal_count = count
    result.normal_devices = kept
    spent = {device: host.free[device] - free for free, device in heap}
    if failed:
        for device, (size, _) in zip(placed, specs):
            spent[device] -= size
    result.normal_bytes = spent


def simulated_pass(host: Host, request: ClassifiedRequest, bound: int, normal_bound: int, keep: int) -> Pass:
    """One pass (spec §3.3) with the simulation as its normal enumeration."""
    quotas = [list(quota) for quota in host.quotas]
    result = Pass(keep=keep)
    if request.normal:
        simulated_place_normal(host, quotas, request, normal_bound, result)
    elif request.iops_mounts:
        result.normal_count, result.mount_only_disks = mount_only(host, quotas, request, normal_bound, result)
    else:
        result.normal_count = bound
    place_mono(host, quotas, request, bound, result)
    return result


def simulated(
    node: StorageRecord, bindings: list[VolumeBinding], bound: int, keep: int
) -> tuple[Host, ClassifiedRequest, Pass]:
    """The last pass of the promotion loop (spec §3.5), every pass simulated; ``keep`` plans recorded."""
    host, request = Host(node), ClassifiedRequest(bindings)
    normal_bound = request.normal_bound(bound, len(host.unused))
    result = simulated_pass(host, request, bound, normal_bound, keep)
    while result.mono_count > result.normal_count and result.normal_count < bound:
        if not request.normal or not host.promote(request.normal[0].size):
            break
        result = simulated_pass(host, request, bound, normal_bound, keep)
    return host, request, result


def simulated_capacity(node: StorageRecord, bindings: list[VolumeBinding], bound: int) -> int:
    """``volume_capacity`` with the simulated enumeration."""
    bound = max(bound, 0)
    if not need_schedule(bindings):
        return bound
    if ClassifiedRequest(bindings).places_volumes and not Host(node).free:
        return 0
    _, _, result = simulated(node, bindings, bound, keep=0)
    return min(result.normal_count, result.mono_count, bound)


def simulated_plans(node: StorageRecord, bindings: list[VolumeBinding], bound: int) -> list[Placement]:
    """``volume_plans`` with the simulated enumeration."""
    bound = max(bound, 0)
    if not need_schedule(bindings):
        return [(VolumePlan(), []) for _ in range(bound)]
    if ClassifiedRequest(bindings).places_volumes and not Host(node).free:
        return []
    host, request, result = simulated(node, bindings, bound, keep=bound)
    return Assembly(host, request, result).placements(min(result.normal_count, result.mono_count, bound))


# ---------------------------------------------------------------------------------------------------------
# Generated nodes and requests: ties, tiny and huge sizes against the volumes, shared and negative disks


Node = tuple[dict[str, int], dict[str, int], list[Disk], list[Disk]]

SIZES = {
    "tiny": st.integers(1, 512).map(lambda n: n * MIB),
    "medium": st.integers(1, 16).map(lambda n: n * GIB),
    "big": st.integers(100, 900).map(lambda n: n * GIB),
    "odd": st.integers(1, 5 * GIB),
}


@st.composite
def nodes(draw: Any) -> Node:
    count = draw(st.integers(0, 10))
    devices = [f"/data{i}" for i in range(count)]
    # equal: every choice is decided by the name; grid: whole GiB, so volumes often tie mid-enumeration
    shape = draw(st.sampled_from(["equal", "grid", "grid", "random"]))
    capacity_volumes: dict[str, int] = {}
    usage_volumes: dict[str, int] = {}
    for device in devices:
        if shape == "equal":
            size, used = TIB, draw(st.sampled_from([0, 0, 1]))
        elif shape == "grid":
            size = draw(st.integers(1, 80)) * GIB
            used = draw(st.integers(0, size // GIB)) * GIB
        else:
            size = draw(st.sampled_from([TIB, 64 * GIB, 3 * GIB])) + draw(st.integers(0, GIB))
            used = draw(st.sampled_from([0, 0, 1, size, draw(st.integers(0, size))]))
        capacity_volumes[device] = size
        usage_volumes[device] = used
    capacity_disks, usage_disks = [], []
    for i in range(draw(st.integers(0, 3))):
        mounts = draw(st.lists(st.sampled_from([*devices, "/", "/mnt", "/data"]), min_size=1, max_size=4))
        quota = [draw(st.sampled_from([0, 100, 1000, 100000])) for _ in range(2)]
        quota += [draw(st.sampled_from([0, 100, 10000])) * MIB for _ in range(2)]
        capacity_disks.append(Disk(f"/dev/vd{'abc'[i]}", mounts, *quota))
        usage_disks.append(Disk(f"/dev/vd{'abc'[i]}", mounts, *(draw(st.integers(0, q)) for q in quota)))
    if draw(st.integers(0, 9)) == 0:  # a usage disk missing from capacity leaves negative quota
        usage_disks.append(Disk("/dev/vdz", ["/"], 1, 1, 1, 1))
    return capacity_volumes, usage_volumes, capacity_disks, usage_disks


@st.composite
def requests(draw: Any, kinds: Sequence[str]) -> list[VolumeBinding]:
    def iops() -> str:
        values = [draw(st.sampled_from([0, 1, 7, 100])) for _ in range(2)]
        values += [draw(st.sampled_from([0, 1, 50])) for _ in range(2)]
        return "{}:{}:{}M:{}M".format(*values)

    texts = []
    for i in range(draw(st.integers(1, 5))):
        size = draw(SIZES[draw(st.sampled_from(sorted(SIZES)))])
        kind = draw(st.sampled_from(list(kinds)))
        if kind == "normal":
            texts.append(f"AUTO:/dir{i}:rw:{size}")
        elif kind == "iops":
            texts.append(f"AUTO:/dir{i}:rw:{size}:{iops()}")
        elif kind == "mono":
            texts.append(f"AUTO:/dir{i}:rwm:{size}")
        elif kind == "mono-iops":
            texts.append(f"AUTO:/dir{i}:rwm:{size}:{iops()}")
        elif kind == "unlimited":
            texts.append(f"AUTO:/dir{i}:rw")
        else:
            source = draw(st.sampled_from(["/data0/sub", "/data1", "/mnt/x", "/elsewhere"]))
            texts.append(f"{source}:/dir{i}:rw:0:{iops()}")
    return [VolumeBinding.parse(text) for text in texts]


ALL_KINDS = ("normal", "normal", "iops", "mono", "mono-iops", "unlimited", "mount")
bounds = st.sampled_from([1, 2, 7, 100, 1000, 10000])
SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _render(placements: list[tuple[Any, list[Disk]]]) -> list[tuple[Any, list[Any]]]:
    return [(plan.to_json(), [disk.to_json() for disk in disks]) for plan, disks in placements]


def _both(node: Node, bindings: list[VolumeBinding], bound: int) -> tuple[int, int]:
    """The capacity count, and the simulation's."""
    return volume_capacity(on(*node), bindings, bound), simulated_capacity(on(*node), bindings, bound)


def _both_plans(node: Node, bindings: list[VolumeBinding], bound: int) -> tuple[Any, Any]:
    """The placements, and the simulation's, rendered as JSON."""
    return _render(volume_plans(on(*node), bindings, bound)), _render(simulated_plans(on(*node), bindings, bound))


# ---------------------------------------------------------------------------------------------------------
# Properties


@SETTINGS
@given(nodes(), requests(ALL_KINDS), bounds)
def test_capacity_equals_the_simulation(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    ours, oracle = _both(node, bindings, bound)
    assert ours == oracle


@SETTINGS
@given(nodes(), requests(("normal", "iops", "mount")), bounds)
def test_capacity_of_normal_and_mount_bindings_equals_the_simulation(
    node: Node, bindings: list[VolumeBinding], bound: int
) -> None:
    ours, oracle = _both(node, bindings, bound)
    assert ours == oracle


@SETTINGS
@given(nodes(), requests(("iops", "mono-iops", "mount")), bounds)
def test_capacity_equals_the_simulation_when_monopoly_sees_the_quota_left(
    node: Node, bindings: list[VolumeBinding], bound: int
) -> None:
    # Monopoly and normal bindings both draw IOPS: the enumeration runs to exhaustion and the monopoly
    # pass sees the quota it left, the failed attempt's partial charges included.
    ours, oracle = _both(node, bindings, bound)
    assert ours == oracle


@SETTINGS
@given(nodes(), requests(ALL_KINDS), st.sampled_from([1, 2, 3, 7, 50]))
def test_plans_equal_the_simulation(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    ours, oracle = _both_plans(node, bindings, bound)
    assert ours == oracle


@SETTINGS
@given(nodes(), requests(ALL_KINDS), bounds)
def test_one_pass_leaves_what_the_simulation_leaves(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    # Everything a pass hands on: counts, the devices kept, the bytes per device and the quota left.
    request = ClassifiedRequest(bindings)
    if not request.normal:
        return
    seen = []
    # The general enumeration must also get the sizes-only requests right; place_sizes only those.
    places = [place_normal, simulated_place_normal]
    if request.sizes_only:
        places.append(place_sizes)
    for place in places:
        host = Host(on(*node))
        for device in list(host.unused):  # open every volume, as a capacity query ends up doing
            host.used.append(device)
        host.unused.clear()
        quotas = [list(quota) for quota in host.quotas]
        result = Pass(keep=5)
        place(host, quotas, request, bound, result)
        seen.append((result.normal_count, result.normal_devices, result.normal_bytes, quotas))
    assert all(outcome == seen[1] for outcome in seen)


def test_a_volume_catching_up_on_a_tie_wins_by_name() -> None:
    # 1G goes to /data1 (20G), 10G with IOPS to /data0 (65G; /data1 has no disk, so no quota for it).
    # /data0 shrinks 9G an attempt faster, ties /data1 at 15G on the sixth attempt and, the smaller
    # name, takes the 1G binding; the 10G binding then no longer fits anywhere.
    node: Node = (
        {"/data0": 65 * GIB + 1, "/data1": 20 * GIB + 1},
        {"/data0": 1, "/data1": 1},
        [Disk("/dev/vda", ["/data0"], 1000, 1000, 0, 0)],
        [],
    )
    bindings = [VolumeBinding.parse("AUTO:/a:rw:1G"), VolumeBinding.parse("AUTO:/b:rw:10G:1:0:0:0")]
    ours, oracle = _both_plans(node, bindings, 10)
    assert ours == oracle
    small = "AUTO:/a:rw:1073741824:0:0:0:0"
    assert [plan[small] for plan, _ in ours] == [{"/data1": GIB}] * 5 + [{"/data0": GIB}]


@pytest.mark.parametrize("short", [0, 1])
def test_a_volume_one_byte_short_of_the_whole_attempt_splits_it(short: int) -> None:
    # /data0 holds 10G + 20G exactly, or one byte less: then the 20G binding goes to /data1.
    node: Node = ({"/data0": 30 * GIB + 1 - short, "/data1": TIB}, {"/data0": 1, "/data1": 1}, [], [])
    bindings = [VolumeBinding.parse("AUTO:/a:rw:10G"), VolumeBinding.parse("AUTO:/b:rw:20G")]
    ours, oracle = _both_plans(node, bindings, 3)
    assert ours == oracle
    assert ours[0][0]["AUTO:/b:rw:21474836480:0:0:0:0"] == {"/data1" if short else "/data0": 20 * GIB}


def test_the_bench_node_needs_few_simulated_attempts() -> None:
    # 8 x 1 TiB and two normal bindings: 272 placements, decided by a handful of simulated attempts.
    volumes = {f"/data{i}": TIB for i in range(8)}
    bindings = [VolumeBinding.parse("AUTO:/dir0:rw:10G"), VolumeBinding.parse("AUTO:/dir1:rw:20G")]
    calls = 0

    def counted(*args: Any) -> int:
        nonlocal calls
        calls += 1
        return original(*args)

    original = enumeration.last_true
    with mock.patch.object(enumeration, "last_true", counted):
        assert volume_capacity(on(volumes, {}, [], []), bindings, 10000) == 272
    # Whole attempts on one volume are counted by division, the few mixed ones by a handful of
    # comparisons each; the simulation made 272 attempts of 2 heap searches.
    assert calls < 20


@SETTINGS
@given(st.lists(nodes(), min_size=1, max_size=4), requests(ALL_KINDS), bounds)
def test_one_request_counted_over_many_nodes_equals_the_simulation_node_by_node(
    many: list[Node], bindings: list[VolumeBinding], bound: int
) -> None:
    # get-nodes-deploy-capacity and explain classify the request once and run it over every node
    # (``VolumeCount``): nothing a node's passes do may leak into the next node's.
    count = VolumeCount(bindings)
    for node in many:
        assert count.capacity(on(*node), bound) == simulated_capacity(on(*node), bindings, bound)
        assert count.limit(on(*node), bound)[0] == simulated_capacity(on(*node), bindings, bound)


def _promote_one_at_a_time(host: Host, request: ClassifiedRequest, bound: int) -> None:
    """``skip_futile_passes`` as it was first written: one binary search (``Host.promotable``) per volume."""
    if request.mono or not request.normal or request.normal_size_per_plan <= 0:
        return
    room = sum(max(host.free[device], 0) for device in host.used)
    while room // request.normal_size_per_plan < bound:
        index = host.promotable(request.normal[0].size)
        if index is None:
            return
        device = host.unused.pop(index)
        host.used.append(device)
        room += max(host.free[device], 0)


@SETTINGS
@given(
    st.lists(st.integers(0, 20), max_size=8),
    st.integers(1, 10),
    st.sampled_from([1, 3, 10, 10000]),
    st.sampled_from(["in order", "shuffled", "one grown"]),
    st.randoms(use_true_random=False),
)
@example([7, 9, 2, 5, 10, 0, 6, 3], 3, 10000, "shuffled", random.Random(1))
@example([0, 8, 1, 9], 2, 10000, "one grown", random.Random(0))
def test_skipping_futile_passes_promotes_what_one_at_a_time_promotion_does(
    unused_gib: list[int], size_gib: int, bound: int, disorder: str, shuffle: Any
) -> None:
    # A fresh host's unused volumes are in (free, name) order and promoted as a run; after a realloc
    # hand-back they may be out of order (shuffled here, or one grown), and then one at a time it is.
    volumes = {f"/data{i}": (gib + 1) * GIB for i, gib in enumerate(unused_gib)}
    node: Node = ({**volumes, "/used": 4 * GIB}, {"/used": GIB}, [], [])
    request = ClassifiedRequest([VolumeBinding.parse(f"AUTO:/a:rw:{size_gib}G")])
    order = list(Host(on(*node)).unused)
    if disorder == "shuffled":
        shuffle.shuffle(order)
    hosts = [Host(on(*node)), Host(on(*node))]
    for host in hosts:
        host.unused[:] = order
        if disorder == "one grown" and order:
            host.free[order[0]] += 8 * GIB
    skip_futile_passes(hosts[0], request, bound)
    _promote_one_at_a_time(hosts[1], request, bound)
    assert (hosts[0].used, hosts[0].unused) == (hosts[1].used, hosts[1].unused)


def test_a_disk_object_listed_twice_schedules_as_two_copies_of_it() -> None:
    # Without usage disks the host reads the record's own disk list, which an in-process caller may
    # build with one object twice. A monopoly group is checked against the disk its path finds (the
    # later of two equal mounts) but charged to the first disk of that device, as the reference
    # subtracts by device: with copies /data1 still fits; so it must with the object repeated.
    disk = Disk("/dev/vda", ["/data0", "/data1"], 100, 0, 0, 0)
    volumes = {"/data0": TIB, "/data1": TIB}
    bindings = [VolumeBinding.parse("AUTO:/m:rwm:1G:60:0:0:0")]
    copied = volume_plans(on(volumes, {}, [disk, disk.copy()], []), bindings, 10)
    repeated = volume_plans(on(volumes, {}, [disk, disk], []), bindings, 10)
    assert len(copied) == 2
    assert _render(repeated) == _render(copied)


@SETTINGS
@given(nodes(), requests(ALL_KINDS), bounds)
def test_passes_leave_the_hosts_quota_as_it_was(node: Node, bindings: list[VolumeBinding], bound: int) -> None:
    # Each pass charges a scratch copy of the host's quota, except when it charges nothing at all
    # (``ClassifiedRequest.charges_nothing``): then it reads the host's own, which must stay untouched
    # for the next pass of the promotion loop.
    host, request = Host(on(*node)), ClassifiedRequest(bindings)
    before = [list(quota) for quota in host.quotas]
    schedule(host, request, bound, keep=bound)
    assert host.quotas == before
