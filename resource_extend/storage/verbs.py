"""The storage plugin: its record type, its metrics and the table of its verbs.

The node verbs live in ``node_verbs``, the scheduling verbs in ``calculate_verbs``. Differences from the
reference are the project's decisions: calculate-remap answers a no-op, get-metrics takes both request
shapes, and every read-modify-write is one guarded step.
"""

from __future__ import annotations

from resource_extend import params
from resource_extend.capacity import calculate_remap
from resource_extend.metrics import metrics_nodes
from resource_extend.storage.record import StorageRecord
from resource_extend.verb import Call, Plugin, Verb, metric_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

StorageCall = Call[StorageRecord]

# get-most-idle-node does not compare storage nodes: the first one named wins, with this priority.
PRIORITY = 1


METRICS_DESCRIPTION = [
    {
        "name": "storage_used",
        "help": "node used storage.",
        "type": "gauge",
        "labels": ["podname", "nodename"],
    },
    {
        "name": "storage_capacity",
        "help": "node available storage.",
        "type": "gauge",
        "labels": ["podname", "nodename"],
    },
]


def get_metrics_description(call: StorageCall) -> Any:
    return METRICS_DESCRIPTION


def metric_rows(pod: str, node: str, record: StorageRecord) -> list[dict[str, Any]]:
    """A node's two rows: used then capacity storage, in bytes as decimal strings."""
    used = record.usage.storage if record.usage is not None else 0
    capacity = record.capacity.storage if record.capacity is not None else 0
    labels = [pod, node]
    return [
        {"name": "storage_used", "labels": labels, "key": metric_key(node, "storage", "used"), "value": str(used)},
        {
            "name": "storage_capacity",
            "labels": list(labels),
            "key": metric_key(node, "storage", "capacity"),
            "value": str(capacity),
        },
    ]


def get_metrics(call: StorageCall) -> Any:
    nodes = metrics_nodes(call.request)
    records = call.store.get_many([name for _, name in nodes]) if nodes else {}
    rows = []
    for pod, name in nodes:
        rows += metric_rows(pod, name, records[name])
    return rows


def get_most_idle_node(call: StorageCall) -> Any:
    # The reference does not weigh storage nodes against each other and reads no record.
    return {"nodename": params.nodenames(call.request)[0], "priority": PRIORITY}


PLUGIN: Plugin[StorageRecord] = Plugin(
    name="storage",
    summary="volumes, flat storage and disk IO quotas",
    record=StorageRecord,
    verbs=(
        Verb("get-metrics-description", "describe the metrics this plugin reports", get_metrics_description),
        Verb("get-metrics", "capacity and usage metrics of nodes", get_metrics),
        Verb("add-node", "register a node's volumes, storage and disks", "resource_extend.storage.node_verbs:add_node"),
        Verb("remove-node", "forget a node", "resource_extend.storage.node_verbs:remove_node"),
        Verb(
            "get-nodes-deploy-capacity",
            "how many workloads of a request fit on each node",
            "resource_extend.storage.calculate_verbs:get_nodes_deploy_capacity",
        ),
        Verb(
            "set-node-resource-capacity",
            "change a node's capacity (absolute, delta or rollback)",
            "resource_extend.storage.node_verbs:set_node_resource_capacity",
        ),
        Verb(
            "get-node-resource-info",
            "a node's capacity and usage, checked against its workloads",
            "resource_extend.storage.node_verbs:get_node_resource_info",
        ),
        Verb(
            "get-nodes-resource-info",
            "capacity and usage of several nodes",
            "resource_extend.storage.node_verbs:get_nodes_resource_info",
        ),
        Verb(
            "set-node-resource-info",
            "overwrite a node's capacity and usage",
            "resource_extend.storage.node_verbs:set_node_resource_info",
        ),
        Verb(
            "set-node-resource-usage",
            "change a node's usage (absolute or delta)",
            "resource_extend.storage.node_verbs:set_node_resource_usage",
        ),
        Verb("get-most-idle-node", "the first of several nodes", get_most_idle_node),
        Verb(
            "fix-node-resource",
            "reset a node's usage to the sum of its workloads",
            "resource_extend.storage.node_verbs:fix_node_resource",
        ),
        Verb(
            "calculate-deploy",
            "plan volumes and storage for N new workloads on a node",
            "resource_extend.storage.calculate_verbs:calculate_deploy",
        ),
        Verb(
            "calculate-realloc",
            "plan a workload's new volumes and storage on its node",
            "resource_extend.storage.calculate_verbs:calculate_realloc",
        ),
        Verb(
            "calculate-remap",
            "no-op answer to core's remap (not advertised)",
            calculate_remap,
            advertised=False,
        ),
    ),
)
