"""The GPU plugin's verb table: the verbs it answers its own way; the rest are ``nodeverbs``'s.

Calculate verbs are imported when one runs, so a node verb loads no scheduling code.
"""

from __future__ import annotations

from resource_extend import nodeverbs
from resource_extend.gpu import node_verbs
from resource_extend.gpu.record import GpuRecord
from resource_extend.verb import LazyModule, Plugin, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.gpu import calculate_verbs
else:
    calculate_verbs = LazyModule("resource_extend.gpu.calculate_verbs")

PLUGIN: Plugin[GpuRecord] = Plugin(
    name="gpu",
    summary="GPU cards per product model",
    record=GpuRecord,
    kind=node_verbs.KIND,
    verbs=nodeverbs.verb_table(
        (
            Verb("add-node", "register a node's GPUs", nodeverbs.add_node),
            Verb(
                "get-nodes-deploy-capacity",
                "how many workloads of a request fit on each node",
                lambda call: calculate_verbs.get_nodes_deploy_capacity(call),
            ),
            Verb(
                "set-node-resource-capacity",
                "change a node's capacity (absolute or delta)",
                node_verbs.set_node_resource_capacity,
            ),
            Verb(
                "set-node-resource-usage",
                "change a node's usage (absolute or delta)",
                node_verbs.set_node_resource_usage,
            ),
            Verb("get-most-idle-node", "the least used of several nodes", node_verbs.get_most_idle_node),
            Verb(
                "calculate-deploy",
                "plan cards for N new workloads on a node",
                lambda call: calculate_verbs.calculate_deploy(call),
            ),
            Verb(
                "calculate-realloc",
                "plan a workload's new cards on its node",
                lambda call: calculate_verbs.calculate_realloc(call),
            ),
        )
    ),
)
