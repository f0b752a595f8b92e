"""What calculate-realloc makes of the scheduler on one node (spec storage-scheduler.md §6.5): the engine params,
delta resource and new workload resource of a resize. Pure: the verb reads the node and the request, and core
applies the result. Apart from ``workloads`` so that a deploy never loads it."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.storage.binding import VolumeBinding, need_schedule, total_size
from resource_extend.storage.disk import disks_sub
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.scheduler.workloads import placed, sides
from resource_extend.storage.volume import volumes_sub
from resource_extend.storage.workload import (
    EngineParams,
    WorkloadResource,
)
from resource_extend.storage.workload_request import WorkloadRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from resource_extend.storage.disk import Disk
    from resource_extend.storage.record import StorageRecord

# The key realloc's delta reports its per-device volume change under; core only sums the map.
DELTA_BINDING = VolumeBinding("fake-source", "fake-destination", "fake-flags", 0)


def realloc(
    record: StorageRecord, request: WorkloadRequest, origin: WorkloadResource
) -> tuple[EngineParams, WorkloadResource, WorkloadResource]:
    """Engine params, delta resource and new workload resource of a resize (spec §6.5).

    ``request`` is the parsed, not yet validated request; ``origin`` what the workload holds now.
    """
    # Whether to place again is decided by the request alone, before it is merged with the holdings.
    reschedule = need_schedule(request.volumes_request)
    merged = realloc_merge(request, origin).validated(fold=False)
    capacity, usage = sides(record)
    grow = merged.storage_request - origin.storage_request
    if grow > capacity.storage - usage.storage:
        raise errors.InsufficientResource(
            f"not enough storage, request: {grow} bytes more, available: {capacity.storage - usage.storage} bytes"
        )
    if reschedule:
        # Only a resize that places volumes again loads realloc's placement (~10 KB of code no deploy runs).
        from resource_extend.storage.scheduler.affinity import affinity_plan

        try:
            plan, disks = affinity_plan(
                record,
                merged.volumes_request,
                origin.volume_plan_request,
                origin.volumes_request,
            )
        except errors.InsufficientResource:
            raise
        except PluginError as cause:  # the reference reports every placement failure as insufficient
            raise errors.InsufficientResource(str(cause)) from None
        disks_request: list[Disk] | None = disks
    else:
        plan, disks_request = origin.volume_plan_request, origin.disks_request
    engine, target = placed(merged, plan, disks_request, capacity.disks or [], origin)
    return engine, delta_resource(origin, target), target


def realloc_merge(request: WorkloadRequest, current: WorkloadResource) -> WorkloadRequest:
    """The workload's new totals when ``request`` is applied to what it holds (validate with
    ``fold=False``: the request's binding sizes are already counted into the storages here)."""
    return WorkloadRequest(
        merge_bindings(request.volumes_request, current.volumes_request),
        merge_bindings(request.volumes_limit, current.volumes_limit),
        request.storage_request + current.storage_request + total_size(request.volumes_request),
        request.storage_limit + current.storage_limit + total_size(request.volumes_limit),
    )


def merge_bindings(new: Iterable[VolumeBinding], base: Iterable[VolumeBinding]) -> list[VolumeBinding]:
    """Sum bindings sharing a key (base first, then new); a merged negative size removes the binding."""
    merged: dict[tuple[str, str, str], VolumeBinding] = {}
    for binding in (*base, *new):
        found = merged.get(binding.key)
        if found is None:
            merged[binding.key] = binding.copy()
            continue
        found.size += binding.size
        found.quota = found.quota.plus(binding.quota)
    return [binding for binding in merged.values() if binding.size >= 0]


def delta_resource(origin: WorkloadResource, target: WorkloadResource) -> WorkloadResource:
    """What a realloc adds to the node's usage: plan bytes per device, storage and disk quotas."""
    delta_volumes = volumes_sub(target.volume_plan_request.volumes(), origin.volume_plan_request.volumes())
    return WorkloadResource(
        volume_plan_request=VolumePlan([(DELTA_BINDING.copy(), delta_volumes)]),
        storage_request=target.storage_request - origin.storage_request,
        disks_request=disks_sub(target.disks_request or (), origin.disks_request or ()),
    )
