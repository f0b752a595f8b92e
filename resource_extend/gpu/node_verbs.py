"""The GPU plugin's node verbs: the ``Kind`` the shared ones in ``nodeverbs`` use, and those only it answers.

Behaviour follows the reference (see docs/gpu.md); the differences are the project's decisions: add-node
falls back to the engine's ``Resources["gpu"]``, and every read-modify-write is one guarded step.
"""

from __future__ import annotations

from resource_extend import params
from resource_extend.capacity import ratio
from resource_extend.gpu import prodmap
from resource_extend.gpu.record import GpuRecord, combine, reconcile_usage
from resource_extend.verb import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.gpu.prodmap import MaybeMap, ProdMap, ProdMapJSON
    from resource_extend.nodeverbs import BeforeAfter, MostIdle
    from resource_extend.params import JSONObject

GpuCall = Call[GpuRecord]

# get-most-idle-node's priority for the GPU plugin's answer.
PRIORITY = 100


# -- the kind: what the shared node verbs in nodeverbs need to know of GPU records --------------------


def new_record(request: JSONObject, info: JSONObject) -> GpuRecord:
    capacity = prodmap.parse(params.obj(request, "resource"), "resource") or {}
    prodmap.validate(capacity)
    return GpuRecord(capacity or _reported_gpus(info), {})


def given_record(request: JSONObject) -> GpuRecord:
    capacity = prodmap.parse(params.obj(request, "capacity"), "capacity")
    return GpuRecord(capacity, prodmap.parse(params.obj(request, "usage"), "usage"))


def workloads(request: JSONObject) -> list[MaybeMap]:
    return params.workloads(request, lambda doc: prodmap.parse(doc, "workloads_resource[]"))


def reconcile(record: GpuRecord, held: list[MaybeMap]) -> tuple[GpuRecord, list[str]]:
    actual, diffs = reconcile_usage(record.usage, held)
    return GpuRecord(record.capacity, actual), diffs


def _reported_gpus(info: JSONObject) -> ProdMap:
    """The engine's own GPU report (upstream core's ``Resources["gpu"]``), or no cards."""
    resources = info.get("Resources")
    entry = resources.get("gpu") if isinstance(resources, dict) else None
    if isinstance(entry, str):
        import base64  # only an add-node carrying the engine's report pays for these
        import binascii
        import json

        try:
            entry = json.loads(base64.b64decode(entry, validate=True))
        except (binascii.Error, ValueError):
            return {}
    if not isinstance(entry, dict):
        return {}
    reported = prodmap.parse(entry, 'info.Resources["gpu"]') or {}
    prodmap.validate(reported)
    return reported


def _present(resource: JSONObject | None, where: str) -> MaybeMap:
    """A present object is a map (``{}`` without ``prod_count_map``); an absent one is ``None``."""
    if resource is None:
        return None
    return prodmap.parse(resource, where) or {}


def set_node_resource_capacity(call: GpuCall) -> BeforeAfter[ProdMapJSON]:
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
        resource = source if source is not None else res
        return GpuRecord(combine(record.capacity, resource, [], delta, incr), record.usage)

    done = call.store.update(node, change)
    before = done.before.capacity if done.before is not None else {}
    return {"before": prodmap.to_json(before), "after": prodmap.to_json(done.after.capacity)}


def set_node_resource_usage(call: GpuCall) -> BeforeAfter[ProdMapJSON]:
    node = params.nodename(call.request)
    req = _present(params.obj(call.request, "resource_request"), "resource_request")
    res = _present(params.obj(call.request, "resource"), "resource")
    held = workloads(call.request)
    delta, incr = params.flag(call.request, "delta"), params.flag(call.request, "incr")
    resource = req if req is not None else res

    def change(stored: GpuRecord | None) -> GpuRecord:
        record = stored or GpuRecord.empty()
        return GpuRecord(record.capacity, combine(record.usage, resource, held, delta, incr))

    done = call.store.update(node, change)
    before = done.before.usage if done.before is not None else {}
    return {"before": prodmap.to_json(before), "after": prodmap.to_json(done.after.usage)}


def get_most_idle_node(call: GpuCall) -> MostIdle:
    records = call.store.get_many(params.nodenames(call.request))
    best, best_idle = "", float("inf")
    for node in sorted(records):
        record = records[node]
        idle = ratio(prodmap.count(record.usage), prodmap.count(record.capacity))
        if idle < best_idle:
            best, best_idle = node, idle
    return {"nodename": best, "priority": PRIORITY}
