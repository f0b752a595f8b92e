"""The node verbs both plugins answer alike that keep a node's record rather than plan on it: add-node,
remove-node, set-node-resource-info, fix-node-resource, get-nodes-resource-info and the metrics.

Apart from ``nodeverbs`` (the verb table, get-node-resource-info and the set verbs' write) so that the calls
core makes for every workload (get-node-resource-info, set-node-resource-usage, calculate-deploy) never
unmarshal this code: the verb table names this module through a ``LazyModule``, so a call imports it only
when it runs one of these verbs.
"""

from __future__ import annotations

from resource_extend import envelope, errors
from resource_extend.errors import PluginError
from resource_extend.store.nodes import check_node_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from resource_extend.command.verb import Call
    from resource_extend.formats.jsonio import Rendered
    from resource_extend.metrics import MetricDescription
    from resource_extend.plugin.answers import Empty, NodeInfo, NodesInfo
    from resource_extend.store.record import Record, RecordJSON

    R = TypeVar("R", bound=Record)


def add_node(call: Call[R]) -> RecordJSON:
    from resource_extend.envelope.records import AddNode  # each verb creates its own request classes only

    request = AddNode.from_json(call.request, call.plugin.payloads)
    node = request.nodename
    # The reference checks for an existing record before it reads the request's resources; an
    # unreadable record exists too (set-node-resource-info or remove-node replaces it).
    check_node_name(node)  # before "node already exists": a name no write may use is refused as such
    # The record and its token key in one read: the create is guarded by both (NodeStore._write).
    read = call.store.read(node)
    if read.entries[0] is not None:
        raise PluginError(f"node already exists: {node}")
    return call.store.create(node, request.record(), read).to_json()


def remove_node(call: Call[R]) -> Empty:
    call.store.delete(envelope.nodename(call.request))
    return {}


def set_node_resource_info(call: Call[R]) -> Empty:
    from resource_extend.envelope.records import SetInfo

    request = SetInfo.from_json(call.request, call.plugin.payloads)
    call.store.put(request.nodename, request.record)
    return {}


def fix_node_resource(call: Call[R]) -> NodeInfo | None:
    from resource_extend.envelope.nodeinfo import NodeWorkloads

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
    return {**done.after.to_json(), "diffs": kind.reconcile(done.before, held)[1]}


def get_nodes_resource_info(call: Call[R]) -> NodesInfo:
    records = call.store.get_many(envelope.bulk_nodenames(call.request))
    return {"node_resource_info_map": {node: record.to_json() for node, record in records.items()}}


def get_metrics_description(call: Call[R]) -> list[MetricDescription]:
    return call.plugin.metrics.describe(call.plugin.record)


def get_metrics(call: Call[R]) -> Rendered:
    from resource_extend.formats import bigdocs  # noqa: F401  (checks the request and answer: loaded with the verb's code)
    from resource_extend.formats.jsonio import Rendered
    from resource_extend.metrics import metrics_nodes  # like the plugin's rows: no other verb needs it

    nodes = metrics_nodes(call.request)
    records = call.store.get_many([name for _, name in nodes]) if nodes else {}
    rows, render = Rendered(), call.plugin.metrics.render_rows
    for pod, name in nodes:
        render(rows, pod, name, records[name])
    return rows
