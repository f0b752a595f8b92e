"""The GPU plugin's metrics: per product model, the cards a node has and the cards in use."""

from __future__ import annotations

from resource_extend.gpu.record import GpuRecord
from resource_extend.jsonio import Rendered
from resource_extend.metrics import gauge, json_string, node_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.metrics import MetricDescription

METRICS_DESCRIPTION: list[MetricDescription] = [
    gauge("gpu_capacity", "node available gpu.", ["podname", "nodename", "product"]),
    gauge("gpu_used", "node used gpu.", ["podname", "nodename", "product"]),
]


def render_rows(rows: Rendered, pod: str, node: str, record: GpuRecord) -> None:
    """Two rows per product the node has, capacity then used, products in name order; labels
    ``[pod, node, product]``, keys ``core.node.<node>.gpu.<product>.capacity`` and ``….used``."""
    labels, key = node_head(pod, node)
    usage = record.usage or {}
    for product, count in sorted((record.capacity or {}).items()):
        name = json_string(product)
        start = f"{labels},{name}],{key}gpu.{name[1:-1]}"
        capacity = f'{{"name":"gpu_capacity",{start}.capacity","value":"{count}"}}'
        used = f'{{"name":"gpu_used",{start}.used","value":"{usage.get(product, 0)}"}}'
        rows.items += (capacity, used)
        if not rows.samples:
            rows.samples.update(gpu_capacity=capacity, gpu_used=used)
