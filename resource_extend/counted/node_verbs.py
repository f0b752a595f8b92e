"""A counted plugin's node verbs: the ``Kind`` the shared ones in ``nodeverbs`` use, and those only it answers.

Behaviour follows the GPU reference (see docs/gpu.md); the differences are the project's decisions: add-node
falls back to the engine's ``Resources["<name>"]``, and every read-modify-write is one guarded step.
"""

from __future__ import annotations

from resource_extend import requests
from resource_extend.capacity import ratio
from resource_extend.command.nodeverbs import set_side
from resource_extend.command.verb import Call
from resource_extend.counted import prodmap
from resource_extend.counted.record import CountedRecord, combine, reconcile_usage
from resource_extend.counted.request import Payloads, cards

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.command.answers import BeforeAfter, MostIdle
    from resource_extend.counted.prodmap import MaybeMap, ProdMapJSON

CountedCall = Call[CountedRecord]

# get-most-idle-node's priority for a counted plugin's answer.
PRIORITY = 100


# -- the kind: what the shared node verbs in nodeverbs need to know of the records ------------------


def reconcile(record: CountedRecord, held: list[MaybeMap]) -> tuple[CountedRecord, list[str]]:
    actual, diffs = reconcile_usage(record.usage, held)
    return record.with_sides(record.capacity, actual), diffs


def _capacity(record: CountedRecord) -> ProdMapJSON:
    return prodmap.to_json(record.capacity)


def _usage(record: CountedRecord) -> ProdMapJSON:
    return prodmap.to_json(record.usage)


def set_node_resource_capacity(call: CountedCall) -> BeforeAfter[ProdMapJSON]:
    from resource_extend.requests.sides import SetCapacity  # each verb creates its own request classes only

    request = SetCapacity.from_json(call.request, Payloads(call.plugin.record))

    def change(record: CountedRecord) -> CountedRecord:
        new = cards(request.request, request.resource, record.capacity)
        return record.with_sides(combine(record.capacity, new, [], request.delta, request.incr), record.usage)

    return set_side(call, request.nodename, change, _capacity, _capacity)


def set_node_resource_usage(call: CountedCall) -> BeforeAfter[ProdMapJSON]:
    from resource_extend.requests.sides import SetUsage

    request = SetUsage.from_json(call.request, Payloads(call.plugin.record))

    def change(record: CountedRecord) -> CountedRecord:
        usage = combine(record.usage, request.resource, request.workloads, request.delta, request.incr)
        return record.with_sides(record.capacity, usage)

    return set_side(call, request.nodename, change, _usage, _usage)


def get_most_idle_node(call: CountedCall) -> MostIdle:
    records = call.store.get_many(requests.nodenames(call.request))
    best, best_idle = "", float("inf")
    for node in sorted(records):
        record = records[node]
        idle = ratio(prodmap.count(record.usage), prodmap.count(record.capacity))
        if idle < best_idle:
            best, best_idle = node, idle
    return {"nodename": best, "priority": PRIORITY}
