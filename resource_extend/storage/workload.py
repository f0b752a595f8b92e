"""What a workload holds on a node (the workload resource core passes back) and what its engine is told.

Also the pieces derived from a placement: the limit-side plan and the disk quotas the limits charge (the
difference between two placements that realloc reports is scheduler/resize.py's).
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.storage.binding import VolumeBinding, bindings_to_json, parse_bindings
from resource_extend.storage.disk import (
    Disk,
    DiskIndex,
    disks_add,
    disks_from_json,
    disks_to_json,
)
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.volume import first_volume
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


class WorkloadResource(Fields):
    __slots__ = (
        "disks_limit",
        "disks_request",
        "storage_limit",
        "storage_request",
        "volume_plan_limit",
        "volume_plan_request",
        "volumes_limit",
        "volumes_request",
    )

    def __init__(
        self,
        volumes_request: list[VolumeBinding] | None = None,
        volumes_limit: list[VolumeBinding] | None = None,
        volume_plan_request: VolumePlan | None = None,
        volume_plan_limit: VolumePlan | None = None,
        storage_request: int = 0,
        storage_limit: int = 0,
        disks_request: list[Disk] | None = None,
        disks_limit: list[Disk] | None = None,
    ) -> None:
        self.volumes_request: list[VolumeBinding] = [] if volumes_request is None else volumes_request
        self.volumes_limit: list[VolumeBinding] = [] if volumes_limit is None else volumes_limit
        self.volume_plan_request = VolumePlan() if volume_plan_request is None else volume_plan_request
        self.volume_plan_limit = VolumePlan() if volume_plan_limit is None else volume_plan_limit
        self.storage_request = storage_request
        self.storage_limit = storage_limit
        # None is a list the resource never had (JSON null), distinct from an empty one.
        self.disks_request = disks_request
        self.disks_limit = disks_limit

    @classmethod
    def from_json(cls, value: Any) -> WorkloadResource:
        """Decode what core passes back; any bad binding string, in a list or a plan key, fails."""
        where = "workload resource"
        source = decoding.object_or_none(value, where) or {}
        return cls(
            _bindings(source, "volumes_request", where),
            _bindings(source, "volumes_limit", where),
            VolumePlan.from_json(source.get("volume_plan_request"), f"{where}.volume_plan_request"),
            VolumePlan.from_json(source.get("volume_plan_limit"), f"{where}.volume_plan_limit"),
            decoding.int_field(source, "storage_request", where),
            decoding.int_field(source, "storage_limit", where),
            disks_from_json(decoding.list_field(source, "disks_request", where)),
            disks_from_json(decoding.list_field(source, "disks_limit", where)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "volumes_request": bindings_to_json(self.volumes_request),
            "volumes_limit": bindings_to_json(self.volumes_limit),
            "volume_plan_request": self.volume_plan_request.to_json(),
            "volume_plan_limit": self.volume_plan_limit.to_json(),
            "storage_request": self.storage_request,
            "storage_limit": self.storage_limit,
            "disks_request": disks_to_json(self.disks_request),
            "disks_limit": disks_to_json(self.disks_limit),
        }


class EngineParams(Fields):
    __slots__ = ("iops_options", "storage", "volume_changed", "volumes")

    def __init__(
        self,
        volumes: list[str] | None = None,
        volume_changed: bool = False,
        storage: int = 0,
        iops_options: dict[str, str] | None = None,
    ) -> None:
        # None (JSON null) when the workload has no bindings at all, as the reference emits.
        self.volumes = volumes
        self.volume_changed = volume_changed
        self.storage = storage
        self.iops_options: dict[str, str] = {} if iops_options is None else iops_options

    def to_json(self) -> dict[str, Any]:
        return {
            "volumes": None if self.volumes is None else list(self.volumes),
            "volume_changed": self.volume_changed,
            "storage": self.storage,
            "iops_options": dict(sorted(self.iops_options.items())),
        }


def engine_volumes(bindings: Iterable[VolumeBinding]) -> list[str] | None:
    """The engine forms of already-applied bindings; ``None`` when there are none."""
    rendered = [binding.to_string(normalize=True) for binding in bindings]
    return rendered or None


def iops_options(disks: Iterable[Disk]) -> dict[str, str]:
    return {disk.device: disk.quota.text() for disk in disks}


def plan_limit(request: Sequence[VolumeBinding], limit: Sequence[VolumeBinding], plan: VolumePlan) -> VolumePlan:
    """The request plan seen from the limits: each planned limit gets its device plus its headroom.

    ``request`` and ``limit`` are the validated (sorted, paired by index) lists.
    """
    planned = {binding.key: volumes for binding, volumes in plan}
    result = VolumePlan()
    for index, binding in enumerate(limit):
        if not binding.require_schedule:
            continue
        volumes = planned.get(binding.key)
        if volumes is not None:
            device, size = first_volume(volumes)
            result.add(binding.copy(), device, size + binding.size - request[index].size)
    return result


def disks_limit(
    limit: Iterable[VolumeBinding], limit_plan: VolumePlan, disks: Sequence[Disk] | DiskIndex
) -> list[Disk]:
    """Quotas the limits charge: a mount on the disk covering its source, a planned binding on the disk
    covering its device. Paths no disk covers charge nothing. A deploy of many workloads passes the node's
    disks indexed once (``DiskIndex``), so that no workload reads every mount of the node."""
    charges = [(b, b.source) for b in limit if b.require_iops and not b.require_schedule]
    charges += [(b, first_volume(volumes)[0]) for b, volumes in limit_plan if b.require_iops]
    if not charges:
        return []
    index = disks if isinstance(disks, DiskIndex) else DiskIndex(disks)
    result: list[Disk] = []
    for binding, path in charges:
        disk = index.find(path)
        if disk is not None:
            result = disks_add(result, [disk.stamped(binding.quota)])
    return result


def _bindings(source: dict[str, Any], key: str, where: str) -> list[VolumeBinding]:
    items = decoding.list_field(source, key, where)
    if items is None:
        return []
    try:
        return parse_bindings(decoding.str_list(items, f"{where}.{key}"))
    except PluginError as cause:
        raise PluginError(f"{where}.{key}: {cause}") from None
