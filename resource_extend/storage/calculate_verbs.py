"""The storage plugin's scheduling verbs: how many workloads fit, and where new or resized ones go.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record (spec storage-scheduler.md §5, §6.3–§6.5).
The planning itself is pure and lives in storage/scheduler/ (``workloads``, ``count``, ``resize``); these verbs
read the node and the request and render the answer. Each imports what only it runs where it runs, so a
calculate-deploy loads neither the counts nor a realloc's code (nor creates their classes).
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.storage.record import StorageRecord
from resource_extend.storage.scheduler.workloads import deploy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.bounds import Bounds
    from resource_extend.capacity import Limit
    from resource_extend.envelope.plans import Deploy
    from resource_extend.envelope.realloc import Realloc
    from resource_extend.plugin.answers import Plans, Replan
    from resource_extend.storage.workload import WorkloadResource
    from resource_extend.storage.workload_request import WorkloadRequest

    WireObject = dict[str, Any]


# -- verbs ------------------------------------------------------------------------------------------


def node_capacity(request: WorkloadRequest, bounds: Bounds) -> Callable[[StorageRecord], tuple[int, float, float]]:
    """get-nodes-deploy-capacity's count of one node, bounded by the config's max_deploy_count."""
    from resource_extend.storage.scheduler.count import DeployCount

    return DeployCount(request, bounds.max_deploy_count)


def explainer(request: WorkloadRequest, bounds: Bounds) -> Callable[[StorageRecord], tuple[int, Limit]]:
    """For ``explain``: a node's count for get-nodes-deploy-capacity's ``workload_resource``, with the
    limit that set it, from the scheduler the verb runs (bounded by the same max_deploy_count)."""
    from resource_extend.storage.scheduler.count import DeployCount

    return DeployCount(request, bounds.max_deploy_count).limit


def commit_precheck(request: Deploy[WorkloadRequest], bounds: Bounds) -> None:
    """What core will commit is refused before the plan when even its least size does not fit on the commit's
    stdin (every workload holds its bindings and a plan entry per placed one), and else checked as it is
    written (``CommitBudget``): a plan is only ever answered when set-node-resource-usage takes it back
    (decision 18)."""
    from resource_extend.formats.jsonio import dumps
    from resource_extend.storage.workload import WorkloadResource

    asked, count = request.request, request.count
    least = WorkloadResource(asked.volumes_request, asked.volumes_limit, None, None, asked.storage_request)
    each = len(dumps(least.to_json()).encode()) + 1
    each += sum(2 * len(binding.to_string()) + 18 for binding in asked.volumes_request if binding.require_schedule)
    bounds.check_commit(count * each, count, request.nodename)


def plan_deploy(
    record: StorageRecord, request: Deploy[WorkloadRequest], bounds: Bounds, plugin: str
) -> Plans[WireObject, WireObject]:
    """calculate-deploy's plan on the node's record; a plan that does not fit names what stopped it."""
    asked, count, name = request.request, request.count, request.nodename
    try:
        engines, resources = deploy(record, asked, count, CommitBudget(bounds, count, name))
    except errors.InsufficientResource as cause:
        raise short_of(plugin, name, record, asked, count, cause) from None
    return {
        "engines_params": [engine.to_json() for engine in engines],
        "workloads_resource": [resource.to_json() for resource in resources],
    }


class CommitBudget:
    """Counts the bytes of each workload resource a deploy makes, as core commits them; past the bound, the
    deploy stops there (``Bounds.check_commit``), before building the rest."""

    __slots__ = ("bounds", "count", "name", "size")

    def __init__(self, bounds: Bounds, count: int, name: str) -> None:
        self.bounds, self.count, self.name, self.size = bounds, count, name, 0

    def __call__(self, resource: WorkloadResource) -> None:
        from resource_extend.formats.jsonio import dumps

        self.size += len(dumps(resource.to_json()).encode()) + 1
        self.bounds.check_commit(self.size, self.count, self.name)


def short_of(
    plugin: str,
    node: str,
    record: StorageRecord,
    request: WorkloadRequest,
    count: int,
    cause: errors.InsufficientResource,
) -> PluginError:
    """A deploy that does not fit, with the volume or disk that stopped it in explain's words (the volume
    bigger than any of the node's, the mount no disk holds) and where to see every limit: "not enough
    volume plan, need 1, available 0" alone names neither."""
    from resource_extend.storage.scheduler.count import volume_limit  # the failure's words only

    try:
        fits, limit = volume_limit(record, request.volumes_request, count)
    except PluginError:  # the words are a help: never a failure of their own in place of the cause
        return cause
    if limit is None or fits >= count:
        return cause
    detail = str(cause)[: -len(errors.InsufficientResource.SUFFIX) - 2]
    why = limit.text
    if limit.kind == "disk quota" and not (record.capacity and record.capacity.disks):
        why += (
            "; the node has no disks, and IOPS/BPS are drawn from the disk a volume is on: add the disk to its"
            " capacity (set-node-resource-capacity, resource_request.disks) or drop the IOPS/BPS"
        )
    where = f"resource-{plugin} explain --node {node}"
    return errors.InsufficientResource(f"{detail}; {why} ({where} shows each limit)")


def plan_realloc(record: StorageRecord, request: Realloc[Any, Any]) -> Replan[WireObject, WireObject, WireObject]:
    """calculate-realloc's answer on the node's record."""
    from resource_extend.storage.scheduler.resize import realloc

    engine, delta, target = realloc(record, request.request, request.current)
    return {
        "engine_params": engine.to_json(),
        "delta_resource": delta.to_json(),
        "workload_resource": target.to_json(),
    }
