"""The GPU plugin's verb table: the verbs it answers its own way; ``nodeverbs`` adds the shared ones.

Calculate verbs are imported when one runs, so a node verb loads no planning code.
"""

from __future__ import annotations

from resource_extend import nodeverbs
from resource_extend.gpu import node_verbs
from resource_extend.gpu.record import GpuRecord
from resource_extend.verb import LazyModule, Plugin, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.gpu import calculate_verbs, metrics
else:
    calculate_verbs = LazyModule("resource_extend.gpu.calculate_verbs")
    metrics = LazyModule("resource_extend.gpu.metrics")

OWN_VERBS: tuple[Verb[GpuRecord], ...] = (
    Verb("add-node", "register a node's GPUs", nodeverbs.add_node),
    Verb(
        "set-node-resource-capacity",
        "change a node's capacity (absolute or delta)",
        node_verbs.set_node_resource_capacity,
    ),
    Verb("set-node-resource-usage", "change a node's usage (absolute or delta)", node_verbs.set_node_resource_usage),
    Verb("get-most-idle-node", "the least used of several nodes", node_verbs.get_most_idle_node),
    *nodeverbs.calculate_verbs(
        calculate_verbs, "plan cards for N new workloads on a node", "plan a workload's new cards on its node"
    ),
)

PLUGIN = Plugin("gpu", "GPU cards per product model", GpuRecord, node_verbs, metrics, nodeverbs.verb_table(OWN_VERBS))
