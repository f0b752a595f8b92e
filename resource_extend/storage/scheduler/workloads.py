"""What the calculate verbs make of the scheduler's placements on one node (spec storage-scheduler.md §6.3–§6.5):
how many workloads fit, with the flat storage counted too, and the engine params and workload resources
of a deploy or a realloc. Pure: the verbs read the node and the request, and core applies the result."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.capacity import Limit, ratio, trunc_div
from resource_extend.errors import PluginError
from resource_extend.storage.binding import need_schedule, total_size
from resource_extend.storage.plan import VolumePlan, apply_plan
from resource_extend.storage.record import NodeResource
from resource_extend.storage.scheduler.placement import VolumeCount, volume_plans
from resource_extend.storage.volume import volumes_total
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

# The request every calculate verb reads (through Payloads.request or .change, after the call has started):
# imported here, so that the verbs' preloaded code holds it and no store call loads it.
from resource_extend.storage.workload_request import WorkloadRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.storage.disk import Disk
    from resource_extend.storage.record import StorageRecord


def _sides(record: StorageRecord) -> tuple[NodeResource, NodeResource]:
    return record.capacity or NodeResource(), record.usage or NodeResource()


def storage_room(record: StorageRecord, storage_request: int) -> int:
    """How many times ``storage_request`` (> 0) fits into the node's free flat storage."""
    capacity, usage = _sides(record)
    return trunc_div(capacity.storage - usage.storage, storage_request)


def node_deploy_capacity(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, float, float]:
    """How many workloads of the validated ``request`` fit on the node, the node's usage and the request's
    rate (spec §6.3): the placement count and the storage count, whichever is smaller."""
    return DeployCount(request, bound)(record)


def node_deploy_limit(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, Limit]:
    """``node_deploy_capacity``'s count and the first limit it reached, from the same scheduler passes."""
    return DeployCount(request, bound).limit(record)


class DeployCount:
    """``node_deploy_capacity`` (call it) and ``node_deploy_limit`` of one request, for node after node
    (get-nodes-deploy-capacity, explain): the request is classified once (``VolumeCount``), not per node."""

    __slots__ = ("bound", "request", "size", "volumes")

    def __init__(self, request: WorkloadRequest, bound: int) -> None:
        self.request, self.bound = request, bound
        self.volumes = VolumeCount(request.volumes_request)
        self.size = total_size(request.volumes_request)

    def __call__(self, record: StorageRecord) -> tuple[int, float, float]:
        request = self.request
        count = self.volumes.capacity(record, self.bound) if self.volumes.schedules else self.bound
        if request.storage_request > 0:
            count = min(count, storage_room(record, request.storage_request))
        return (count, *self._usage_rate(record))

    def limit(self, record: StorageRecord) -> tuple[int, Limit]:
        """The count and the first limit it reached: ``volume_limit`` runs the count's passes, recording
        where they stop (for ``explain``)."""
        request, bound = self.request, self.bound
        count, limit = self.volumes.limit(record, bound) if self.volumes.schedules else (bound, None)
        if request.storage_request > 0:
            room = storage_room(record, request.storage_request)
            if room < count:
                from resource_extend.storage.scheduler.limits import size_text  # explain's words only

                capacity, usage = _sides(record)
                free, each = size_text(capacity.storage - usage.storage), size_text(request.storage_request)
                count, limit = room, Limit("storage", f"storage: {free} free, {each} per workload")
        return count, limit or Limit("cap", f"scheduler.max_deploy_count is {bound}")

    def _usage_rate(self, record: StorageRecord) -> tuple[float, float]:
        capacity, usage = _sides(record)
        request = self.request
        if request.volumes_request or request.storage_request == 0:
            volumes = volumes_total(capacity.volumes)
            return ratio(volumes_total(usage.volumes), volumes), ratio(self.size, volumes)
        return ratio(usage.storage, capacity.storage), ratio(request.storage_request, capacity.storage)


def deploy(
    record: StorageRecord, request: WorkloadRequest, count: int
) -> tuple[list[EngineParams], list[WorkloadResource]]:
    """Engine params and workload resources for ``count`` new workloads of the validated ``request``.

    Raises ``InsufficientResource`` when the storage or the placements do not fit ``count`` times.
    """
    count = max(count, 0)
    if request.storage_request > 0:
        room = storage_room(record, request.storage_request)
        if room < count:
            capacity, usage = _sides(record)
            raise errors.InsufficientResource(
                f"not enough storage, request: {count} x {request.storage_request} bytes, available: "
                f"{capacity.storage - usage.storage} bytes (room for {max(room, 0)}); deploy fewer workloads "
                "or ask for less storage"
            )
    capacity, usage = _sides(record)
    placements: list[tuple[VolumePlan, list[Disk]]]
    if not need_schedule(request.volumes_request):
        placements = [(VolumePlan(), []) for _ in range(count)]
    else:
        placements = volume_plans(record, request.volumes_request, count)
        if len(placements) < count:
            raise errors.InsufficientResource(f"not enough volume plan, need {count}, available {len(placements)}")
    engines, resources = [], []
    for plan, disks in placements[:count]:
        limit_plan = plan_limit(request.volumes_request, request.volumes_limit, plan)
        limit_disks = disks_limit(request.volumes_limit, limit_plan, capacity.disks or [])
        applied = apply_plan(request.volumes_limit, plan)
        engines.append(EngineParams(engine_volumes(applied), False, request.storage_limit, iops_options(limit_disks)))
        resources.append(
            WorkloadResource(
                request.volumes_request,
                request.volumes_limit,
                plan,
                limit_plan,
                request.storage_request,
                request.storage_limit,
                disks,
                limit_disks,
            )
        )
    return engines, resources


def realloc(
    record: StorageRecord, request: WorkloadRequest, origin: WorkloadResource
) -> tuple[EngineParams, WorkloadResource, WorkloadResource]:
    """Engine params, delta resource and new workload resource of a resize (spec §6.5).

    ``request`` is the parsed, not yet validated request; ``origin`` what the workload holds now.
    """
    # Whether to place again is decided by the request alone, before it is merged with the holdings.
    reschedule = need_schedule(request.volumes_request)
    merged = request.realloc_merge(origin).validated(fold=False)
    capacity, usage = _sides(record)
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
