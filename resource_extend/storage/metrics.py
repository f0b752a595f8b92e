"""The storage plugin's metrics: a node's flat storage, used and in all, in bytes."""

from __future__ import annotations

from resource_extend.metrics import gauge, metric_key, row
from resource_extend.storage.record import StorageRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.metrics import MetricDescription, MetricRow

METRICS_DESCRIPTION: list[MetricDescription] = [
    gauge("storage_used", "node used storage.", ["podname", "nodename"]),
    gauge("storage_capacity", "node available storage.", ["podname", "nodename"]),
]


def metric_rows(pod: str, node: str, record: StorageRecord) -> list[MetricRow]:
    """A node's two rows: used then capacity storage, in bytes as decimal strings."""
    used = record.usage.storage if record.usage is not None else 0
    capacity = record.capacity.storage if record.capacity is not None else 0
    return [
        row("storage_used", [pod, node], metric_key(node, "storage", "used"), used),
        row("storage_capacity", [pod, node], metric_key(node, "storage", "capacity"), capacity),
    ]
