"""The GPU plugin's verbs: read the request, do the pure arithmetic, touch the store once.

Behaviour follows the reference (see docs/gpu.md); the differences are the project's decisions:
calculate-remap answers a no-op, add-node falls back to the engine's ``Resources["gpu"]``, get-metrics
takes both request shapes, and every read-modify-write is one guarded step.
"""

from __future__ import annotations

import base64
import binascii
import json

from resource_extend import deploy, params
from resource_extend.capacity import calculate_remap, deploy_capacity_response, ratio, trunc_div
from resource_extend.errors import NodeNotExists, PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import GpuRecord
from resource_extend.metrics import metrics_nodes
from resource_extend.params import JSONObject
from resource_extend.store import check_node_name
from resource_extend.verb import Call, Plugin, Verb, metric_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

GpuCall = Call[GpuRecord]

# Deploy capacity of a node for a request that wants no GPU, and the most workloads one call plans.
MAX_CAPACITY = 1000000
PRIORITY = 100


def _present(resource: JSONObject | None, where: str) -> MaybeMap:
    """A present object is a map (``{}`` without ``prod_count_map``); an absent one is ``None``."""
    if resource is None:
        return None
    return prodmap.parse(resource, where) or {}


def _workloads(req: JSONObject) -> list[MaybeMap]:
    return [prodmap.parse(w, "workloads_resource[]") for w in params.obj_list(req, "workloads_resource") or []]


def calc(req: MaybeMap, res: MaybeMap, workloads: list[MaybeMap], origin: MaybeMap, delta: bool, incr: bool) -> ProdMap:
    """The new capacity or usage of a set-node-resource-* call.

    Without ``delta`` the result is absolute (added onto empty). Only the first present source counts:
    ``resource_request``, else ``resource``, else the sum of the workloads.
    """
    if not delta:
        result: ProdMap = {}
        incr = True
    else:
        result = dict(origin or {})
    op: Callable[[MaybeMap, MaybeMap], ProdMap] = prodmap.add if incr else prodmap.sub
    source = req if req is not None else res
    if source is not None:
        return op(result, source)
    for workload in workloads:
        result = op(result, workload)
    return result


def node_capacity(record: GpuRecord, request: ProdMap) -> tuple[int, float, float]:
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


def usage_diffs(usage: MaybeMap, actual: ProdMap) -> list[str]:
    """What differs between the stored usage and the sum of the node's workloads."""
    diffs = []
    if prodmap.count(actual) != prodmap.count(usage):
        diffs.append(f"node.usage != sum(workload.request): {prodmap.count(usage)} != {prodmap.count(actual)}")
    stored = usage or {}
    for product, k in actual.items():
        if product not in stored:
            diffs.append(f"{product} not in usage")
        elif k != stored[product]:
            diffs.append(f"{product}: actual({k}) != usage({stored[product]})")
    return diffs


def allocate(available: ProdMap, request: ProdMap, times: int) -> None:
    """Fail unless ``times`` workloads of ``request`` fit into ``available``."""
    for product, k in request.items():
        if available.get(product, 0) < k * times:
            raise PluginError(
                f"cannot alloc a plan, not enough resource: {product} wants {k} x {times}, "
                f"{max(available.get(product, 0), 0)} available"
            )


# -- verbs ------------------------------------------------------------------------------------------


def add_node(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    info = params.engine_info(call.request)
    # The reference checks for an existing record before it looks at the request's cards; an unreadable
    # record exists too (set-node-resource-info or remove-node replaces it).
    check_node_name(node)  # before "node already exists": a name no write may use is refused as such
    if call.store.exists(node):
        raise PluginError(f"node already exists: {node}")
    capacity = prodmap.parse(params.obj(call.request, "resource"), "resource") or {}
    prodmap.validate(capacity)
    if not capacity:
        capacity = _reported_gpus(info)
    stored = call.store.create(node, GpuRecord(capacity, {}))
    return stored.to_json()


def _reported_gpus(info: JSONObject) -> ProdMap:
    """The engine's own GPU report (upstream core's ``Resources["gpu"]``), or no cards."""
    resources = info.get("Resources")
    entry = resources.get("gpu") if isinstance(resources, dict) else None
    if isinstance(entry, str):
        try:
            entry = json.loads(base64.b64decode(entry, validate=True))
        except (binascii.Error, ValueError):
            return {}
    if not isinstance(entry, dict):
        return {}
    reported = prodmap.parse(entry, 'info.Resources["gpu"]') or {}
    prodmap.validate(reported)
    return reported


def remove_node(call: GpuCall) -> Any:
    call.store.delete(params.nodename(call.request))
    return {}


def get_nodes_deploy_capacity(call: GpuCall) -> Any:
    nodes = params.bulk_nodenames(call.request)
    request = prodmap.parse(params.obj(call.request, "workload_resource"), "workload_resource") or {}
    prodmap.validate(request)
    return deploy_capacity_response(call.store.get_many(nodes), lambda record: node_capacity(record, request))


def set_node_resource_capacity(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    req_obj = params.obj(call.request, "resource_request")
    req = _present(req_obj, "resource_request")
    res = _present(params.obj(call.request, "resource"), "resource")
    delta, incr = params.flag(call.request, "delta"), params.flag(call.request, "incr")

    def change(stored: GpuRecord | None) -> GpuRecord:
        record = stored or GpuRecord.empty()
        source = req
        # An absolute request without a prod_count_map means "leave the cards as they are".
        if not delta and req_obj is not None and "prod_count_map" not in req_obj:
            source = record.capacity
        return GpuRecord(calc(source, res, [], record.capacity, delta, incr), record.usage)

    done = call.store.update(node, change)
    before = done.before.capacity if done.before is not None else {}
    return {"before": prodmap.to_json(before), "after": prodmap.to_json(done.after.capacity)}


def set_node_resource_usage(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    req = _present(params.obj(call.request, "resource_request"), "resource_request")
    res = _present(params.obj(call.request, "resource"), "resource")
    workloads = _workloads(call.request)
    delta, incr = params.flag(call.request, "delta"), params.flag(call.request, "incr")

    def change(stored: GpuRecord | None) -> GpuRecord:
        record = stored or GpuRecord.empty()
        return GpuRecord(record.capacity, calc(req, res, workloads, record.usage, delta, incr))

    done = call.store.update(node, change)
    before = done.before.usage if done.before is not None else {}
    return {"before": prodmap.to_json(before), "after": prodmap.to_json(done.after.usage)}


def _actual(workloads: list[MaybeMap]) -> ProdMap:
    actual: ProdMap = {}
    for workload in workloads:
        actual = prodmap.add(actual, workload)
    return actual


def _info(record: GpuRecord, diffs: list[str]) -> JSONObject:
    return {**record.to_json(), "diffs": diffs}


def get_node_resource_info(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    actual = _actual(_workloads(call.request))
    try:
        record = call.store.get(node)
    except NodeNotExists:
        return None  # the reference answers null for a node it has no record of
    return _info(record, usage_diffs(record.usage, actual))


def fix_node_resource(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    actual = _actual(_workloads(call.request))

    def change(stored: GpuRecord | None) -> GpuRecord:
        if stored is None:
            raise NodeNotExists(node)
        if not usage_diffs(stored.usage, actual):
            return stored
        return GpuRecord(stored.capacity, actual)

    try:
        done = call.store.update(node, change)
    except NodeNotExists:
        return None  # decision 13: like get-node-resource-info, and nothing is written
    return _info(done.after, usage_diffs(done.before.usage if done.before else {}, actual))


def get_nodes_resource_info(call: GpuCall) -> Any:
    records = call.store.get_many(params.bulk_nodenames(call.request))
    return {"node_resource_info_map": {node: record.to_json() for node, record in records.items()}}


def set_node_resource_info(call: GpuCall) -> Any:
    node = params.nodename(call.request)
    capacity = prodmap.parse(params.obj(call.request, "capacity"), "capacity")
    usage = prodmap.parse(params.obj(call.request, "usage"), "usage")
    call.store.put(node, GpuRecord(capacity, usage))
    return {}


def get_most_idle_node(call: GpuCall) -> Any:
    records = call.store.get_many(params.nodenames(call.request))
    best, best_idle = "", float("inf")
    for node in sorted(records):
        record = records[node]
        idle = ratio(prodmap.count(record.usage), prodmap.count(record.capacity))
        if idle < best_idle:
            best, best_idle = node, idle
    return {"nodename": best, "priority": PRIORITY}


def calculate_deploy(call: GpuCall) -> Any:
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
    return {"engines_params": plans, "workloads_resource": [dict(p) for p in plans]}


def realloc_plan(record: GpuRecord, current: MaybeMap, request: MaybeMap) -> tuple[ProdMap, ProdMap]:
    """The workload's new cards and the change to the node's usage, or ``not enough resource``."""
    # The workload's own cards count as free again while its new size is planned.
    available = prodmap.sub(record.capacity, prodmap.sub(record.usage, current))
    wanted = {p: k for p, k in prodmap.add(current, request).items() if k > 0}
    prodmap.validate(wanted)
    allocate(available, wanted, 1)
    return wanted, prodmap.sub(wanted, current)


def calculate_realloc(call: GpuCall) -> Any:
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


METRICS_DESCRIPTION = [
    {
        "name": "gpu_capacity",
        "help": "node available gpu.",
        "type": "gauge",
        "labels": ["podname", "nodename", "product"],
    },
    {
        "name": "gpu_used",
        "help": "node used gpu.",
        "type": "gauge",
        "labels": ["podname", "nodename", "product"],
    },
]


def get_metrics_description(call: GpuCall) -> Any:
    return METRICS_DESCRIPTION


def get_metrics(call: GpuCall) -> Any:
    nodes = metrics_nodes(call.request)
    records = call.store.get_many([name for _, name in nodes]) if nodes else {}
    rows = []
    for pod, name in nodes:
        record = records[name]
        usage = record.usage or {}
        for product, k in sorted((record.capacity or {}).items()):
            labels = [pod, name, product]
            rows.append(
                {
                    "name": "gpu_capacity",
                    "labels": labels,
                    "key": metric_key(name, "gpu", product, "capacity"),
                    "value": str(k),
                }
            )
            rows.append(
                {
                    "name": "gpu_used",
                    "labels": labels,
                    "key": metric_key(name, "gpu", product, "used"),
                    "value": str(usage.get(product, 0)),
                }
            )
    return rows


PLUGIN: Plugin[GpuRecord] = Plugin(
    name="gpu",
    summary="GPU cards per product model",
    record=GpuRecord,
    verbs=(
        Verb("get-metrics-description", "describe the metrics this plugin reports", get_metrics_description),
        Verb("get-metrics", "capacity and usage metrics of nodes", get_metrics),
        Verb("add-node", "register a node's GPUs", add_node),
        Verb("remove-node", "forget a node", remove_node),
        Verb(
            "get-nodes-deploy-capacity",
            "how many workloads of a request fit on each node",
            get_nodes_deploy_capacity,
        ),
        Verb(
            "set-node-resource-capacity",
            "change a node's capacity (absolute or delta)",
            set_node_resource_capacity,
        ),
        Verb(
            "get-node-resource-info",
            "a node's capacity and usage, checked against its workloads",
            get_node_resource_info,
        ),
        Verb("get-nodes-resource-info", "capacity and usage of several nodes", get_nodes_resource_info),
        Verb("set-node-resource-info", "overwrite a node's capacity and usage", set_node_resource_info),
        Verb("set-node-resource-usage", "change a node's usage (absolute or delta)", set_node_resource_usage),
        Verb("get-most-idle-node", "the least used of several nodes", get_most_idle_node),
        Verb("fix-node-resource", "reset a node's usage to the sum of its workloads", fix_node_resource),
        Verb("calculate-deploy", "plan cards for N new workloads on a node", calculate_deploy),
        Verb("calculate-realloc", "plan a workload's new cards on its node", calculate_realloc),
        Verb(
            "calculate-remap",
            "no-op answer to core's remap (not advertised)",
            calculate_remap,
            advertised=False,
        ),
    ),
)
