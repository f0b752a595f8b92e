"""A counted plugin's scheduling verbs: how many workloads fit, and the cards new or resized ones get.

Nothing here writes to the store: core applies the returned workload resources with
set-node-resource-usage. Unknown nodes read as the empty record, as the reference reads them.
"""

from __future__ import annotations

from resource_extend.command import deploy
from resource_extend.command.verb import Call
from resource_extend.counted import prodmap
from resource_extend.counted.record import CountedRecord
from resource_extend.counted.request import Payloads
from resource_extend.counted.scheduler import allocate, node_deploy_capacity, node_deploy_limit, realloc_plan
from resource_extend.errors import PluginError
from resource_extend.requests.plans import Deploy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.capacity.answer import DeployCapacity as DeployCapacityJSON
    from resource_extend.capacity.answer import Limit
    from resource_extend.command.answers import Plans, Replan
    from resource_extend.config import Config
    from resource_extend.counted.prodmap import ProdMapJSON

CountedCall = Call[CountedRecord]


def get_nodes_deploy_capacity(call: CountedCall) -> DeployCapacityJSON:
    # Each verb imports the request and answer code only it runs: a deploy creates neither class.
    from resource_extend.capacity.answer import deploy_capacity_response
    from resource_extend.capacity.request import DeployCapacity
    from resource_extend.formats import bigdocs  # noqa: F401  (checks the answer: loaded with the verb's code)

    request = DeployCapacity.from_json(call.request, call.config.bounds, Payloads(call.plugin.record))
    records = call.store.iter_many(request.nodenames)
    return deploy_capacity_response(records, lambda record: node_deploy_capacity(record, request.request))


def explainer(
    request_doc: dict[str, Any], config: Config, record: type[CountedRecord]
) -> Callable[[CountedRecord], tuple[int, Limit]]:
    """For ``explain``: a node's count for get-nodes-deploy-capacity's ``workload_resource``, with the
    limit that set it, from the scheduler the verb runs."""
    request = Payloads(record).request(request_doc, "workload_resource")
    return lambda record: node_deploy_limit(record, request)


def calculate_deploy(call: CountedCall) -> Plans[ProdMapJSON, ProdMapJSON]:
    from resource_extend.formats.jsonio import dumps

    request = Deploy.from_json(call.request, call.config.bounds, Payloads(call.plugin.record))
    # Every workload holds the same products: what core commits is known before the plan (decision 18).
    each = len(dumps(prodmap.to_json(request.request)).encode()) + 1
    call.config.bounds.check_commit(request.count * each, request.count, request.nodename)
    record, known = deploy.target_record(call, request.nodename)
    try:
        allocate(record.available(), request.request, request.count)
    except PluginError as cause:
        raise cause if known else deploy.unknown_node(call, request.nodename, cause) from None
    plans = [prodmap.to_json(request.request) for _ in range(request.count)]
    return {"engines_params": plans, "workloads_resource": [p.copy() for p in plans]}


def calculate_realloc(call: CountedCall) -> Replan[ProdMapJSON, ProdMapJSON, ProdMapJSON]:
    from resource_extend.requests.realloc import Realloc

    request = Realloc.from_json(call.request, call.config.bounds, Payloads(call.plugin.record))
    record, known = deploy.target_record(call, request.nodename)
    try:
        wanted, delta = realloc_plan(record, request.current, request.request)
    except PluginError as cause:
        raise cause if known else deploy.unknown_node(call, request.nodename, cause) from None
    from resource_extend.formats.jsonio import dumps

    largest = max(len(dumps(prodmap.to_json(wanted)).encode()), len(dumps(prodmap.to_json(delta)).encode()))
    call.config.bounds.check_commit(largest, 1, request.nodename)
    return {
        "engine_params": prodmap.to_json(wanted),
        "delta_resource": prodmap.to_json(delta),
        "workload_resource": prodmap.to_json(wanted),
    }
