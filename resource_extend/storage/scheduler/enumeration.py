"""A pass's enumeration of normal plans (spec §3.3) for a request of sizes alone (``place_sizes``), and what
every enumeration shares; a request that charges disk quotas is quotaplans.py's (imported when one runs).

Each enumeration leaves in the pass's ``Pass`` record what the later steps read: the count, the devices of
the plans kept, the bytes per device, and they charge the quota the monopoly step then sees (``quotas``, the
pass's scratch copy), the partial charges of the failed last attempt included.
"""

from __future__ import annotations

from resource_extend.storage.disk import ZERO
from resource_extend.storage.scheduler.host import UNBOUNDED, quota_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from resource_extend.storage.scheduler.classes import ClassifiedRequest
    from resource_extend.storage.scheduler.host import Host, Quotas
    from resource_extend.storage.scheduler.outcome import Pass


def place_sizes(host: Host, quotas: Quotas, request: ClassifiedRequest, normal_bound: int, result: Pass) -> None:
    """``place_normal`` for a request whose normal bindings and mounts draw no quota (the common case).

    Nothing charges a disk, so whether a volume may take a binding is fixed for the pass: its disk (if
    any) must have no negative quota left, as ``Quota.fits`` demands even of a zero charge. What is left is
    best fit on bytes alone. The volumes are kept in best-fit order, (free, name), so the best fit for a
    size is the first one holding it; sizes are positive here (``ClassifiedRequest.sizes_only``) and bytes
    only go down, so a volume too small for the smallest binding never takes another and leaves the order.
    """
    sizes, keep = request.normal_sizes, result.keep
    used = host.used
    if min(map(min, quotas), default=0) < 0:
        used = [device for device in used if ZERO.fits(quota_of(quotas, host.disk_at(device)))]
    free = {device: host.free[device] for device in used}
    smallest, whole = sizes[0], request.normal_size_per_plan  # sizes ascend, as classify_bindings sorts them
    order = sorted([(left, device) for device, left in free.items() if left >= smallest])
    kept: list[tuple[str, ...]] = []
    placed: list[str] = []
    count, failed = 0, False
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

    settle(host, result, count, kept, free, zip(placed, sizes) if failed else ())


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


def settle(
    host: Host,
    result: Pass,
    count: int,
    kept: list[tuple[str, ...]],
    free: Mapping[str, int],
    failed_attempt: Iterable[tuple[str, int]],
) -> None:
    """Leave the enumeration's outcome in ``result``: ``count`` plans, the devices of those ``kept``, and
    the bytes of the plans per device (what left the volumes, less what the failed last attempt took).
    Only plans read those bytes (for the unlimited target), so a count (``keep`` 0) leaves them out."""
    result.normal_count = count
    result.normal_devices = kept
    if not result.keep:
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
