"""The storage plugin's verb table: the verbs it answers its own way; ``nodeverbs`` adds the shared ones.

Calculate verbs are imported when one runs: they load the scheduler, which no node verb needs.
"""

from __future__ import annotations

from resource_extend import nodeverbs
from resource_extend.storage import node_verbs
from resource_extend.storage.record import StorageRecord
from resource_extend.verb import LazyModule, Plugin, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.storage import calculate_verbs, metrics
else:
    calculate_verbs = LazyModule("resource_extend.storage.calculate_verbs")
    metrics = LazyModule("resource_extend.storage.metrics")

OWN_VERBS: tuple[Verb[StorageRecord], ...] = (
    Verb("add-node", "register a node's volumes, storage and disks", nodeverbs.add_node),
    Verb(
        "set-node-resource-capacity",
        "change a node's capacity (absolute, delta or rollback)",
        node_verbs.set_node_resource_capacity,
    ),
    Verb("set-node-resource-usage", "change a node's usage (absolute or delta)", node_verbs.set_node_resource_usage),
    # The reference does not weigh storage nodes against each other.
    Verb("get-most-idle-node", "the first of several nodes", node_verbs.get_most_idle_node),
    *nodeverbs.calculate_verbs(
        calculate_verbs,
        "plan volumes and storage for N new workloads on a node",
        "plan a workload's new volumes and storage on its node",
    ),
)

PLUGIN = Plugin(
    "storage",
    "volumes, flat storage and disk IO quotas",
    StorageRecord,
    node_verbs,
    metrics,
    nodeverbs.verb_table(OWN_VERBS),
)
