"""What calculate-deploy makes of the scheduler's placements on one node (spec storage-scheduler.md §6.4): the
engine params and workload resources of a deploy, with the flat storage counted too. Pure: the verb reads the
node and the request, and core applies the result. How many workloads fit (``count``) and a realloc
(``resize``) build on it in modules of their own, which a deploy never loads."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.goarith import trunc_div
from resource_extend.storage.binding import need_schedule
from resource_extend.storage.disk import DiskIndex
from resource_extend.storage.plan import VolumePlan, apply_plan
from resource_extend.storage.record import NodeResource
from resource_extend.storage.scheduler.placement import volume_plans
from resource_extend.storage.workload import (
    EngineParams,
    WorkloadResource,
    disks_limit,
    engine_volumes,
    iops_options,
    plan_limit,
)

# The request every calculate verb reads (through Payloads.request or .change, after the call has started):
# imported here, so that the verbs' preloaded code holds it and no store call loads it.
from resource_extend.storage.workload_request import WorkloadRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.disk import Disk
    from resource_extend.storage.record import StorageRecord


def sides(record: StorageRecord) -> tuple[NodeResource, NodeResource]:
    return record.capacity or NodeResource(), record.usage or NodeResource()


def storage_room(record: StorageRecord, storage_request: int) -> int:
    """How many times ``storage_request`` (> 0) fits into the node's free flat storage."""
    capacity, usage = sides(record)
    return trunc_div(capacity.storage - usage.storage, storage_request)


def deploy(
    record: StorageRecord,
    request: WorkloadRequest,
    count: int,
    each: Callable[[WorkloadResource], None] | None = None,
) -> tuple[list[EngineParams], list[WorkloadResource]]:
    """Engine params and workload resources for ``count`` new workloads of the validated ``request``.

    Raises ``InsufficientResource`` when the storage or the placements do not fit ``count`` times. ``each``
    sees every workload resource as it is made, and may stop the deploy by raising (the verb's answer bound).
    """
    count = max(count, 0)
    if request.storage_request > 0:
        room = storage_room(record, request.storage_request)
        if room < count:
            capacity, usage = sides(record)
            raise errors.InsufficientResource(
                f"not enough storage, request: {count} x {request.storage_request} bytes, available: "
                f"{capacity.storage - usage.storage} bytes (room for {max(room, 0)}); deploy fewer workloads "
                "or ask for less storage"
            )
    capacity, usage = sides(record)
    placements: list[tuple[VolumePlan, list[Disk]]]
    if not need_schedule(request.volumes_request):
        placements = [(VolumePlan(), []) for _ in range(count)]
    else:
        placements = volume_plans(record, request.volumes_request, count)
        if len(placements) < count:
            raise errors.InsufficientResource(f"not enough volume plan, need {count}, available {len(placements)}")
    engines, resources = [], []
    index = DiskIndex(capacity.disks or [])  # once: each workload looks its limits' disks up in it
    for plan, disks in placements[:count]:
        engine, resource = placed(request, plan, disks, index, None)
        if each is not None:
            each(resource)
        engines.append(engine)
        resources.append(resource)
    return engines, resources


def placed(
    request: WorkloadRequest,
    plan: VolumePlan,
    disks: list[Disk] | None,
    capacity_disks: Sequence[Disk] | DiskIndex,
    origin: WorkloadResource | None,
) -> tuple[EngineParams, WorkloadResource]:
    """One workload on its request's volume plan: the engine's parameters and the resource it holds. Its limit
    plan follows the request plan, its disks' limits follow the limit plan, and the engine sees the limit
    bindings placed; ``origin`` is the resource a realloc started from (None for a deploy), which says
    whether the engine's volumes changed."""
    limit_plan = plan_limit(request.volumes_request, request.volumes_limit, plan)
    limit_disks = disks_limit(request.volumes_limit, limit_plan, capacity_disks)
    applied = apply_plan(request.volumes_limit, plan)
    changed = origin is not None and volume_changed(applied, origin)
    engine = EngineParams(engine_volumes(applied), changed, request.storage_limit, iops_options(limit_disks))
    resource = WorkloadResource(
        request.volumes_request,
        request.volumes_limit,
        plan,
        limit_plan,
        request.storage_request,
        request.storage_limit,
        disks,
        limit_disks,
    )
    return engine, resource


def volume_changed(applied: Sequence[VolumeBinding], origin: WorkloadResource) -> bool:
    """Whether a realloc changes which volumes the container mounts (sizes alone do not count)."""
    before = {binding.key for binding in apply_plan(origin.volumes_limit, origin.volume_plan_limit)}
    return len(applied) != len(before) or any(binding.key not in before for binding in applied)
