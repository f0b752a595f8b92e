"""A counted plugin's metrics: per product model, the cards (or NICs) a node has and those in use; the metric
names are the plugin's (``gpu_capacity``, ``gpu_used``)."""

from __future__ import annotations

from resource_extend.counted.record import CountedRecord
from resource_extend.jsonio import Rendered
from resource_extend.metrics import gauge, json_string, node_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.metrics import MetricDescription


def describe(record: type[CountedRecord]) -> list[MetricDescription]:
    """``<name>_capacity`` and ``<name>_used``, labelled by pod, node and product."""
    name = record.NAME
    return [
        gauge(f"{name}_capacity", f"node available {name}.", ["podname", "nodename", "product"]),
        gauge(f"{name}_used", f"node used {name}.", ["podname", "nodename", "product"]),
    ]


def render_rows(rows: Rendered, pod: str, node: str, record: CountedRecord) -> None:
    """Two rows per product the node has, capacity then used, products in name order; labels
    ``[pod, node, product]``, keys ``core.node.<node>.<name>.<product>.capacity`` and ``….used``."""
    labels, key = node_head(pod, node)
    usage, metric = record.usage or {}, record.NAME
    for product, count in sorted((record.capacity or {}).items()):
        name = json_string(product)
        start = f"{labels},{name}],{key}{metric}.{name[1:-1]}"
        capacity = f'{{"name":"{metric}_capacity",{start}.capacity","value":"{count}"}}'
        used = f'{{"name":"{metric}_used",{start}.used","value":"{usage.get(product, 0)}"}}'
        rows.items += (capacity, used)
        if not rows.samples:
            rows.samples.update({f"{metric}_capacity": capacity, f"{metric}_used": used})
