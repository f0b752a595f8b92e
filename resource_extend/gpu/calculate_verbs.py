"""A counted plugin's scheduling verbs: how many workloads fit, and the cards new or resized ones get.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record, as the reference reads them.
"""

from __future__ import annotations

from resource_extend.gpu import prodmap
from resource_extend.gpu.record import CountedRecord
from resource_extend.gpu.scheduler import allocate, node_deploy_capacity, node_deploy_limit, realloc_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.bounds import Bounds
    from resource_extend.capacity import Limit
    from resource_extend.envelope.plans import Deploy
    from resource_extend.envelope.realloc import Realloc
    from resource_extend.gpu.prodmap import ProdMap, ProdMapJSON
    from resource_extend.plugin.answers import Plans, Replan


def node_capacity(request: ProdMap, bounds: Bounds) -> Callable[[CountedRecord], tuple[int, float, float]]:
    """get-nodes-deploy-capacity's count of one node."""
    return lambda record: node_deploy_capacity(record, request)


def explainer(request: ProdMap, bounds: Bounds) -> Callable[[CountedRecord], tuple[int, Limit]]:
    """For ``explain``: a node's count for get-nodes-deploy-capacity's ``workload_resource``, with the
    limit that set it, from the scheduler the verb runs."""
    return lambda record: node_deploy_limit(record, request)


def commit_precheck(request: Deploy[ProdMap], bounds: Bounds) -> None:
    """Every workload holds the same products: what core commits is known before the plan (decision 18)."""
    from resource_extend.formats.jsonio import dumps

    each = len(dumps(prodmap.to_json(request.request)).encode()) + 1
    bounds.check_commit(request.count * each, request.count, request.nodename)


def plan_deploy(
    record: CountedRecord, request: Deploy[ProdMap], bounds: Bounds, plugin: str
) -> Plans[ProdMapJSON, ProdMapJSON]:
    """calculate-deploy's plan on the node's record: the same products for every workload."""
    allocate(record.available(), request.request, request.count)
    plans = [prodmap.to_json(request.request) for _ in range(request.count)]
    return {"engines_params": plans, "workloads_resource": [p.copy() for p in plans]}


def plan_realloc(record: CountedRecord, request: Realloc[Any, Any]) -> Replan[ProdMapJSON, ProdMapJSON, ProdMapJSON]:
    """calculate-realloc's answer on the node's record."""
    wanted, delta = realloc_plan(record, request.current, request.request)
    return {
        "engine_params": prodmap.to_json(wanted),
        "delta_resource": prodmap.to_json(delta),
        "workload_resource": prodmap.to_json(wanted),
    }
