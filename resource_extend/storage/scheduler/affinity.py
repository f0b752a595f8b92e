"""Realloc's placement (spec §4): bindings the workload already holds stay on their devices, the rest is
placed like a deploy of one."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.storage.binding import need_schedule
from resource_extend.storage.disk import disks_add
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.scheduler.assembly import plans
from resource_extend.storage.scheduler.classes import ClassifiedRequest, classify_bindings
from resource_extend.storage.scheduler.host import Host, charge, quota_of, refill
from resource_extend.storage.scheduler.passes import mono_on
from resource_extend.storage.volume import first_volume

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.disk import Disk, Quota
    from resource_extend.storage.record import StorageRecord
    from resource_extend.storage.scheduler.assembly import Placement


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
    host = Host(node)
    _give_back(host, old_plan, old_bindings)

    classes = classify_bindings(bindings)
    planner = _AffinityPlanner(host, old_plan)
    mount_disks = host.charge_mounts([m for m in classes.mount if m.require_iops])
    if mount_disks is None:
        raise errors.InsufficientResource("no IOPS quota left for the mount bindings")
    planner.disks = disks_add(planner.disks, mount_disks)
    planner.keep_in_place(classes.normal)
    planner.keep_mono_group(classes.mono)
    planner.keep_in_place(classes.unlimited)
    if not planner.reschedule:
        return planner.plan, planner.disks

    # The rest is placed like a deploy of one, on the node as it stands after the steps above.
    placements = plans(host, planner.reschedule, 1)
    if not placements:
        raise errors.InsufficientResource("no room for the bindings that have to move")
    plan, disks = placements[0]
    return planner.plan.merged(plan), disks_add(planner.disks, disks)


def _give_back(host: Host, old_plan: VolumePlan, old_bindings: Sequence[VolumeBinding]) -> None:
    """Return the workload's current holdings to the node, so that only what changes has to fit."""
    for mount in classify_bindings(old_bindings).mount:
        if mount.require_iops:
            _refund(host, mount.source, mount.quota, f"no disk for the old mount binding {mount}")
    for binding, volumes in old_plan:
        device, size = first_volume(volumes)
        if device not in host.free:
            raise errors.InvalidVolume(f"volume {device!r} of the old plan is not on the node")
        host.free[device] += size
        if binding.require_iops:
            _refund(host, device, binding.quota, f"no disk for the old plan's volume {device}")


def _refund(host: Host, path: str, quota: Quota, problem: str) -> None:
    index = host.disk_at(path)
    if index is None or host.disks[index].device == "":
        raise errors.InvalidVolume(problem)
    refill(host.quotas[index], quota)


class _AffinityPlanner:
    """Keeps bindings the workload already has (same source, destination and flags) on their devices."""

    def __init__(self, host: Host, old_plan: VolumePlan) -> None:
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
                raise errors.InsufficientResource(f"no space to expand {binding.destination} on {device}")
            host.free[device] -= binding.size
            self.plan = self.plan.merged(VolumePlan([(binding, {device: binding.size})]))
            if not binding.require_iops:
                continue
            index = host.disk_at(device)
            if not binding.quota.fits(quota_of(host.quotas, index)):
                raise errors.InsufficientResource(f"no IOPS quota to expand {binding.destination} on {device}")
            assert index is not None  # a quota-less path never fits a binding that needs IOPS
            charge(host.quotas[index], binding.quota)
            self.disks = disks_add(self.disks, [host.stamp(index, binding.quota)])

    def keep_mono_group(self, mono: Sequence[VolumeBinding]) -> None:
        """If any monopoly binding is kept, the whole group is re-split over its old device."""
        devices = [device for device in map(self._old_device, mono) if device is not None]
        if not devices:
            self.reschedule.extend(mono)
            return
        request = ClassifiedRequest(mono)
        held = sum(first_volume(volumes)[1] for old, volumes in self.old_plan if old.monopoly)
        if held < request.mono_size:
            raise errors.InsufficientResource(f"the monopoly group needs {request.mono_size} bytes, holds {held}")
        device, host = devices[0], self.host
        free = host.free[device]
        shares = mono_on(host, host.quotas, request, device, free, split=True)
        if shares is None:
            raise errors.InsufficientResource(f"the monopoly group does not fit on {device}")
        host.free[device] = 0
        group = VolumePlan([(binding, {device: share}) for binding, share in zip(request.mono, shares)])
        self.plan = self.plan.merged(group)
        index = host.disk_at(device)
        if request.mono_needs_iops and index is not None:
            self.disks = disks_add(self.disks, [host.stamp(index, request.mono_quota)])
