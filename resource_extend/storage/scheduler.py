"""The storage scheduler: where a workload's volume bindings go on one node, and how many workloads fit.

Pure functions over a node's capacity and usage (volumes, disks); nothing here touches the store. The
algorithm is the reference's (``storage/schedule/schedule.go``), including its quirks: best-fit placement
of normal bindings on used volumes, whole unused volumes split proportionally among a monopoly group,
unused volumes promoted to used one at a time, and the plans of the *last* pass taken.

Speed comes from doing less, never from different answers: a pass records only the chosen devices
(plans are built for the plans returned, not for every attempt), disk lookups are cached per path, a
count never builds plans, the mount-only case uses the reference's closed form, and the best-fit
enumeration charges a run of identical attempts at once (``_repeats``) instead of simulating each. The
property tests compare all of it with a plain transcription of the spec's loop, and the enumeration
with the attempt-by-attempt simulation it replaced (tests/unit/storage/test_scheduler_simulation.py).
"""

from __future__ import annotations

import sys

from resource_extend.capacity import Limit, trunc_div

# Callers (calculate_verbs, tests) catch these by this module's names for them.
from resource_extend.errors import InsufficientResource as InsufficientResource
from resource_extend.errors import InvalidVolume as InvalidVolume
from resource_extend.storage.binding import VolumeBinding, need_schedule
from resource_extend.storage.disk import ZERO, Disk, Quota, disk_by_path, disks_add, disks_sub
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.volume import first_volume

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from resource_extend.storage.record import StorageRecord

# One returned placement: the volume plan and the disk quotas it charges (the workload's disks_request).
Placement = tuple[VolumePlan, list[Disk]]

# Remaining quota per disk, [read_iops, write_iops, read_bps, write_bps] each, indexed like the host's disks.
_Quotas = list[list[int]]

_ZERO = ZERO
_UNBOUNDED = sys.maxsize


class BindingClasses:
    """A request split the way the scheduler treats it (spec §2); unpacks as (mono, unlimited, normal, mount)."""

    __slots__ = ("mono", "mount", "normal", "unlimited")

    def __init__(
        self,
        mono: list[VolumeBinding],
        unlimited: list[VolumeBinding],
        normal: list[VolumeBinding],
        mount: list[VolumeBinding],
    ) -> None:
        self.mono = mono  # monopoly, by size ascending (stable)
        self.unlimited = unlimited  # size 0 and no quota, as given
        self.normal = normal  # every other binding to place, by size ascending (stable)
        self.mount = mount  # real host paths, as given

    def __iter__(self) -> Iterator[list[VolumeBinding]]:
        return iter((self.mono, self.unlimited, self.normal, self.mount))


def classify_bindings(bindings: Iterable[VolumeBinding]) -> BindingClasses:
    classes = BindingClasses([], [], [], [])
    for binding in bindings:
        # Monopoly is tested first, so a monopoly binding is never unlimited.
        if binding.monopoly:
            classes.mono.append(binding)
        elif binding.unlimited:
            classes.unlimited.append(binding)
        elif binding.require_schedule:
            classes.normal.append(binding)
        else:
            classes.mount.append(binding)
    classes.mono.sort(key=_size)
    classes.normal.sort(key=_size)
    return classes


def volume_plans(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> list[Placement]:
    """Up to ``bound`` placements of ``bindings`` on the node (spec §3); empty when none fits.

    ``node`` is the node's record: its capacity and usage sides; a null side, map or list reads as empty.
    ``bound`` is ``deploy_count`` for calculate-deploy. Plans share the request's binding objects as keys
    (as the reference shares pointers); treat them as read-only.
    """
    host = _Host(node)
    return _plans(host, bindings, max(bound, 0))


def volume_capacity(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> int:
    """How many placements ``volume_plans`` would return for the same arguments, without building them.

    get-nodes-deploy-capacity calls it with ``bound = scheduler.max_deploy_count`` (spec §3.9).
    """
    bound = max(bound, 0)
    if not need_schedule(bindings):
        return bound
    host = _Host(node)
    request = _Request(bindings)
    if request.places_volumes and not host.free:
        return 0
    result = _schedule(host, request, bound, keep=0)
    return min(result.normal_count, result.mono_count, bound)


def volume_limit(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> tuple[int, Limit | None]:
    """``volume_capacity``'s count and, when it is under ``bound``, what stopped it: for ``explain``.

    The same passes as ``volume_capacity``; each records, where it stops, the binding and the volume or
    disk numbers it stopped on (``_Pass.why``), which a count leaves unrecorded.
    """
    bound = max(bound, 0)
    if not need_schedule(bindings):
        return bound, None
    host = _Host(node)
    request = _Request(bindings)
    if request.places_volumes and not host.free:
        first = (*request.normal, *request.mono, *request.unlimited)[0]
        return 0, Limit("volume space", f"volume {binding_text(first)}: the node has no volumes")
    result = _schedule(host, request, bound, keep=0, why=True)
    count = min(result.normal_count, result.mono_count, bound)
    if count >= bound:
        return count, None
    stop = result.stop if result.normal_count <= result.mono_count else result.mono_stop
    return count, stop or Limit("volume space", f"volume plan: room for {count}")


def affinity_plan(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    old_plan: VolumePlan,
    old_bindings: Sequence[VolumeBinding],
) -> Placement:
    """Realloc's placement (spec §4): bindings the workload already holds stay on their devices.

    ``bindings`` is the merged, validated request list, ``old_plan`` and ``old_bindings`` the workload's
    current ``volume_plan_request`` and ``volumes_request``. The workload's holdings are handed back to
    the node first, so only growth has to fit. Raises ``InsufficientResource`` or ``InvalidVolume``.
    """
    if not need_schedule(bindings):
        return VolumePlan(), []
    host = _Host(node)
    _give_back(host, old_plan, old_bindings)

    classes = classify_bindings(bindings)
    planner = _AffinityPlanner(host, old_plan)
    mount_disks = host.charge_mounts([m for m in classes.mount if m.require_iops])
    if mount_disks is None:
        raise InsufficientResource("no IOPS quota left for the mount bindings")
    planner.disks = disks_add(planner.disks, mount_disks)
    planner.keep_in_place(classes.normal)
    planner.keep_mono_group(classes.mono)
    planner.keep_in_place(classes.unlimited)
    if not planner.reschedule:
        return planner.plan, planner.disks

    # The rest is placed like a deploy of one, on the node as it stands after the steps above.
    placements = _plans(host, planner.reschedule, 1)
    if not placements:
        raise InsufficientResource("no room for the bindings that have to move")
    plan, disks = placements[0]
    return planner.plan.merged(plan), disks_add(planner.disks, disks)


# ---------------------------------------------------------------------------------------------------------
# The host model (spec §3.1)


class _Host:
    """Free bytes per volume and remaining quota per disk; mutated by promotion and by realloc."""

    def __init__(self, node: StorageRecord) -> None:
        capacity, usage = node.capacity, node.usage
        capacity_volumes = None if capacity is None else capacity.volumes
        usage_volumes = None if usage is None else usage.volumes
        capacity_disks = None if capacity is None else capacity.disks
        usage_disks = None if usage is None else usage.disks
        # Only device and mounts of these disks are read; quotas live in ``quotas``.
        self.disks = disks_sub(capacity_disks or (), usage_disks or ())
        self.capacity_disks = capacity_disks or ()  # for explain's "300 of 1000 left"
        self.quotas: _Quotas = [list(disk.quota) for disk in self.disks]
        self.free: dict[str, int] = {}
        used: list[str] = []
        unused: list[str] = []
        usage_volumes = usage_volumes or {}
        for device, size in (capacity_volumes or {}).items():
            taken = usage_volumes.get(device, 0)
            self.free[device] = size - taken
            (unused if taken == 0 else used).append(device)
        # The lists keep their order from here on: promotion appends, realloc changes sizes in place.
        self.used = sorted(used, key=self._order)
        self.unused = sorted(unused, key=self._order)
        self._disk_at: dict[str, int | None] = {}

    def _order(self, device: str) -> tuple[int, str]:
        return (self.free[device], device)

    def disk_at(self, path: str) -> int | None:
        """Index of the disk covering ``path`` (mounts never change, so the answer is cached)."""
        if path not in self._disk_at:
            found = disk_by_path(self.disks, path)
            self._disk_at[path] = None if found is None else _index_of(self.disks, found)
        return self._disk_at[path]

    def first_disk_of(self, device: str) -> int:
        # A monopoly charge is subtracted by device name, as the reference's Disks.Sub finds it.
        return next(index for index, disk in enumerate(self.disks) if disk.device == device)

    def stamp(self, index: int, quota: Quota) -> Disk:
        return self.disks[index].stamped(quota)

    def charge_mounts(
        self,
        mounts: Sequence[VolumeBinding],
        quotas: _Quotas | None = None,
    ) -> list[Disk] | None:
        """Charge each mount binding to the disk under its source; ``None`` when one does not fit.

        Charges made before a failure stay, as in the reference.
        """
        quotas = self.quotas if quotas is None else quotas
        charged: list[Disk] = []
        for mount in mounts:
            index = self.disk_at(mount.source)
            quota = mount.quota
            if not quota.fits(_quota_of(quotas, index)):
                return None
            if index is not None:
                _charge(quotas[index], quota)
                charged = disks_add(charged, [self.stamp(index, quota)])
        return charged

    def promote(self, min_size: int) -> bool:
        """Move the first unused volume holding ``min_size`` to the end of the used list."""
        index = self._promotable(min_size)
        if index is None:
            return False
        self.used.append(self.unused.pop(index))
        return True

    def _promotable(self, min_size: int) -> int | None:
        """A binary search, as the reference does it: on the sorted list that is the smallest adequate
        volume, and after a realloc hand-back (list no longer sorted) it is still the reference's pick.
        """
        low, high = 0, len(self.unused)
        while low < high:
            middle = (low + high) // 2
            if self.free[self.unused[middle]] < min_size:
                low = middle + 1
            else:
                high = middle
        return None if low == len(self.unused) else low


def _index_of(disks: Sequence[Disk], disk: Disk) -> int:
    return next(index for index, item in enumerate(disks) if item is disk)


def _quota_of(quotas: _Quotas, index: int | None) -> Sequence[int]:
    # A path no disk covers reads as a disk with nothing left: fine without IOPS, never with them.
    return _ZERO if index is None else quotas[index]


def _fits(left: Sequence[int], quota: Quota) -> bool:
    """``quota.fits(left)`` in the argument order of ``_charge``; the enumeration's oracle test checks with it."""
    return quota.fits(left)


def _charge(left: list[int], quota: Sequence[int]) -> None:
    left[0] -= quota[0]
    left[1] -= quota[1]
    left[2] -= quota[2]
    left[3] -= quota[3]


def _refill(left: list[int], quota: Sequence[int]) -> None:
    left[0] += quota[0]
    left[1] += quota[1]
    left[2] += quota[2]
    left[3] += quota[3]


def _size(binding: VolumeBinding) -> int:
    return binding.size


def _sum_quota(bindings: Iterable[VolumeBinding]) -> Quota:
    total = ZERO
    for binding in bindings:
        total = total.plus(binding.quota)
    return total


# ---------------------------------------------------------------------------------------------------------
# One request, classified once per scheduler run


class _Request:
    def __init__(self, bindings: Iterable[VolumeBinding]) -> None:
        self.bindings = list(bindings)
        self.mono, self.unlimited, self.normal, self.mount = classify_bindings(self.bindings)
        self.iops_mounts = [mount for mount in self.mount if mount.require_iops]
        self.places_volumes = bool(self.mono or self.unlimited or self.normal)
        self.mono_size = sum(binding.size for binding in self.mono)
        self.mono_quota = _sum_quota(self.mono)
        self.mono_needs_iops = any(value > 0 for value in self.mono_quota)
        # Merging plans that share no destination is plain concatenation (see _Assembly).
        destinations = [binding.destination for binding in (*self.normal, *self.mono, *self.unlimited)]
        self.distinct_destinations = len(set(destinations)) == len(destinations)
        # Bytes one normal plan takes from the volumes; 0 (no shortcut) when a size could give some back.
        sizes = [binding.size for binding in self.normal]
        self.normal_size_per_plan = sum(sizes) if all(size >= 0 for size in sizes) else 0
        # Nothing in the normal enumeration draws quota: placement depends on bytes alone (_place_sizes).
        self.sizes_only = (
            not self.iops_mounts
            and all(size >= 0 for size in sizes)
            and not any(any(binding.quota) for binding in self.normal)
        )

    def normal_bound(self, bound: int, unused: int) -> int:
        """How far a pass enumerates normal plans (spec §3.7), exactly as the reference bounds it.

        The bound is behaviour, not only a saving: the unlimited target sees just the enumerated plans.
        It is lifted when monopoly and normal or mount bindings all draw IOPS, because then the quota the
        enumeration uses up decides which monopoly plans fit.
        """
        if not self.mono:
            return bound
        draws = any(b.require_iops for b in self.normal) or bool(self.iops_mounts)
        if not any(b.require_iops for b in self.mono) or not draws:
            return max(bound, unused + 1)
        return _UNBOUNDED


# ---------------------------------------------------------------------------------------------------------
# A pass (spec §3.3) and the promotion loop (spec §3.4-3.5)


class _Pass:
    __slots__ = (
        "mono",
        "mono_bytes",
        "mono_count",
        "mono_placeholders",
        "mono_stop",
        "mount_only_disks",
        "normal_bytes",
        "normal_count",
        "normal_devices",
        "stop",
        "why",
    )

    def __init__(self, why: bool = False) -> None:
        self.normal_count = 0
        self.mono_count = 0
        # Devices of the normal bindings, per kept attempt; None when the request has no normal binding.
        self.normal_devices: list[tuple[str, ...]] | None = None
        # The disk plan every attempt charges when there are only mount bindings.
        self.mount_only_disks: list[Disk] | None = None
        # Bytes per device over all normal plans of the pass, kept or not (for the unlimited target).
        self.normal_bytes: dict[str, int] = {}
        # Per kept monopoly plan: the device and each binding's share (shares empty unless kept).
        self.mono: list[tuple[str, list[int]]] = []
        self.mono_bytes: dict[str, int] = {}
        self.mono_placeholders = False
        # Only explain asks why (``why``): what stopped the normal and the monopoly enumerations.
        self.why = why
        self.stop: Limit | None = None
        self.mono_stop: Limit | None = None


def _schedule(host: _Host, request: _Request, bound: int, keep: int, why: bool = False) -> _Pass:
    """Run passes, promoting unused volumes while monopoly plans outnumber normal ones; the last pass wins.

    ``keep`` is how many plans of each pass to record (0 for a count).
    """
    normal_bound = request.normal_bound(bound, len(host.unused))
    _skip_futile_passes(host, request, bound)
    result = _run_pass(host, request, bound, normal_bound, keep, why)
    while result.mono_count > result.normal_count and result.normal_count < bound:
        # One volume at a time: normal capacity is not monotone in the number of promoted volumes
        # (they share disk quota), so a search over that number would pick other plans.
        if not request.normal or not host.promote(request.normal[0].size):
            break
        _skip_futile_passes(host, request, bound)
        result = _run_pass(host, request, bound, normal_bound, keep, why)
    return result


def _skip_futile_passes(host: _Host, request: _Request, bound: int) -> None:
    """Promote without running the passes whose only outcome would be "promote the next volume".

    Without monopoly bindings a pass counts ``bound`` placeholder monopoly plans, so the loop goes on
    while the normal count stays under ``bound``; the used volumes' free space caps that count. When
    even the cap is under ``bound`` and another volume can be promoted, the pass's result is known and
    nothing of it is kept (the plans taken are the last pass's). On a node of many empty volumes this
    turns one pass per volume into one pass.
    """
    if request.mono or not request.normal or request.normal_size_per_plan <= 0:
        return
    room = sum(max(host.free[device], 0) for device in host.used)
    min_size = request.normal[0].size
    while room // request.normal_size_per_plan < bound:
        index = host._promotable(min_size)
        if index is None:
            return
        device = host.unused.pop(index)
        host.used.append(device)
        room += max(host.free[device], 0)


def _run_pass(host: _Host, request: _Request, bound: int, normal_bound: int, keep: int, why: bool) -> _Pass:
    # Scratch state: normal placement only changes used volumes, monopoly placement only unused ones.
    quotas = [list(quota) for quota in host.quotas]
    result = _Pass(why)
    if request.normal:
        if request.sizes_only:
            _place_sizes(host, quotas, request, normal_bound, keep, result)
        else:
            _place_normal(host, quotas, request, normal_bound, keep, result)
    elif request.iops_mounts:
        result.normal_count, result.mount_only_disks = _mount_only(host, quotas, request, normal_bound, result)
    else:
        result.normal_count = bound
    _place_mono(host, quotas, request, bound, keep, result)
    return result


def _place_normal(
    host: _Host,
    quotas: _Quotas,
    request: _Request,
    normal_bound: int,
    keep: int,
    result: _Pass,
) -> None:
    """Best fit: each binding goes to the used volume with the least free space that holds it and whose
    disk has the quota; attempts repeat until one fails (its partial charges stay) or the bound.

    Attempts are not simulated one by one: after one attempt, ``_repeats`` works out in closed form for
    how many more the very same choices are certain (every comparison the choices rest on is linear in
    the number of attempts), and those are charged at once. Only an attempt after which some comparison
    may flip is simulated, so the cost follows the number of changes of pattern, not of placements.
    """
    used = host.used
    free = {device: host.free[device] for device in used}
    disk_of = {device: host.disk_at(device) for device in used}
    specs = [(binding.size, binding.quota) for binding in request.normal]
    mounts = [(host.disk_at(mount.source), mount.quota) for mount in request.iops_mounts]
    # Negative sizes or quotas would break the monotonicity _repeats relies on: simulate those plainly.
    may_jump = all(size >= 0 and min(quota) >= 0 for size, quota in specs) and all(
        min(quota) >= 0 for _, quota in mounts
    )
    kept: list[tuple[str, ...]] = []
    count = 0
    placed: list[str] = []
    failed = False
    while count < normal_bound:
        placed = []
        for size, quota in specs:
            best: str | None = None
            best_free = 0
            for device in used:
                left = free[device]
                if left >= size and (best is None or left < best_free or (left == best_free and device < best)):
                    index = disk_of[device]
                    if quota.fits(_ZERO if index is None else quotas[index]):
                        best, best_free = device, left
            if best is None:
                failed = True
                if result.why:
                    result.stop = _no_volume(host, request, request.normal[len(placed)], free, quotas, count)
                break
            index = disk_of[best]
            if index is not None:
                _charge(quotas[index], quota)
            free[best] = best_free - size
            placed.append(best)
        if failed:
            break
        for at, (index, quota) in enumerate(mounts):
            if not quota.fits(_quota_of(quotas, index)):
                failed = True
                if result.why:
                    result.stop = _no_quota(host, request.iops_mounts[at], index, quota, quotas, count)
                break
            if index is not None:
                _charge(quotas[index], quota)
        if failed:
            break
        times = 1
        if may_jump:
            times = _repeats(placed, specs, mounts, free, disk_of, quotas, normal_bound - count)
            if times > 1:
                _charge_repeats(placed, specs, mounts, free, disk_of, quotas, times - 1)
        if count < keep:
            kept.extend([tuple(placed)] * min(times, keep - count))
        count += times

    result.normal_count = count
    result.normal_devices = kept
    # Bytes of the plans = what left the volumes, less what the failed last attempt took.
    spent = {device: host.free[device] - left for device, left in free.items()}
    if failed:
        for device, (size, _) in zip(placed, specs):
            spent[device] -= size
    result.normal_bytes = spent


def _place_sizes(
    host: _Host,
    quotas: _Quotas,
    request: _Request,
    normal_bound: int,
    keep: int,
    result: _Pass,
) -> None:
    """``_place_normal`` for a request whose normal bindings and mounts draw no quota (the common case).

    Nothing charges a disk, so whether a volume may take a binding is fixed for the pass: its disk (if
    any) must have no negative quota left, as ``_fits`` demands even of a zero charge. What is left is
    best fit on bytes, with ``_repeats``' reasoning reduced to the bytes.
    """
    sizes = [binding.size for binding in request.normal]
    used = host.used
    if any(min(quota) < 0 for quota in quotas):
        used = [device for device in used if _ZERO.fits(_quota_of(quotas, host.disk_at(device)))]
    free = {device: host.free[device] for device in used}
    smallest, whole = sizes[0], sum(sizes)  # sizes ascend, as classify_bindings sorts them
    kept: list[tuple[str, ...]] = []
    count = 0
    placed: list[str] = []
    failed = False
    while count < normal_bound:
        # The volume that takes the smallest binding also takes every other one while it holds the whole
        # attempt: any volume ahead of it in (free, name) is too small for all of them. It does so
        # free // whole times in a row (what _repeats would find, without simulating an attempt).
        first: str | None = None
        first_free = 0
        for device in used:
            left = free[device]
            if left >= smallest and (first is None or left < first_free or (left == first_free and device < first)):
                first, first_free = device, left
        if first is not None and first_free >= whole > 0:
            times = min(first_free // whole, normal_bound - count)
            free[first] = first_free - times * whole
            if count < keep:
                kept.extend([(first,) * len(sizes)] * min(times, keep - count))
            count += times
            continue
        placed = []
        for size in sizes:
            best: str | None = None
            best_free = 0
            for device in used:
                left = free[device]
                if left >= size and (best is None or left < best_free or (left == best_free and device < best)):
                    best, best_free = device, left
            if best is None:
                failed = True
                if result.why:
                    result.stop = _no_volume(host, request, request.normal[len(placed)], free, quotas, count)
                break
            free[best] = best_free - size
            placed.append(best)
        if failed:
            break
        # As in _repeats: how many attempts keep every choice of this one (sizes are >= 0, one > 0).
        per: dict[str, int] = {}
        for device, size in zip(placed, sizes):
            per[device] = per.get(device, 0) + size
        times = normal_bound - count
        before: dict[str, int] = {}
        for device, size in zip(placed, sizes):
            mine = free[device] + per[device] - before.get(device, 0)
            times = min(times, _last_true(mine - size, per[device]))
            for other, theirs_per in per.items():
                if other == device:
                    continue
                theirs = free[other] + theirs_per - before.get(other, 0)
                if theirs >= size:
                    times = min(times, _last_true(theirs - mine, theirs_per - per[device], strict=other < device))
            before[device] = before.get(device, 0) + size
        if times > 1:
            for device, size in per.items():
                free[device] -= (times - 1) * size
        else:
            times = 1
        if count < keep:
            kept.extend([tuple(placed)] * min(times, keep - count))
        count += times

    result.normal_count = count
    result.normal_devices = kept
    spent = {device: host.free[device] - free.get(device, host.free[device]) for device in host.used}
    if failed:
        for device, size in zip(placed, sizes):
            spent[device] -= size
    result.normal_bytes = spent


def _per_attempt(
    placed: Sequence[str],
    specs: Sequence[tuple[int, Quota]],
    mounts: Sequence[tuple[int | None, Quota]],
    disk_of: Mapping[str, int | None],
) -> tuple[dict[str, int], dict[int, list[int]]]:
    """Bytes per device and quota per disk one attempt of the pattern ``placed`` takes."""
    sizes: dict[str, int] = {}
    charges: dict[int, list[int]] = {}
    for device, (size, quota) in zip(placed, specs):
        sizes[device] = sizes.get(device, 0) + size
        index = disk_of[device]
        if index is not None:
            _refill(charges.setdefault(index, [0, 0, 0, 0]), quota)
    for index, quota in mounts:
        if index is not None:
            _refill(charges.setdefault(index, [0, 0, 0, 0]), quota)
    return sizes, charges


def _charge_repeats(
    placed: Sequence[str],
    specs: Sequence[tuple[int, Quota]],
    mounts: Sequence[tuple[int | None, Quota]],
    free: dict[str, int],
    disk_of: Mapping[str, int | None],
    quotas: _Quotas,
    times: int,
) -> None:
    sizes, charges = _per_attempt(placed, specs, mounts, disk_of)
    for device, size in sizes.items():
        free[device] -= times * size
    for index, charge in charges.items():
        _charge(quotas[index], [times * value for value in charge])


def _last_true(start: int, step: int, strict: bool = False) -> int:
    """How many attempts i = 0, 1, ... keep ``start - i * step >= 0`` (``> 0`` when strict) true, given
    it holds at i = 0; ``_UNBOUNDED`` when it never turns false."""
    if step <= 0:
        return _UNBOUNDED
    if strict:
        return (start + step - 1) // step
    return start // step + 1


def _repeats(
    placed: Sequence[str],
    specs: Sequence[tuple[int, Quota]],
    mounts: Sequence[tuple[int | None, Quota]],
    free: Mapping[str, int],
    disk_of: Mapping[str, int | None],
    quotas: _Quotas,
    limit: int,
) -> int:
    """How many attempts, counting the one just made (``placed``; ``free`` and ``quotas`` are after it),
    are certain to make the same choices and succeed; at most ``limit``.

    Attempt i (0 = the one made) sees every byte and quota count as its value at attempt 0 less i times
    the pattern's per-attempt charge, so each fact a choice rests on is a linear inequality in i:
    the chosen volume and its disk still hold the binding, each mount's disk still holds the mount, and
    no other volume of the pattern becomes a better fit. Volumes outside the pattern never change, and
    the chosen ones only shrink, so one that lost at attempt 0 keeps losing. A volume of the pattern that
    lost only on (free, name) may win later; the count stops before the first attempt where it could.
    Sizes and quotas are non-negative here (the caller makes sure), so charges only ever decrease.
    """
    sizes, charges = _per_attempt(placed, specs, mounts, disk_of)
    start_free = {device: free[device] + size for device, size in sizes.items()}
    start_quota = {
        index: [have + charge[t] for t, have in enumerate(quotas[index])] for index, charge in charges.items()
    }
    times = limit
    before: dict[str, int] = {}  # bytes the attempt placed on each device before the current binding
    taken: dict[int, list[int]] = {}  # quota the attempt charged on each disk before the current binding
    for device, (size, quota) in zip(placed, specs):
        index = disk_of[device]
        mine = start_free[device] - before.get(device, 0)
        times = min(times, _last_true(mine - size, sizes[device]))
        if index is not None:
            so_far = taken.get(index, _ZERO)
            per = charges[index]
            for t in range(4):
                times = min(times, _last_true(start_quota[index][t] - so_far[t] - quota[t], per[t]))
        for other in sizes:
            if other == device:
                continue
            theirs = start_free[other] - before.get(other, 0)
            if theirs < size:
                continue  # too small already, and it only shrinks
            other_index = disk_of[other]
            if other_index is None:
                if any(quota):
                    continue  # a path without a disk never holds a quota
            else:
                so_far = taken.get(other_index, _ZERO)
                have = start_quota.get(other_index, quotas[other_index])
                if not all(have[t] - so_far[t] >= quota[t] for t in range(4)):
                    continue  # its disk is short already, and quota only goes down
            # It lost on (free, name): it keeps losing while its room stays above the chosen one's.
            times = min(times, _last_true(theirs - mine, sizes[other] - sizes[device], strict=other < device))
        before[device] = before.get(device, 0) + size
        if index is not None:
            _refill(taken.setdefault(index, [0, 0, 0, 0]), quota)
    for index, quota in mounts:
        if index is None:
            continue
        so_far = taken.get(index, _ZERO)
        per = charges[index]
        for t in range(4):
            times = min(times, _last_true(start_quota[index][t] - so_far[t] - quota[t], per[t]))
        _refill(taken.setdefault(index, [0, 0, 0, 0]), quota)
    return max(times, 1)


def _mount_only(host: _Host, quotas: _Quotas, request: _Request, bound: int, result: _Pass) -> tuple[int, list[Disk]]:
    """The mount-only enumeration in closed form (the reference's): same count, same disk plan per
    attempt, same quota left over, including the partial charges of the failed attempt."""
    start = [list(left) for left in quotas] if result.why else quotas
    prototype = host.charge_mounts(request.iops_mounts, quotas)
    if prototype is None or bound < 1:
        if result.why and prototype is None:
            result.stop = _first_mount_short(host, request, start)
        return 0, []
    per_attempt: dict[int, list[int]] = {}
    for mount in request.iops_mounts:
        index = host.disk_at(mount.source)
        assert index is not None  # the first attempt succeeded, so every mount found quota
        _refill(per_attempt.setdefault(index, [0, 0, 0, 0]), mount.quota)
    count = bound
    for index, total in per_attempt.items():
        count = min(count, 1 + _headroom(quotas[index], total))
    if result.why and count < bound:
        result.stop = _mount_headroom(host, request, start, per_attempt, count)
    for index, total in per_attempt.items():
        _charge(quotas[index], [(count - 1) * value for value in total])
    if count < bound:
        host.charge_mounts(request.iops_mounts, quotas)
    return count, prototype


def _headroom(left: Sequence[int], per_attempt: Sequence[int]) -> int:
    head = _UNBOUNDED
    for have, need in zip(left, per_attempt):
        if need > 0:
            head = min(head, trunc_div(have, need))  # a quota may already be negative
    return head


def _place_mono(
    host: _Host,
    quotas: _Quotas,
    request: _Request,
    bound: int,
    keep: int,
    result: _Pass,
) -> None:
    """Each unused volume (in list order) that holds the whole group hosts one workload's monopoly group."""
    if not request.mono:
        result.mono_count = bound
        result.mono_placeholders = True
        return
    short_of_quota = 0
    for device in host.unused:
        free = host.free[device]
        shares = _mono_on(host, quotas, request, device, free, split=result.mono_count < keep)
        if shares is None:
            short_of_quota += free >= request.mono_size
            continue
        if result.mono_count < keep:
            result.mono.append((device, shares))
        result.mono_bytes[device] = free
        result.mono_count += 1
    if result.why and result.mono_count < bound:
        result.mono_stop = _mono_short(host, request, result.mono_count, short_of_quota)


def _mono_on(
    host: _Host,
    quotas: _Quotas,
    request: _Request,
    device: str,
    free: int,
    split: bool,
) -> list[int] | None:
    """Give the monopoly group all ``free`` bytes of ``device``; ``None`` when it does not fit."""
    # Validation keeps monopoly sizes positive; a zero total would make the split meaningless.
    if free < request.mono_size or request.mono_size <= 0:
        return None
    index = host.disk_at(device)
    if not request.mono_quota.fits(_quota_of(quotas, index)):
        return None
    shares = _split(request.mono, request.mono_size, free) if split else []
    if request.mono_needs_iops:
        assert index is not None  # a quota-less path never fits a group that needs IOPS
        _charge(quotas[host.first_disk_of(host.disks[index].device)], request.mono_quota)
    return shares


def _split(mono: Sequence[VolumeBinding], total: int, free: int) -> list[int]:
    """Proportional shares of ``free``, computed in doubles exactly as the reference does; the rounding
    remainder goes to the first (smallest) binding. 100GiB + 200GiB of 1TiB -> 366503875926 + 733007751850."""
    shares = [int(float(binding.size) / float(total) * float(free)) for binding in mono]
    shares[0] += free - sum(shares)
    return shares


# ---------------------------------------------------------------------------------------------------------
# Why a pass stopped, in words (``explain`` only: a count or a plan never builds these)


def binding_text(binding: VolumeBinding) -> str:
    """A binding as an operator writes it: ``AUTO:/data:rw:200G``, the quota only when it has one."""
    head = f"{binding.source}:{binding.destination}:{binding.flags}:{size_text(binding.size)}"
    return f"{head}:{binding.quota.text()}" if any(binding.quota) else head


def size_text(size: int) -> str:
    """Bytes in the largest binary unit that holds them whole (``120G``), else to a tenth (``1.5T``)."""
    for unit, scale in (("P", 1 << 50), ("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if abs(size) >= scale:
            return f"{size // scale}{unit}" if size % scale == 0 else f"{size / scale:.1f}{unit}"
    return f"{size}B" if size else "0"


def _no_volume(
    host: _Host, request: _Request, binding: VolumeBinding, free: Mapping[str, int], quotas: _Quotas, count: int
) -> Limit:
    """A normal binding found no used volume: none with the room, or none whose disk has the quota.

    Unused volumes left over are too small for it, unless monopoly bindings keep them: then only the
    used ones are the binding's to take.
    """
    pool = host.used if request.mono else (*host.used, *host.unused)
    left = {device: free.get(device, host.free[device]) for device in pool}
    after = f" after {count}" if count else ""
    roomy = [device for device in host.used if left[device] >= binding.size]
    if not roomy:
        if not left:
            why = "the unused volumes are kept for the monopoly bindings" if host.unused else "the node has no volumes"
            return Limit("volume space", f"volume {binding_text(binding)}: {why}")
        largest = max(left, key=lambda device: (left[device], device))
        return Limit(
            "volume space",
            f"volume {binding_text(binding)}:{after} largest free volume {largest} has {size_text(left[largest])}",
        )
    best = min(roomy, key=lambda device: (left[device], device))  # the best fit, had its disk the quota
    return _no_quota(host, binding, host.disk_at(best), binding.quota, quotas, count, best)


def _no_quota(
    host: _Host,
    binding: VolumeBinding,
    index: int | None,
    quota: Sequence[int],
    quotas: _Quotas,
    count: int,
    path: str = "",
) -> Limit:
    """``binding`` (``quota`` of it) did not fit the quota left on disk ``index`` after ``count`` workloads."""
    where = path or binding.source
    if index is None:
        return Limit("disk quota", f"disk quota for {binding_text(binding)}: no disk holds {where}")
    left = quotas[index]
    field = next((t for t in range(4) if quota[t] > left[t]), 0)
    start = host.quotas[index][field]
    # What one workload draws there: the last attempt's charges so far plus this binding's, spread evenly.
    per, attempts = start - left[field] + quota[field], count + 1
    if per % attempts == 0:
        return _disk_words(host, index, field, start, per // attempts)
    return _disk_words(host, index, field, start, quota[field], f", {left[field]} left after {count}")


def _first_mount_short(host: _Host, request: _Request, quotas: _Quotas) -> Limit:
    """The mount that stops the first attempt of a mount-only request (``quotas`` as the pass began)."""
    quotas = [list(left) for left in quotas]
    for mount in request.iops_mounts:
        index = host.disk_at(mount.source)
        if not mount.quota.fits(_quota_of(quotas, index)):
            return _no_quota(host, mount, index, mount.quota, quotas, 0)
        if index is not None:
            _charge(quotas[index], mount.quota)
    return Limit("disk quota", "disk quota: the mounts do not fit")


def _mount_headroom(
    host: _Host, request: _Request, start: _Quotas, per_attempt: Mapping[int, Sequence[int]], count: int
) -> Limit:
    """The disk and quota whose headroom set a mount-only request's ``count``."""
    for index, total in per_attempt.items():
        for field in range(4):
            if total[field] > 0 and 1 + _headroom([start[index][field] - total[field]], [total[field]]) == count:
                return _disk_words(host, index, field, start[index][field], total[field])
    return Limit("disk quota", f"disk quota: room for {count}")


def _disk_words(host: _Host, index: int, field: int, left: int, per: int, tail: str = "") -> Limit:
    disk = host.disks[index]
    have = next((d.quota[field] for d in host.capacity_disks if d.device == disk.device), None)
    of = "" if have is None else f" of {have}"
    name = Quota.FIELDS[field]
    return Limit("disk quota", f"disk {disk.device} {name}: {left}{of} left, {per} per workload{tail}")


def _mono_short(host: _Host, request: _Request, count: int, short_of_quota: int) -> Limit:
    names = ", ".join(binding_text(binding) for binding in request.mono)
    held, unused = size_text(request.mono_size), len(host.unused)
    text = f"monopoly volume {names}: {count} of {unused} unused volumes hold {held} (one workload each)"
    if short_of_quota:
        text += f", {short_of_quota} more lack the disk quota"
    return Limit("unused volumes", text)


# ---------------------------------------------------------------------------------------------------------
# Result assembly (spec §3.6, §3.8)


def _plans(host: _Host, bindings: Sequence[VolumeBinding], bound: int) -> list[Placement]:
    if not need_schedule(bindings):
        return [(VolumePlan(), []) for _ in range(bound)]
    request = _Request(bindings)
    if request.places_volumes and not host.free:
        return []
    result = _schedule(host, request, bound, keep=bound)
    return _Assembly(host, request, result).placements(min(result.normal_count, result.mono_count, bound))


class _Assembly:
    """Builds the returned plans from a pass's records: plan i pairs the i-th normal placement with the
    i-th monopoly volume and the unlimited target."""

    def __init__(self, host: _Host, request: _Request, result: _Pass) -> None:
        self.host, self.request, self.result = host, request, result
        self._disk_plans: dict[tuple[tuple[str, ...], str | None], list[Disk]] = {}

    def placements(self, count: int) -> list[Placement]:
        request, result = self.request, self.result
        normal = request.normal
        unlimited: list[tuple[VolumeBinding, str]] = []
        if request.unlimited and count:
            target = self._unlimited_target()
            unlimited = [(binding, target) for binding in request.unlimited]
        placements: list[Placement] = []
        for i in range(count):
            devices = result.normal_devices[i] if result.normal_devices is not None else ()
            mono = None if result.mono_placeholders else result.mono[i]
            normal_entries = [(binding, {device: binding.size}) for binding, device in zip(normal, devices)]
            mono_entries = []
            if mono is not None:
                mono_entries = [(binding, {mono[0]: share}) for binding, share in zip(request.mono, mono[1])]
            unlimited_entries = [(binding, {target: binding.size}) for binding, target in unlimited]
            if request.distinct_destinations:
                plan = VolumePlan([*normal_entries, *mono_entries, *unlimited_entries])
            else:
                plan = VolumePlan(normal_entries).merged(VolumePlan(mono_entries))
                plan = plan.merged(VolumePlan(unlimited_entries))
            disks = self._disk_plan(devices, None if mono is None else mono[0])
            placements.append((plan, [disk.copy() for disk in disks]))
        return placements

    def _unlimited_target(self) -> str:
        """The volume with the most room once every plan of the last pass is taken (first on ties, in
        used-then-unused order); all unlimited bindings of all plans go there, charged nothing."""
        host, result = self.host, self.result
        target, most = "", None
        for device in (*host.used, *host.unused):
            left = host.free[device] - result.normal_bytes.get(device, 0) - result.mono_bytes.get(device, 0)
            if most is None or left > most:
                target, most = device, left
        return target

    def _disk_plan(self, devices: tuple[str, ...], mono_device: str | None) -> list[Disk]:
        # A plan's disk charges depend only on where its bindings went, so equal placements share one.
        key = (devices, mono_device)
        if key not in self._disk_plans:
            self._disk_plans[key] = self._build_disk_plan(devices, mono_device)
        return self._disk_plans[key]

    def _build_disk_plan(self, devices: tuple[str, ...], mono_device: str | None) -> list[Disk]:
        host, request = self.host, self.request
        if self.result.mount_only_disks is not None:
            disks = list(self.result.mount_only_disks)
        else:
            disks = []
            for binding, device in zip(request.normal, devices):
                index = host.disk_at(device)
                if binding.require_iops and index is not None:
                    disks = disks_add(disks, [host.stamp(index, binding.quota)])
            for mount in request.iops_mounts:
                index = host.disk_at(mount.source)
                if index is not None:
                    disks = disks_add(disks, [host.stamp(index, mount.quota)])
        if mono_device is not None and request.mono_needs_iops:
            index = host.disk_at(mono_device)
            if index is not None:
                disks = disks_add(disks, [host.stamp(index, request.mono_quota)])
        return disks


# ---------------------------------------------------------------------------------------------------------
# Realloc (spec §4)


def _give_back(host: _Host, old_plan: VolumePlan, old_bindings: Sequence[VolumeBinding]) -> None:
    """Return the workload's current holdings to the node, so that only what changes has to fit."""
    for mount in classify_bindings(old_bindings).mount:
        if mount.require_iops:
            _refund(host, mount.source, mount.quota, f"no disk for the old mount binding {mount}")
    for binding, volumes in old_plan:
        device, size = first_volume(volumes)
        if device not in host.free:
            raise InvalidVolume(f"volume {device!r} of the old plan is not on the node")
        host.free[device] += size
        if binding.require_iops:
            _refund(host, device, binding.quota, f"no disk for the old plan's volume {device}")


def _refund(host: _Host, path: str, quota: Quota, problem: str) -> None:
    index = host.disk_at(path)
    if index is None or host.disks[index].device == "":
        raise InvalidVolume(problem)
    _refill(host.quotas[index], quota)


class _AffinityPlanner:
    """Keeps bindings the workload already has (same source, destination and flags) on their devices."""

    def __init__(self, host: _Host, old_plan: VolumePlan) -> None:
        self.host, self.old_plan = host, old_plan
        self.plan = VolumePlan()
        self.disks: list[Disk] = []
        self.reschedule: list[VolumeBinding] = []

    def _old_device(self, binding: VolumeBinding) -> str | None:
        for old, volumes in self.old_plan:
            if old.key == binding.key:
                return first_volume(volumes)[0]
        return None

    def keep_in_place(self, bindings: Sequence[VolumeBinding]) -> None:
        """Normal and unlimited bindings: stay (charged their full size and quota) or move."""
        host = self.host
        for binding in bindings:
            device = self._old_device(binding)
            if device is None:
                self.reschedule.append(binding)
                continue
            if binding.size > host.free[device]:
                raise InsufficientResource(f"no space to expand {binding.destination} on {device}")
            host.free[device] -= binding.size
            self.plan = self.plan.merged(VolumePlan([(binding, {device: binding.size})]))
            if not binding.require_iops:
                continue
            index = host.disk_at(device)
            if not binding.quota.fits(_quota_of(host.quotas, index)):
                raise InsufficientResource(f"no IOPS quota to expand {binding.destination} on {device}")
            assert index is not None  # a quota-less path never fits a binding that needs IOPS
            _charge(host.quotas[index], binding.quota)
            self.disks = disks_add(self.disks, [host.stamp(index, binding.quota)])

    def keep_mono_group(self, mono: Sequence[VolumeBinding]) -> None:
        """If any monopoly binding is kept, the whole group is re-split over its old device."""
        devices = [device for device in map(self._old_device, mono) if device is not None]
        if not devices:
            self.reschedule.extend(mono)
            return
        request = _Request(mono)
        held = sum(first_volume(volumes)[1] for old, volumes in self.old_plan if old.monopoly)
        if held < request.mono_size:
            raise InsufficientResource(f"the monopoly group needs {request.mono_size} bytes, holds {held}")
        device, host = devices[0], self.host
        free = host.free[device]
        shares = _mono_on(host, host.quotas, request, device, free, split=True)
        if shares is None:
            raise InsufficientResource(f"the monopoly group does not fit on {device}")
        host.free[device] = 0
        group = VolumePlan([(binding, {device: share}) for binding, share in zip(request.mono, shares)])
        self.plan = self.plan.merged(group)
        index = host.disk_at(device)
        if request.mono_needs_iops and index is not None:
            self.disks = disks_add(self.disks, [host.stamp(index, request.mono_quota)])
