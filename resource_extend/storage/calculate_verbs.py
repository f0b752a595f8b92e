"""The storage plugin's scheduling verbs: how many workloads fit, and where new or resized ones go.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record (spec storage-scheduler.md §5, §6.3–§6.5).
"""

from __future__ import annotations

from resource_extend import params
from resource_extend.capacity import Limit, deploy_capacity_response, ratio, trunc_div
from resource_extend.deploy import target_record, unknown_node
from resource_extend.errors import PluginError
from resource_extend.storage.binding import need_schedule, total_size
from resource_extend.storage.disk import Disk
from resource_extend.storage.plan import VolumePlan, apply_plan
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.request import PAYLOADS, WorkloadRequest
from resource_extend.storage.scheduler import (
    InsufficientResource,
    affinity_plan,
    size_text,
    volume_capacity,
    volume_limit,
    volume_plans,
)
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
from resource_extend.verb import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.capacity import DeployCapacity as DeployCapacityJSON
    from resource_extend.config import Config
    from resource_extend.nodeverbs import Plans, Replan

    WireObject = dict[str, Any]

StorageCall = Call[StorageRecord]


def _sides(record: StorageRecord) -> tuple[NodeResource, NodeResource]:
    return record.capacity or NodeResource(), record.usage or NodeResource()


def storage_room(record: StorageRecord, storage_request: int) -> int:
    """How many times ``storage_request`` (> 0) fits into the node's free flat storage."""
    capacity, usage = _sides(record)
    return trunc_div(capacity.storage - usage.storage, storage_request)


def node_deploy_capacity(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, float, float]:
    """How many workloads of the validated ``request`` fit on the node, the node's usage and the request's
    rate (spec §6.3): the placement count and the storage count, whichever is smaller."""
    count = bound
    if need_schedule(request.volumes_request):
        count = volume_capacity(record, request.volumes_request, bound)
    if request.storage_request > 0:
        count = min(count, storage_room(record, request.storage_request))
    return (count, *_usage_rate(record, request))


def node_deploy_limit(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, Limit]:
    """``node_deploy_capacity``'s count and the first limit it reached, from the same scheduler passes
    (``volume_limit`` runs ``volume_capacity``'s, recording where they stop): for ``explain``."""
    count, limit = bound, None
    if need_schedule(request.volumes_request):
        count, limit = volume_limit(record, request.volumes_request, bound)
    if request.storage_request > 0:
        room = storage_room(record, request.storage_request)
        if room < count:
            capacity, usage = _sides(record)
            free, each = size_text(capacity.storage - usage.storage), size_text(request.storage_request)
            count, limit = room, Limit("storage", f"storage: {free} free, {each} per workload")
    return count, limit or Limit("cap", f"scheduler.max_deploy_count is {bound}")


def _usage_rate(record: StorageRecord, request: WorkloadRequest) -> tuple[float, float]:
    capacity, usage = _sides(record)
    if request.volumes_request or request.storage_request == 0:
        volumes = volumes_total(capacity.volumes)
        return ratio(volumes_total(usage.volumes), volumes), ratio(total_size(request.volumes_request), volumes)
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
            raise InsufficientResource(
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
            raise InsufficientResource(f"not enough volume plan, need {count}, available {len(placements)}")
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
        raise InsufficientResource(
            f"not enough storage, request: {grow} bytes more, available: {capacity.storage - usage.storage} bytes"
        )
    if reschedule:
        try:
            plan, disks = affinity_plan(
                record,
                merged.volumes_request,
                origin.volume_plan_request,
                origin.volumes_request,
            )
        except InsufficientResource:
            raise
        except PluginError as cause:  # the reference reports every placement failure as insufficient
            raise InsufficientResource(str(cause)) from None
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


# -- verbs ------------------------------------------------------------------------------------------


def get_nodes_deploy_capacity(call: StorageCall) -> DeployCapacityJSON:
    request = params.DeployCapacity.from_json(call.request, call.config.bounds, PAYLOADS)
    bound = call.config.bounds.max_deploy_count
    return deploy_capacity_response(
        call.store.get_many(request.nodenames), lambda record: node_deploy_capacity(record, request.request, bound)
    )


def explainer(
    request_doc: WireObject, config: Config, record: type[StorageRecord]
) -> Callable[[StorageRecord], tuple[int, Limit]]:
    """For ``explain``: a node's count for get-nodes-deploy-capacity's ``workload_resource``, with the
    limit that set it, from the scheduler the verb runs (bounded by the same max_deploy_count)."""
    request = PAYLOADS.request(request_doc, "workload_resource")
    bound = config.bounds.max_deploy_count
    return lambda record: node_deploy_limit(record, request, bound)


def calculate_deploy(call: StorageCall) -> Plans[WireObject, WireObject]:
    request = params.Deploy.from_json(call.request, call.config.bounds, PAYLOADS)
    record, known = target_record(call, request.nodename)
    try:
        engines, resources = deploy(record, request.request, request.count)
    except PluginError as cause:
        raise cause if known else unknown_node(call, request.nodename, cause) from None
    return {
        "engines_params": [engine.to_json() for engine in engines],
        "workloads_resource": [resource.to_json() for resource in resources],
    }


def calculate_realloc(call: StorageCall) -> Replan[WireObject, WireObject, WireObject]:
    request = params.Realloc.from_json(call.request, call.config.bounds, PAYLOADS)
    engine, delta, target = realloc(call.store.get_or_empty(request.nodename), request.request, request.current)
    return {"engine_params": engine.to_json(), "delta_resource": delta.to_json(), "workload_resource": target.to_json()}
