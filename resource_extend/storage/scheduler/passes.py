"""A pass (spec §3.3) and the promotion loop (spec §3.4-3.5): normal plans on the used volumes, then
monopoly groups on the unused ones, promoting unused volumes while monopoly plans outnumber normal ones."""

from __future__ import annotations

from resource_extend.storage.scheduler.enumeration import place_sizes
from resource_extend.storage.scheduler.host import UNBOUNDED, charge, quota_of
from resource_extend.storage.scheduler.outcome import Pass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.scheduler.classes import ClassifiedRequest
    from resource_extend.storage.scheduler.host import Host, Quotas


def schedule(host: Host, request: ClassifiedRequest, bound: int, keep: int, why: bool = False) -> Pass:
    """Run passes, promoting unused volumes while monopoly plans outnumber normal ones; the last pass wins.

    ``keep`` is how many plans of each pass to record (0 for a count).
    """
    normal_bound = request.normal_bound(bound, len(host.unused))
    skip_futile_passes(host, request, bound)
    result = run_pass(host, request, bound, normal_bound, keep, why)
    while result.mono_count > result.normal_count and result.normal_count < bound:
        # One volume at a time: normal capacity is not monotone in the number of promoted volumes
        # (they share disk quota), so a search over that number would pick other plans.
        if not request.normal or not host.promote(request.normal[0].size):
            break
        skip_futile_passes(host, request, bound)
        result = run_pass(host, request, bound, normal_bound, keep, why)
    return result


def skip_futile_passes(host: Host, request: ClassifiedRequest, bound: int) -> None:
    """Promote without running the passes whose only outcome would be "promote the next volume".

    Without monopoly bindings a pass counts ``bound`` placeholder monopoly plans, so the loop goes on
    while the normal count stays under ``bound``; the used volumes' free space caps that count, and so
    does the disks' quota (``quota_cap``), which promotion never adds to. When a cap is under ``bound``
    and another volume can be promoted, the pass's result is known and nothing of it is kept (the plans
    taken are the last pass's). On a node of many empty volumes this turns one pass per volume into one
    pass; on a node whose quota runs out first (or that has no disk, asked for IOPS), every volume that can
    be is promoted at once.
    """
    per_plan = request.normal_size_per_plan
    if request.mono or not request.normal or per_plan <= 0:
        return
    free, used, unused = host.free, host.used, host.unused
    room = sum(max(free[device], 0) for device in used)
    if quota_cap(host, request) < bound:
        bound = UNBOUNDED  # no pass reaches ``bound``: promote all
    if bound != UNBOUNDED and room // per_plan >= bound:
        return
    min_size = request.normal[0].size
    index = host.promotable(min_size)
    if index is None:
        return
    frees = [free[device] for device in unused]
    if max(frees[:index], default=min_size - 1) < min_size <= min(frees[index:]):
        # Volumes too small for ``min_size``, then only volumes holding it (a fresh host's unused list,
        # in (free, name) order, always is): ``promotable`` finds the same place after each promotion,
        # so the volumes promoted are the next ones in the list from there.
        end = index
        while end < len(frees) and (bound == UNBOUNDED or room // per_plan < bound):
            room += max(frees[end], 0)
            end += 1
        used += unused[index:end]
        del unused[index:end]
        return
    while bound == UNBOUNDED or room // per_plan < bound:  # after a realloc hand-back: one at a time
        device = unused.pop(index)
        used.append(device)
        room += max(free[device], 0)
        found = host.promotable(min_size)
        if found is None:
            return
        index = found


def quota_cap(host: Host, request: ClassifiedRequest) -> int:
    """At most how many normal plans the disks' quota holds (``UNBOUNDED`` when the bindings draw none).

    Each plan charges every normal binding's quota to the disk under its volume, and a charge needs the
    disk to hold it (``Quota.fits``), so each plan takes the bindings' summed quota out of the disks' positive
    quota left, in each of the four; mounts only take more.
    """
    need = [0, 0, 0, 0]
    for binding in request.normal:
        charge(need, [-value for value in binding.quota])
    cap = UNBOUNDED
    for t, wanted in enumerate(need):
        if wanted > 0:
            cap = min(cap, sum(max(left[t], 0) for left in host.quotas) // wanted)
    return cap


def run_pass(host: Host, request: ClassifiedRequest, bound: int, normal_bound: int, keep: int, why: bool) -> Pass:
    # Scratch state: normal placement only changes used volumes, monopoly placement only unused ones.
    # A request that charges no quota in a pass (``ClassifiedRequest.charges_nothing``) reads the host's.
    quotas = host.quotas if request.charges_nothing else [list(quota) for quota in host.quotas]
    result = Pass(why, keep)
    if request.normal:
        if request.sizes_only:
            place_sizes(host, quotas, request, normal_bound, result)
        else:
            from resource_extend.storage.scheduler.quotaplans import place_normal  # a request with quotas only

            place_normal(host, quotas, request, normal_bound, result)
    elif request.iops_mounts:
        from resource_extend.storage.scheduler.quotaplans import mount_only

        result.normal_count, result.mount_only_disks = mount_only(host, quotas, request, normal_bound, result)
    else:
        result.normal_count = bound
    place_mono(host, quotas, request, bound, result)
    return result


def place_mono(host: Host, quotas: Quotas, request: ClassifiedRequest, bound: int, result: Pass) -> None:
    """Each unused volume (in list order) that holds the whole group hosts one workload's monopoly group."""
    if not request.mono:
        result.mono_count = bound
        result.mono_placeholders = True
        return
    short_of_quota = 0
    keep = result.keep
    for device in host.unused:
        free = host.free[device]
        shares = mono_on(host, quotas, request, device, free, split=result.mono_count < keep)
        if shares is None:
            short_of_quota += free >= request.mono_size
            continue
        if result.mono_count < keep:
            result.mono.append((device, shares))
        result.mono_bytes[device] = free
        result.mono_count += 1
    if result.why and result.mono_count < bound:
        from resource_extend.storage.scheduler.limits import mono_short  # explain's words: only why it stopped

        result.mono_stop = mono_short(host, request, result.mono_count, short_of_quota)


def mono_on(
    host: Host,
    quotas: Quotas,
    request: ClassifiedRequest,
    device: str,
    free: int,
    split: bool,
) -> list[int] | None:
    """Give the monopoly group all ``free`` bytes of ``device``; ``None`` when it does not fit."""
    # Validation keeps monopoly sizes positive; a zero total would make the split meaningless.
    if free < request.mono_size or request.mono_size <= 0:
        return None
    index = host.disk_at(device)
    if not request.mono_quota.fits(quota_of(quotas, index)):
        return None
    shares = _split(request.mono, request.mono_size, free) if split else []
    if request.mono_needs_iops:
        assert index is not None  # a quota-less path never fits a group that needs IOPS
        charge(quotas[host.first_disk_of(host.disks[index].device)], request.mono_quota)
    return shares


def _split(mono: Sequence[VolumeBinding], total: int, free: int) -> list[int]:
    """Proportional shares of ``free``, computed in doubles exactly as the reference does; the rounding
    remainder goes to the first (smallest) binding. 100GiB + 200GiB of 1TiB -> 366503875926 + 733007751850."""
    shares = [int(float(binding.size) / float(total) * float(free)) for binding in mono]
    shares[0] += free - sum(shares)
    return shares
