"""The storage plugin's manifest: volumes, flat storage and disk IO quotas.

Its calculate verbs, checks and metrics are imported when one runs: they load the scheduler, which no node
verb needs.
"""

from __future__ import annotations

from resource_extend.plugin import LazyModule, Plugin, Summaries
from resource_extend.storage import node_verbs
from resource_extend.storage.payloads import PAYLOADS
from resource_extend.storage.record import StorageRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.storage import calculate_verbs, checks, metrics
else:
    calculate_verbs = LazyModule("resource_extend.storage.calculate_verbs")
    checks = LazyModule("resource_extend.storage.checks")
    metrics = LazyModule("resource_extend.storage.metrics")

PLUGIN: Plugin[StorageRecord] = Plugin(
    "storage",
    "volumes, flat storage and disk IO quotas",
    record=StorageRecord,
    payloads=PAYLOADS,
    kind=node_verbs,
    metrics=metrics,
    checks=checks,
    calculate=calculate_verbs,
    summaries=Summaries(
        add_node="register a node's volumes, storage and disks",
        set_capacity="change a node's capacity (absolute, delta or rollback)",
        # The reference does not weigh storage nodes against each other.
        most_idle="the first of several nodes",
        deploy="plan volumes and storage for N new workloads on a node",
        realloc="plan a workload's new volumes and storage on its node",
    ),
)
