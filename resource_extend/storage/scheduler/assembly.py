"""Result assembly (spec §3.6, §3.8): the returned plans, built from the last pass's records."""

from __future__ import annotations

from resource_extend.storage.binding import need_schedule
from resource_extend.storage.disk import Disk, disks_add
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.scheduler.classes import ClassifiedRequest
from resource_extend.storage.scheduler.passes import schedule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.scheduler.host import Host
    from resource_extend.storage.scheduler.outcome import Pass

# One returned placement: the volume plan and the disk quotas it charges (the workload's disks_request).
Placement = tuple[VolumePlan, list[Disk]]


def plans(host: Host, bindings: Sequence[VolumeBinding], bound: int) -> list[Placement]:
    if not need_schedule(bindings):
        return [(VolumePlan(), []) for _ in range(bound)]
    request = ClassifiedRequest(bindings)
    if request.places_volumes and not host.free:
        return []
    result = schedule(host, request, bound, keep=bound)
    return Assembly(host, request, result).placements(min(result.normal_count, result.mono_count, bound))


class Assembly:
    """Builds the returned plans from a pass's records: plan i pairs the i-th normal placement with the
    i-th monopoly volume and the unlimited target."""

    def __init__(self, host: Host, request: ClassifiedRequest, result: Pass) -> None:
        self.host, self.request, self.result = host, request, result
        self._disk_plans: dict[tuple[tuple[int | None, ...], int | None], list[Disk]] = {}

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
            # Each placement its own disks, sharing the node's mount lists (read-only, as the keys): a copy of
            # each list per workload grew with workloads times mounts (10,000 x 5,000 mounts: 400 MB).
            placements.append((plan, [Disk.holding(disk.device, disk.mounts, disk.quota) for disk in disks]))
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
        # A plan's disk charges depend only on the disks under the volumes its bindings went to, so placements
        # on the same disks share one (monopoly groups on 10,000 volumes of two disks: two, not 10,000).
        disk_at = self.host.disk_at
        key = (tuple([disk_at(device) for device in devices]), None if mono_device is None else disk_at(mono_device))
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
