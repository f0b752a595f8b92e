"""A pass's enumeration of normal plans (spec §3.3): best fit, attempt after attempt, and the mount-only case.

Both leave in the pass's ``Pass`` record what the later steps read: the count, the devices of the plans
kept, the bytes per device, and they charge the quota the monopoly step then sees (``quotas``, the pass's
scratch copy), the partial charges of the failed last attempt included.
"""

from __future__ import annotations

from resource_extend.storage.disk import ZERO
from resource_extend.storage.scheduler.host import UNBOUNDED, charge, headroom, quota_of, refill

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from resource_extend.storage.disk import Disk, Quota
    from resource_extend.storage.scheduler.classes import ClassifiedRequest
    from resource_extend.storage.scheduler.host import Host, Quotas
    from resource_extend.storage.scheduler.outcome import Pass


def place_normal(
    host: Host,
    quotas: Quotas,
    request: ClassifiedRequest,
    normal_bound: int,
    keep: int,
    result: Pass,
) -> None:
    """Best fit: each binding goes to the used volume with the least free space that holds it and whose
    disk has the quota; attempts repeat until one fails (its partial charges stay) or the bound.

    Attempts are not simulated one by one: after one attempt, ``Pattern.repeats`` works out in closed form for
    how many more the very same choices are certain (every comparison the choices rest on is linear in
    the number of attempts), and those are charged at once. Only an attempt after which some comparison
    may flip is simulated, so the cost follows the number of changes of pattern, not of placements.
    """
    used = host.used
    free = {device: host.free[device] for device in used}
    disk_of = {device: host.disk_at(device) for device in used}
    specs = [(binding.size, binding.quota) for binding in request.normal]
    mounts = [(host.disk_at(mount.source), mount.quota) for mount in request.iops_mounts]
    # Negative sizes or quotas would break the monotonicity ``Pattern.repeats`` relies on: simulate those plainly.
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
                    if quota.fits(ZERO if index is None else quotas[index]):
                        best, best_free = device, left
            if best is None:
                failed = True
                if result.why:
                    from resource_extend.storage.scheduler.limits import no_volume  # explain's words only

                    result.stop = no_volume(host, request, request.normal[len(placed)], free, quotas, count)
                break
            index = disk_of[best]
            if index is not None:
                charge(quotas[index], quota)
            free[best] = best_free - size
            placed.append(best)
        if failed:
            break
        for at, (index, quota) in enumerate(mounts):
            if not quota.fits(quota_of(quotas, index)):
                failed = True
                if result.why:
                    from resource_extend.storage.scheduler.limits import no_quota

                    result.stop = no_quota(host, request.iops_mounts[at], index, quota, quotas, count)
                break
            if index is not None:
                charge(quotas[index], quota)
        if failed:
            break
        times = 1
        if may_jump:
            times = Pattern(placed, specs, mounts, disk_of).take(free, quotas, normal_bound - count)
        if count < keep:
            kept.extend([tuple(placed)] * min(times, keep - count))
        count += times

    _record(host, result, count, kept, keep, free, zip(placed, (size for size, _ in specs)) if failed else ())


def place_sizes(
    host: Host,
    quotas: Quotas,
    request: ClassifiedRequest,
    normal_bound: int,
    keep: int,
    result: Pass,
) -> None:
    """``place_normal`` for a request whose normal bindings and mounts draw no quota (the common case).

    Nothing charges a disk, so whether a volume may take a binding is fixed for the pass: its disk (if
    any) must have no negative quota left, as ``Quota.fits`` demands even of a zero charge. What is left is
    best fit on bytes alone. The volumes are kept in best-fit order, (free, name), so the best fit for a
    size is the first one holding it; sizes are positive here (``ClassifiedRequest.sizes_only``) and bytes
    only go down, so a volume too small for the smallest binding never takes another and leaves the order.
    """
    sizes = request.normal_sizes
    used = host.used
    if min(map(min, quotas), default=0) < 0:
        used = [device for device in used if ZERO.fits(quota_of(quotas, host.disk_at(device)))]
    free = {device: host.free[device] for device in used}
    smallest, whole = sizes[0], request.normal_size_per_plan  # sizes ascend, as classify_bindings sorts them
    order = sorted([(left, device) for device, left in free.items() if left >= smallest])
    kept: list[tuple[str, ...]] = []
    count = 0
    placed: list[str] = []
    failed = False
    while count < normal_bound:
        # The volume that takes the smallest binding also takes every other one while it holds the whole
        # attempt: any volume ahead of it in (free, name) is too small for all of them. It does so
        # free // whole times in a row (what ``Pattern.repeats`` would find, without simulating an attempt).
        if order and order[0][0] >= whole:
            first_free, first = order[0]
            times = min(first_free // whole, normal_bound - count)
            left = free[first] = first_free - times * whole
            if left >= smallest:
                order[0] = (left, first)  # less than before: still ahead of every other volume
            else:
                del order[0]
            if count < keep:
                kept.extend([(first,) * len(sizes)] * min(times, keep - count))
            count += times
            continue
        placed = []
        for size in sizes:
            at = 0
            while at < len(order) and order[at][0] < size:
                at += 1
            if at == len(order):
                failed = True
                if result.why:
                    from resource_extend.storage.scheduler.limits import no_volume  # explain's words only

                    result.stop = no_volume(host, request, request.normal[len(placed)], free, quotas, count)
                break
            left, best = order.pop(at)
            left = free[best] = left - size
            if left >= smallest:  # it moves ahead, past the volumes it now has less than
                while at and order[at - 1] > (left, best):
                    at -= 1
                order.insert(at, (left, best))
            placed.append(best)
        if failed:
            break
        times = repeats_on_bytes(placed, sizes, free, normal_bound - count)
        if times > 1:
            for device, size in zip(placed, sizes):
                free[device] -= (times - 1) * size
            order = sorted([(free[device], device) for _, device in order if free[device] >= smallest])
        if count < keep:
            kept.extend([tuple(placed)] * min(times, keep - count))
        count += times

    _record(host, result, count, kept, keep, free, zip(placed, sizes) if failed else ())


def repeats_on_bytes(placed: Sequence[str], sizes: Sequence[int], free: Mapping[str, int], limit: int) -> int:
    """``Pattern.repeats`` for a pattern that draws no quota: how many attempts, counting the one just
    made (``placed``; ``free`` is after it), are certain to make the same choices; at most ``limit``.

    Each binding's volume must still hold it, and no other volume of the pattern holding it may become
    the better fit (volumes outside the pattern never change, and the chosen ones only shrink).
    """
    per: dict[str, int] = {}  # bytes an attempt takes from each volume of the pattern
    for device, size in zip(placed, sizes):
        per[device] = per.get(device, 0) + size
    for device, step in per.items():
        if free[device] < step:
            return 1  # the next attempt's last binding on ``device`` would not fit there (the common case)
    room = {device: free[device] + step for device, step in per.items()}  # as the attempt saw them
    times = limit
    for device, size in zip(placed, sizes):
        mine, step = room[device], per[device]
        times = min(times, last_true(mine - size, step))
        for other, other_step in per.items():
            theirs = room[other]
            if other != device and theirs >= size:
                # It lost on (free, name): it keeps losing while its room stays above the chosen one's.
                times = min(times, last_true(theirs - mine, other_step - step, strict=other < device))
        room[device] = mine - size  # what the attempt's next bindings see
    return max(times, 1)


def _record(
    host: Host,
    result: Pass,
    count: int,
    kept: list[tuple[str, ...]],
    keep: int,
    free: Mapping[str, int],
    failed_attempt: Iterable[tuple[str, int]],
) -> None:
    """Leave the enumeration's outcome in ``result``: ``count`` plans, the devices of those ``kept``, and
    the bytes of the plans per device (what left the volumes, less what the failed last attempt took).
    Only plans read those bytes (for the unlimited target), so a count (``keep`` 0) leaves them out."""
    result.normal_count = count
    result.normal_devices = kept
    if not keep:
        return
    spent = {device: host.free[device] - free.get(device, host.free[device]) for device in host.used}
    for device, size in failed_attempt:
        spent[device] -= size
    result.normal_bytes = spent


def last_true(start: int, step: int, strict: bool = False) -> int:
    """How many attempts i = 0, 1, ... keep ``start - i * step >= 0`` (``> 0`` when strict) true, given
    it holds at i = 0; ``UNBOUNDED`` when it never turns false."""
    if step <= 0:
        return UNBOUNDED
    if strict:
        return (start + step - 1) // step
    return start // step + 1


class Pattern:
    """The choices of one attempt (``placed``: a device per normal binding) and what each attempt that
    repeats them takes: bytes per device (``sizes``) and quota per disk (``charges``)."""

    __slots__ = ("charges", "disk_of", "mounts", "placed", "sizes", "specs")

    def __init__(
        self,
        placed: Sequence[str],
        specs: Sequence[tuple[int, Quota]],
        mounts: Sequence[tuple[int | None, Quota]],
        disk_of: Mapping[str, int | None],
    ) -> None:
        self.placed, self.specs, self.mounts, self.disk_of = placed, specs, mounts, disk_of
        self.sizes: dict[str, int] = {}
        self.charges: dict[int, list[int]] = {}
        for device, (size, quota) in zip(placed, specs):
            self.sizes[device] = self.sizes.get(device, 0) + size
            index = disk_of[device]
            if index is not None:
                refill(self.charges.setdefault(index, [0, 0, 0, 0]), quota)
        for index, quota in mounts:
            if index is not None:
                refill(self.charges.setdefault(index, [0, 0, 0, 0]), quota)

    def charge(self, free: dict[str, int], quotas: Quotas, times: int) -> None:
        """Take ``times`` attempts' bytes and quota at once."""
        for device, size in self.sizes.items():
            free[device] -= times * size
        for index, taken in self.charges.items():
            charge(quotas[index], [times * value for value in taken])

    def take(self, free: dict[str, int], quotas: Quotas, limit: int) -> int:
        """``repeats``, with the attempts after the one made charged at once; how many there are in all."""
        times = self.repeats(free, quotas, limit)
        if times > 1:
            self.charge(free, quotas, times - 1)
        return times

    def repeats(self, free: Mapping[str, int], quotas: Quotas, limit: int) -> int:
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
        placed, specs, mounts, disk_of = self.placed, self.specs, self.mounts, self.disk_of
        sizes, charges = self.sizes, self.charges
        start_free = {device: free[device] + size for device, size in sizes.items()}
        start_quota = {
            index: [have + per_disk[t] for t, have in enumerate(quotas[index])] for index, per_disk in charges.items()
        }
        times = limit
        before: dict[str, int] = {}  # bytes the attempt placed on each device before the current binding
        taken: dict[int, list[int]] = {}  # quota the attempt charged on each disk before the current binding
        for device, (size, quota) in zip(placed, specs):
            index = disk_of[device]
            mine = start_free[device] - before.get(device, 0)
            times = min(times, last_true(mine - size, sizes[device]))
            if index is not None:
                times = min(times, _quota_lasts(start_quota[index], taken.get(index, ZERO), quota, charges[index]))
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
                    so_far = taken.get(other_index, ZERO)
                    have = start_quota.get(other_index, quotas[other_index])
                    if not all(have[t] - so_far[t] >= quota[t] for t in range(4)):
                        continue  # its disk is short already, and quota only goes down
                # It lost on (free, name): it keeps losing while its room stays above the chosen one's.
                times = min(times, last_true(theirs - mine, sizes[other] - sizes[device], strict=other < device))
            before[device] = before.get(device, 0) + size
            if index is not None:
                refill(taken.setdefault(index, [0, 0, 0, 0]), quota)
        for index, quota in mounts:
            if index is None:
                continue
            times = min(times, _quota_lasts(start_quota[index], taken.get(index, ZERO), quota, charges[index]))
            refill(taken.setdefault(index, [0, 0, 0, 0]), quota)
        return max(times, 1)


def _quota_lasts(start: Sequence[int], so_far: Sequence[int], quota: Sequence[int], per: Sequence[int]) -> int:
    """How many attempts a disk that had ``start`` at attempt 0 still holds ``quota`` after ``so_far`` of
    the attempt's own charges, the pattern drawing ``per`` from it each attempt."""
    times = UNBOUNDED
    for t in range(4):
        times = min(times, last_true(start[t] - so_far[t] - quota[t], per[t]))
    return times


def mount_only(
    host: Host, quotas: Quotas, request: ClassifiedRequest, bound: int, result: Pass
) -> tuple[int, list[Disk]]:
    """The mount-only enumeration in closed form (the reference's): same count, same disk plan per
    attempt, same quota left over, including the partial charges of the failed attempt."""
    start = [list(left) for left in quotas] if result.why else quotas
    prototype = host.charge_mounts(request.iops_mounts, quotas)
    if prototype is None or bound < 1:
        if result.why and prototype is None:
            from resource_extend.storage.scheduler.limits import first_mount_short  # explain's words only

            result.stop = first_mount_short(host, request, start)
        return 0, []
    per_attempt: dict[int, list[int]] = {}
    for mount in request.iops_mounts:
        index = host.disk_at(mount.source)
        assert index is not None  # the first attempt succeeded, so every mount found quota
        refill(per_attempt.setdefault(index, [0, 0, 0, 0]), mount.quota)
    count = bound
    for index, total in per_attempt.items():
        count = min(count, 1 + headroom(quotas[index], total))
    if result.why and count < bound:
        from resource_extend.storage.scheduler.limits import mount_headroom

        result.stop = mount_headroom(host, start, per_attempt, count)
    for index, total in per_attempt.items():
        charge(quotas[index], [(count - 1) * value for value in total])
    if count < bound:
        host.charge_mounts(request.iops_mounts, quotas)
    return count, prototype
