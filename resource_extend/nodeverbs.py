"""The node verbs both plugins answer alike, written once; each plugin's ``node_verbs`` module is its ``Kind``.

The shared part is the protocol: the "already exists" check before add-node decodes its resources,
``null`` for a node without a record (get-node-resource-info and, decision 13, fix-node-resource), the
shape of each answer, the get-metrics loop and calculate-remap's no-op. What a record holds is the kind's:
each verb's request is parsed by the kind (its plugin's ``request`` module) into a value, once, before
the verb's logic runs, and the kind says the usage a node's workloads add up to and where it differs; a
node's metric rows are the plugin's ``metrics`` module's. ``verb_table`` builds a plugin's whole table
from its manifest.
"""

from __future__ import annotations

from resource_extend import errors, params
from resource_extend.errors import PluginError
from resource_extend.store import check_node_name
from resource_extend.verb import Call, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, TypeVar

    from resource_extend.answers import BeforeAfter, Empty, NodeInfo, NodesInfo, Remap
    from resource_extend.jsonio import Rendered
    from resource_extend.kind import Record, RecordJSON
    from resource_extend.metrics import MetricDescription
    from resource_extend.verb import Plugin

    R = TypeVar("R", bound=Record)
    S = TypeVar("S")


def add_node(call: Call[R]) -> RecordJSON:
    from resource_extend.params.records import AddNode  # each verb creates its own request classes only

    request = AddNode.from_json(call.request, call.plugin.payloads)
    node = request.nodename
    # The reference checks for an existing record before it reads the request's resources; an
    # unreadable record exists too (set-node-resource-info or remove-node replaces it).
    check_node_name(node)  # before "node already exists": a name no write may use is refused as such
    if call.store.exists(node):
        raise PluginError(f"node already exists: {node}")
    return call.store.create(node, request.record()).to_json()


def remove_node(call: Call[R]) -> Empty:
    call.store.delete(params.nodename(call.request))
    return {}


def set_node_resource_info(call: Call[R]) -> Empty:
    from resource_extend.params.records import SetInfo

    request = SetInfo.from_json(call.request, call.plugin.payloads)
    call.store.put(request.nodename, request.record)
    return {}


def get_node_resource_info(call: Call[R]) -> NodeInfo | None:
    from resource_extend.params.nodeinfo import NodeWorkloads

    request = NodeWorkloads.from_json(call.request, call.plugin.payloads)
    try:
        record = call.store.get(request.nodename)
    except errors.NodeNotExists:
        return None  # the reference answers null for a node it has no record of
    # Read before the workloads are parsed, as the reference does: an unknown node is null whatever they hold.
    return _info(record, call.plugin.kind.reconcile(record, request.held())[1])


def fix_node_resource(call: Call[R]) -> NodeInfo | None:
    from resource_extend.params.nodeinfo import NodeWorkloads

    kind = call.plugin.kind
    request = NodeWorkloads.from_json(call.request, call.plugin.payloads)
    node, held = request.nodename, request.held()

    def change(stored: R | None) -> R:
        if stored is None:
            raise errors.NodeNotExists(node)
        fixed, diffs = kind.reconcile(stored, held)
        return fixed if diffs else stored

    try:
        done = call.store.update(node, change)
    except errors.NodeNotExists:
        return None  # decision 13: like get-node-resource-info, and nothing is written
    assert done.before is not None
    return _info(done.after, kind.reconcile(done.before, held)[1])


def _info(record: Record, diffs: list[str]) -> NodeInfo:
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


def get_nodes_resource_info(call: Call[R]) -> NodesInfo:
    records = call.store.get_many(params.bulk_nodenames(call.request))
    return {"node_resource_info_map": {node: record.to_json() for node, record in records.items()}}


def get_metrics_description(call: Call[R]) -> list[MetricDescription]:
    return call.plugin.metrics.describe(call.plugin.record)


def get_metrics(call: Call[R]) -> Rendered:
    from resource_extend.jsonio import Rendered
    from resource_extend.metrics import metrics_nodes  # like the plugin's rows: no other verb needs it

    nodes = metrics_nodes(call.request)
    records = call.store.get_many([name for _, name in nodes]) if nodes else {}
    rows, render = Rendered(), call.plugin.metrics.render_rows
    for pod, name in nodes:
        render(rows, pod, name, records[name])
    return rows


def calculate_remap(call: Call[R]) -> Remap:
    """Upstream core calls calculate-remap on every plugin and fails the remap on any error: a no-op answer."""
    return {"engine_params_map": {}}


def verb_table(plugin: Plugin[R]) -> tuple[Verb[R], ...]:
    """Every verb core calls, in the reference's order (what `verbs` lists and `--help` shows): the shared
    handlers above, the kind's own node verbs and the calculate verbs, each looked up in the manifest's
    ``calculate`` (a ``LazyModule``, so a node verb never imports it) only when it runs. ``prefetch``: the
    verb's first store operation reads the request's node, which the call asks etcd for early (cli.answer)."""
    kind, calculate, words = plugin.kind, plugin.calculate, plugin.summaries
    return (
        Verb("get-metrics-description", "describe the metrics this plugin reports", get_metrics_description),
        Verb("get-metrics", "capacity and usage metrics of nodes", get_metrics),
        Verb("add-node", words.add_node, add_node, prefetch=True),
        Verb("remove-node", "forget a node", remove_node),
        Verb(
            "get-nodes-deploy-capacity",
            "how many workloads of a request fit on each node",
            lambda call: calculate.get_nodes_deploy_capacity(call),
        ),
        Verb("set-node-resource-capacity", words.set_capacity, kind.set_node_resource_capacity, prefetch=True),
        Verb(
            "get-node-resource-info",
            "a node's capacity and usage, checked against its workloads",
            get_node_resource_info,
            prefetch=True,
        ),
        Verb("get-nodes-resource-info", "capacity and usage of several nodes", get_nodes_resource_info),
        Verb("set-node-resource-info", "overwrite a node's capacity and usage", set_node_resource_info),
        Verb(
            "set-node-resource-usage",
            "change a node's usage (absolute or delta)",
            kind.set_node_resource_usage,
            prefetch=True,
        ),
        Verb("get-most-idle-node", words.most_idle, kind.get_most_idle_node),
        Verb("fix-node-resource", "reset a node's usage to the sum of its workloads", fix_node_resource, prefetch=True),
        Verb("calculate-deploy", words.deploy, lambda call: calculate.calculate_deploy(call), prefetch=True),
        Verb("calculate-realloc", words.realloc, lambda call: calculate.calculate_realloc(call), prefetch=True),
        # Upstream core calls it, but it is left out of `verbs` (spec decision 1).
        Verb("calculate-remap", "no-op answer to core's remap (not advertised)", calculate_remap, advertised=False),
    )
