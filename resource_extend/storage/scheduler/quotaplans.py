"""A pass's enumeration of normal plans for a request that charges disk quotas (spec §3.3): best fit,
attempt after attempt (``place_normal``), and the mount-only case (``mount_only``).

Apart from enumeration.py, whose ``place_sizes`` serves the requests of sizes alone (the common deploy): a
calculate call imports this module only when its request holds IOPS or bandwidth quotas, and so does not
unmarshal ~15 KB of code and a class otherwise.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from resource_extend.storage.disk import ZERO
from resource_extend.storage.scheduler.enumeration import last_true, settle
from resource_extend.storage.scheduler.host import UNBOUNDED, charge, headroom, quota_of, refill

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from resource_extend.storage.disk import Disk, Quota
    from resource_extend.storage.scheduler.classes import ClassifiedRequest
    from resource_extend.storage.scheduler.host import Host, Quotas
    from resource_extend.storage.scheduler.outcome import Pass


def place_normal(host: Host, quotas: Quotas, request: ClassifiedRequest, normal_bound: int, result: Pass) -> None:
    """Best fit: each binding goes to the used volume with the least free space that holds it and whose
    disk has the quota; attempts repeat until one fails (its partial charges stay) or the bound.

    Attempts are not simulated one by one: after one attempt, ``Pattern.repeats`` works out in closed form for
    how many more the very same choices are certain (every comparison the choices rest on is linear in
    the number of attempts), and those are charged at once. Only an attempt after which some comparison
    may flip is simulated, so the cost follows the number of changes of pattern, not of placements.
    """
    used, keep = host.used, result.keep
    free = {device: host.free[device] for device in used}
    disk_of = {device: host.disk_at(device) for device in used}
    specs = [(binding.size, binding.quota) for binding in request.normal]
    mounts = [(host.disk_at(mount.source), mount.quota) for mount in request.iops_mounts]
    # Negative sizes or quotas would break the monotonicity ``Pattern.repeats`` relies on: simulate those plainly.
    may_jump = all(size >= 0 and min(quota) >= 0 for size, quota in specs) and all(
        min(quota) >= 0 for _, quota in mounts
    )
    # The used volumes by disk, each list in (free, name) order: the best fit for a binding is the first volume
    # holding it in one of the lists whose disk has the quota, so a binding costs a binary search per disk,
    # not a look at every volume (spec §3.3's choice, the least (free, name) that fits, unchanged).
    by_disk: dict[int | None, list[tuple[int, str]]] = {}
    for device in used:
        by_disk.setdefault(disk_of[device], []).append((free[device], device))
    for order in by_disk.values():
        order.sort()
    kept: list[tuple[str, ...]] = []
    placed: list[str] = []
    count, failed = 0, False
    while count < normal_bound:
        placed = []
        for size, quota in specs:
            best: str | None = None
            best_free = 0
            for index, order in by_disk.items():
                at = bisect_left(order, (size,))
                if at < len(order) and quota.fits(ZERO if index is None else quotas[index]):
                    left, device = order[at]
                    if best is None or left < best_free or (left == best_free and device < best):
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
            _move(by_disk[index], best, best_free, best_free - size)
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
            pattern = Pattern(placed, specs, mounts, disk_of)
            before = {device: free[device] for device in pattern.sizes}
            times = pattern.take(free, quotas, normal_bound - count)
            for device, had in before.items():
                if free[device] != had:
                    _move(by_disk[disk_of[device]], device, had, free[device])
        if count < keep:
            kept.extend([tuple(placed)] * min(times, keep - count))
        count += times

    settle(host, result, count, kept, free, zip(placed, (size for size, _ in specs)) if failed else ())


def _move(order: list[tuple[int, str]], device: str, had: int, has: int) -> None:
    """``device``'s entry in its disk's (free, name) list, from ``had`` free bytes to ``has``."""
    del order[bisect_left(order, (had, device))]
    insort(order, (has, device))


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
