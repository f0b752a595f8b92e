"""The GPU plugin's scheduling verbs: how many workloads fit, and the cards new or resized ones get.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record, as the reference reads them.
"""

from __future__ import annotations

from resource_extend import deploy, params
from resource_extend.capacity import deploy_capacity_response, ratio, trunc_div
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import GpuRecord
from resource_extend.verb import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.capacity import DeployCapacity
    from resource_extend.gpu.prodmap import ProdMapJSON
    from resource_extend.nodeverbs import Plans, Replan

GpuCall = Call[GpuRecord]

# Deploy capacity of a node for a request that wants no GPU.
MAX_CAPACITY = 1000000


def node_deploy_capacity(record: GpuRecord, request: ProdMap) -> tuple[int, float, float]:
    """How many workloads of ``request`` fit on the node, with its usage and the request's rate."""
    capacity = MAX_CAPACITY
    if prodmap.count(request) > 0:
        available = record.available()
        for product, k in request.items():
            capacity = min(capacity, trunc_div(available.get(product, 0), k))
            if capacity <= 0:
                break
    total = prodmap.count(record.capacity)
    return capacity, ratio(prodmap.count(record.usage), total), ratio(prodmap.count(request), total)


def allocate(available: ProdMap, request: ProdMap, times: int) -> None:
    """Fail unless ``times`` workloads of ``request`` fit into ``available``."""
    for product, k in request.items():
        if available.get(product, 0) < k * times:
            raise PluginError(
                f"cannot alloc a plan, not enough resource: {product} wants {k} x {times}, "
                f"{max(available.get(product, 0), 0)} available"
            )


def realloc_plan(record: GpuRecord, current: MaybeMap, request: MaybeMap) -> tuple[ProdMap, ProdMap]:
    """The workload's new cards and the change to the node's usage, or ``not enough resource``."""
    # The workload's own cards count as free again while its new size is planned.
    available = prodmap.sub(record.capacity, prodmap.sub(record.usage, current))
    wanted = {p: k for p, k in prodmap.add(current, request).items() if k > 0}
    prodmap.validate(wanted)
    allocate(available, wanted, 1)
    return wanted, prodmap.sub(wanted, current)


# -- verbs ------------------------------------------------------------------------------------------


def get_nodes_deploy_capacity(call: GpuCall) -> DeployCapacity:
    nodes = params.bulk_nodenames(call.request)
    request = prodmap.parse(params.obj(call.request, "workload_resource"), "workload_resource") or {}
    prodmap.validate(request)
    return deploy_capacity_response(call.store.get_many(nodes), lambda record: node_deploy_capacity(record, request))


def calculate_deploy(call: GpuCall) -> Plans[ProdMapJSON, ProdMapJSON]:
    node = params.nodename(call.request)
    times = deploy.deploy_count(call)
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
