"""A counted plugin's ``Kind``: what the shared node verbs in ``command/nodeverbs`` need of its records, as
pure functions of records and request values (record in, record or answer out). The command tree reads the
request, the store and writes; nothing here touches either (issue 37: one way).

Behaviour follows the GPU reference (see docs/gpu.md); the differences are the project's decisions: add-node
falls back to the engine's ``Resources["<name>"]``, and every read-modify-write is one guarded step.
"""

from __future__ import annotations

from resource_extend.goarith import ratio
from resource_extend.gpu import prodmap
from resource_extend.gpu.payloads import cards
from resource_extend.gpu.record import CountedRecord, combine, reconcile_usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.envelope.sides import SetCapacity, SetUsage
    from resource_extend.gpu.prodmap import MaybeMap, ProdMapJSON
    from resource_extend.plugin.answers import MostIdle

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


def capacity_change(request: SetCapacity[Any, Any]) -> Callable[[CountedRecord], CountedRecord]:
    """set-node-resource-capacity's change of a stored record."""

    def change(record: CountedRecord) -> CountedRecord:
        new = cards(request.request, request.resource, record.capacity)
        return record.with_sides(combine(record.capacity, new, [], request.delta, request.incr), record.usage)

    return change


def usage_change(request: SetUsage[Any, Any]) -> Callable[[CountedRecord], CountedRecord]:
    """set-node-resource-usage's change of a stored record."""

    def change(record: CountedRecord) -> CountedRecord:
        usage = combine(record.usage, request.resource, request.workloads, request.delta, request.incr)
        return record.with_sides(record.capacity, usage)

    return change


# The sides set-node-resource-capacity and set-node-resource-usage answer with, before and after.
capacity_before = capacity_after = _capacity
usage_before = usage_after = _usage


def most_idle(nodes: list[str], records: Callable[[], dict[str, CountedRecord]]) -> MostIdle:
    """The node whose cards are the least used, the first in name order of those alike."""
    stored = records()
    best, best_idle = "", float("inf")
    for node in sorted(stored):
        record = stored[node]
        idle = ratio(prodmap.count(record.usage), prodmap.count(record.capacity))
        if idle < best_idle:
            best, best_idle = node, idle
    return {"nodename": best, "priority": PRIORITY}
