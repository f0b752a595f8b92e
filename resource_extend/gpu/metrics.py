"""The GPU plugin's metrics: per product model, the cards a node has and the cards in use."""

from __future__ import annotations

from resource_extend.gpu.record import GpuRecord
from resource_extend.metrics import gauge, metric_key, row

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.metrics import MetricDescription, MetricRow

METRICS_DESCRIPTION: list[MetricDescription] = [
    gauge("gpu_capacity", "node available gpu.", ["podname", "nodename", "product"]),
    gauge("gpu_used", "node used gpu.", ["podname", "nodename", "product"]),
]


def metric_rows(pod: str, node: str, record: GpuRecord) -> list[MetricRow]:
    """Two rows per product the node has, capacity then used, products in name order."""
    usage = record.usage or {}
    rows = []
    for product, k in sorted((record.capacity or {}).items()):
        labels = [pod, node, product]
        rows.append(row("gpu_capacity", labels, metric_key(node, "gpu", product, "capacity"), k))
        rows.append(row("gpu_used", labels, metric_key(node, "gpu", product, "used"), usage.get(product, 0)))
    return rows
