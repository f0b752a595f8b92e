"""Why a pass stopped, in words: for ``explain`` only (a count or a plan never builds these)."""

from __future__ import annotations

from resource_extend.capacity import Limit
from resource_extend.storage.disk import Quota
from resource_extend.storage.scheduler.host import charge, headroom, quota_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.scheduler.classes import ClassifiedRequest
    from resource_extend.storage.scheduler.host import Host, Quotas


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


def no_volume(
    host: Host,
    request: ClassifiedRequest,
    binding: VolumeBinding,
    free: Mapping[str, int],
    quotas: Quotas,
    count: int,
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
    return no_quota(host, binding, host.disk_at(best), binding.quota, quotas, count, best)


def no_quota(
    host: Host,
    binding: VolumeBinding,
    index: int | None,
    quota: Sequence[int],
    quotas: Quotas,
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
    return _disk_words(host, index, field, start, quota[field], f", {_rate(field, left[field])} left after {count}")


def first_mount_short(host: Host, request: ClassifiedRequest, quotas: Quotas) -> Limit:
    """The mount that stops the first attempt of a mount-only request (``quotas`` as the pass began)."""
    quotas = [list(left) for left in quotas]
    for mount in request.iops_mounts:
        index = host.disk_at(mount.source)
        if not mount.quota.fits(quota_of(quotas, index)):
            return no_quota(host, mount, index, mount.quota, quotas, 0)
        if index is not None:
            charge(quotas[index], mount.quota)
    return Limit("disk quota", "disk quota: the mounts do not fit")


def mount_headroom(host: Host, start: Quotas, per_attempt: Mapping[int, Sequence[int]], count: int) -> Limit:
    """The disk and quota whose headroom set a mount-only request's ``count``."""
    for index, total in per_attempt.items():
        for field in range(4):
            if total[field] > 0 and 1 + headroom([start[index][field] - total[field]], [total[field]]) == count:
                return _disk_words(host, index, field, start[index][field], total[field])
    return Limit("disk quota", f"disk quota: room for {count}")


def _disk_words(host: Host, index: int, field: int, left: int, per: int, tail: str = "") -> Limit:
    disk = host.disks[index]
    have = next((d.quota[field] for d in host.capacity_disks if d.device == disk.device), None)
    of = "" if have is None else f" of {_rate(field, have)}"
    name = Quota.FIELDS[field]
    return Limit(
        "disk quota",
        f"disk {disk.device} {name}: {_rate(field, left)}{of} left, {_rate(field, per)} per workload{tail}",
    )


def _rate(field: int, value: int) -> str:
    """IOPS as counts; bytes per second in the units the operator wrote them in (``300G``), not raw bytes."""
    return size_text(value) if Quota.FIELDS[field].endswith("bps") else str(value)


def mono_short(host: Host, request: ClassifiedRequest, count: int, short_of_quota: int) -> Limit:
    names = ", ".join(binding_text(binding) for binding in request.mono)
    held, unused = size_text(request.mono_size), len(host.unused)
    text = f"monopoly volume {names}: {count} of {unused} unused volumes hold {held} (one workload each)"
    if short_of_quota:
        text += f", {short_of_quota} more lack the disk quota"
    return Limit("unused volumes", text)
