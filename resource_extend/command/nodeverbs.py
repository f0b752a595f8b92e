"""The node verbs both plugins answer alike, written once; each plugin's ``node_verbs`` module is its ``Kind``.

The shared part is the protocol: the "already exists" check before add-node decodes its resources,
``null`` for a node without a record (get-node-resource-info and, decision 13, fix-node-resource), the
shape of each answer, the get-metrics loop and calculate-remap's no-op. What a record holds is the kind's:
each verb's request is read into a value (``envelope``, with the plugin's ``payloads`` module), once,
before the verb's logic runs, and the kind says the usage a node's workloads add up to and where it differs; a
node's metric rows are the plugin's ``metrics`` module's. ``verb_table`` builds a plugin's whole table
from its manifest. The verbs that keep a node's record rather than serve a workload (add-node, remove-node,
set-node-resource-info, fix-node-resource, the many-node reads and metrics) are in ``nodeupkeep``, which
only they load.
"""

from __future__ import annotations

from resource_extend import envelope, errors
from resource_extend.command.verb import Call, Table, Verb
from resource_extend.plugin import LazyModule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, TypeVar

    from resource_extend.command import deploy as plans
    from resource_extend.command import nodeupkeep as upkeep
    from resource_extend.plugin import Plugin
    from resource_extend.plugin.answers import BeforeAfter, NodeInfo, Remap
    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)
    S = TypeVar("S")
else:
    # The verbs that keep a node's record (add-node, fix-node-resource, the metrics, ...): imported when one
    # runs, so that get-node-resource-info, set-node-resource-usage and calculate-deploy never load them.
    upkeep = LazyModule("resource_extend.command.nodeupkeep")
    # The verbs that plan: imported when one runs, with the plugin's ``calculate`` module they hand to.
    plans = LazyModule("resource_extend.command.deploy")


def get_node_resource_info(call: Call[R]) -> NodeInfo | None:
    from resource_extend.envelope.nodeinfo import NodeWorkloads

    request = NodeWorkloads.from_json(call.request, call.plugin.payloads)
    try:
        record = call.store.get(request.nodename)
    except errors.NodeNotExists:
        return None  # the reference answers null for a node it has no record of
    # Read before the workloads are parsed, as the reference does: an unknown node is null whatever they hold.
    return node_info(record, call.plugin.kind.reconcile(record, request.held())[1])


def node_info(record: Record, diffs: list[str]) -> NodeInfo:
    return {**record.to_json(), "diffs": diffs}


def set_side(
    call: Call[R], nodename: str, change: Callable[[R], R], before: Callable[[R], S], after: Callable[[R], S]
) -> BeforeAfter[S]:
    """set-node-resource-capacity's and set-node-resource-usage's one guarded write and their answer.

    ``change`` makes the new record from the stored one; a node without a record reads as the empty record
    both there and in ``before``, the side of the old record answered (``after`` that of the new one).
    """
    empty = call.plugin.record.empty
    done = call.store.update(nodename, lambda stored: change(stored or empty()))
    return {"before": before(done.before or empty()), "after": after(done.after)}


def set_node_resource_capacity(call: Call[R]) -> BeforeAfter[object]:
    from resource_extend.envelope.sides import SetCapacity  # each verb creates its own request classes only

    request = SetCapacity.from_json(call.request, call.plugin.payloads)
    kind = call.plugin.kind
    return set_side(call, request.nodename, kind.capacity_change(request), kind.capacity_before, kind.capacity_after)


def set_node_resource_usage(call: Call[R]) -> BeforeAfter[object]:
    from resource_extend.envelope.sides import SetUsage

    request = SetUsage.from_json(call.request, call.plugin.payloads)
    kind = call.plugin.kind
    return set_side(call, request.nodename, kind.usage_change(request), kind.usage_before, kind.usage_after)


def get_most_idle_node(call: Call[R]) -> object:
    nodes = envelope.nodenames(call.request)
    return call.plugin.kind.most_idle(nodes, lambda: call.store.get_many(nodes))


def calculate_remap(call: Call[R]) -> Remap:
    """Upstream core calls calculate-remap on every plugin and fails the remap on any error: a no-op answer."""
    return {"engine_params_map": {}}


def verb_table(plugin: Plugin[R]) -> Table[R]:
    """Every verb core calls, in the reference's order (what `verbs` lists and `--help` shows): the shared
    handlers above and in ``nodeupkeep``, the kind's own node verbs and the calculate verbs; ``nodeupkeep`` and
    the manifest's ``calculate`` (``LazyModule``s, so a node verb never imports the calculate verbs) are looked
    up only when one of their verbs runs."""
    # The planning functions are taken from the manifest's ``calculate`` (a LazyModule) as the verb starts: a
    # calculate verb loads its plugin's scheduling code before its call is read, with the code the start
    # preloads for it (build.py's verb_preloads).
    calculate, words = plugin.calculate, plugin.summaries
    verbs: tuple[Verb[R], ...] = (
        Verb(
            "get-metrics-description",
            "describe the metrics this plugin reports",
            lambda call: upkeep.get_metrics_description(call),
        ),
        Verb("get-metrics", "capacity and usage metrics of nodes", lambda call: upkeep.get_metrics(call)),
        Verb("add-node", words.add_node, lambda call: upkeep.add_node(call)),
        Verb("remove-node", "forget a node", lambda call: upkeep.remove_node(call)),
        Verb(
            "get-nodes-deploy-capacity",
            "how many workloads of a request fit on each node",
            lambda call: plans.get_nodes_deploy_capacity(call, calculate.node_capacity),
        ),
        Verb("set-node-resource-capacity", words.set_capacity, set_node_resource_capacity),
        Verb(
            "get-node-resource-info",
            "a node's capacity and usage, checked against its workloads",
            get_node_resource_info,
        ),
        Verb(
            "get-nodes-resource-info",
            "capacity and usage of several nodes",
            lambda call: upkeep.get_nodes_resource_info(call),
        ),
        Verb(
            "set-node-resource-info",
            "overwrite a node's capacity and usage",
            lambda call: upkeep.set_node_resource_info(call),
        ),
        Verb(
            "set-node-resource-usage",
            "change a node's usage (absolute or delta)",
            set_node_resource_usage,
        ),
        Verb("get-most-idle-node", words.most_idle, get_most_idle_node),
        Verb(
            "fix-node-resource",
            "reset a node's usage to the sum of its workloads",
            lambda call: upkeep.fix_node_resource(call),
        ),
        Verb(
            "calculate-deploy",
            words.deploy,
            lambda call: plans.calculate_deploy(call, calculate.commit_precheck, calculate.plan_deploy),
        ),
        Verb("calculate-realloc", words.realloc, lambda call: plans.calculate_realloc(call, calculate.plan_realloc)),
        # Upstream core calls it, but it is left out of `verbs` (spec decision 1).
        Verb("calculate-remap", "no-op answer to core's remap (not advertised)", calculate_remap, advertised=False),
    )
    return Table(plugin, verbs)
