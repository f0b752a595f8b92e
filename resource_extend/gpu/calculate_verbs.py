"""The GPU plugin's scheduling verbs: how many workloads fit, and the cards new or resized ones get.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record, as the reference reads them.
"""

from __future__ import annotations

from resource_extend import deploy, params
from resource_extend.capacity import deploy_capacity_response
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.record import GpuRecord
from resource_extend.gpu.scheduler import allocate, node_deploy_capacity, realloc_plan
from resource_extend.verb import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.capacity import DeployCapacity
    from resource_extend.gpu.prodmap import ProdMapJSON
    from resource_extend.nodeverbs import Plans, Replan

GpuCall = Call[GpuRecord]


def get_nodes_deploy_capacity(call: GpuCall) -> DeployCapacity:
    nodes = params.bulk_nodenames(call.request)
    request = prodmap.parse(params.obj(call.request, "workload_resource"), "workload_resource") or {}
    prodmap.validate(request)
    return deploy_capacity_response(call.store.get_many(nodes), lambda record: node_deploy_capacity(record, request))


def calculate_deploy(call: GpuCall) -> Plans[ProdMapJSON, ProdMapJSON]:
    node = params.nodename(call.request)
    times = params.deploy_count(call.request, call.config)
    request = prodmap.parse(params.obj(call.request, "workload_resource_request"), "workload_resource_request")
    request = request or {}
    prodmap.validate(request)
    record, known = deploy.target_record(call, node)
    try:
        allocate(record.available(), request, times)
    except PluginError as cause:
        raise cause if known else deploy.unknown_node(call, node, cause) from None
    plans = [prodmap.to_json(request) for _ in range(times)]
    return {"engines_params": plans, "workloads_resource": [p.copy() for p in plans]}


def calculate_realloc(call: GpuCall) -> Replan[ProdMapJSON, ProdMapJSON, ProdMapJSON]:
    node = params.nodename(call.request)
    request = prodmap.parse(params.obj(call.request, "workload_resource_request"), "workload_resource_request")
    prodmap.validate_products(request)
    current = prodmap.parse(params.obj(call.request, "workload_resource"), "workload_resource")
    prodmap.validate(current)
    wanted, delta = realloc_plan(call.store.get_or_empty(node), current, request)
    return {
        "engine_params": prodmap.to_json(wanted),
        "delta_resource": prodmap.to_json(delta),
        "workload_resource": prodmap.to_json(wanted),
    }
