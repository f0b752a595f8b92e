"""What calculate-realloc makes of the scheduler on one node (spec storage-scheduler.md §6.5): the engine params,
delta resource and new workload resource of a resize. Pure: the verb reads the node and the request, and core
applies the result. Apart from ``workloads`` so that a deploy never loads it."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.storage.binding import need_schedule
from resource_extend.storage.plan import apply_plan
from resource_extend.storage.scheduler.workloads import sides
from resource_extend.storage.workload import (
    EngineParams,
    WorkloadResource,
    delta_resource,
    disks_limit,
    engine_volumes,
    iops_options,
    plan_limit,
    volume_changed,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.storage.disk import Disk
    from resource_extend.storage.record import StorageRecord
    from resource_extend.storage.workload_request import WorkloadRequest


def realloc(
    record: StorageRecord, request: WorkloadRequest, origin: WorkloadResource
) -> tuple[EngineParams, WorkloadResource, WorkloadResource]:
    """Engine params, delta resource and new workload resource of a resize (spec §6.5).

    ``request`` is the parsed, not yet validated request; ``origin`` what the workload holds now.
    """
    # Whether to place again is decided by the request alone, before it is merged with the holdings.
    reschedule = need_schedule(request.volumes_request)
    merged = request.realloc_merge(origin).validated(fold=False)
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
    limit_plan = plan_limit(merged.volumes_request, merged.volumes_limit, plan)
    limit_disks = disks_limit(merged.volumes_limit, limit_plan, capacity.disks or [])
    applied = apply_plan(merged.volumes_limit, plan)
    engine = EngineParams(
        engine_volumes(applied),
        volume_changed(applied, origin),
        merged.storage_limit,
        iops_options(limit_disks),
    )
    target = WorkloadResource(
        merged.volumes_request,
        merged.volumes_limit,
        plan,
        limit_plan,
        merged.storage_request,
        merged.storage_limit,
        disks_request,
        limit_disks,
    )
    return engine, delta_resource(origin, target), target
