"""A counted plugin's metrics: per product model, the cards (or NICs) a node has and those in use; the metric
names are the plugin's (``gpu_capacity``, ``gpu_used``)."""

from __future__ import annotations

from resource_extend.formats.jsonio import Rendered
from resource_extend.gpu.record import CountedRecord
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
    ``[pod, node, product]``, keys ``core.node.<node>.<name>.<product>.capacity`` and ``….used``.

    A product's fixed texts are written once per answer (``rows.parts``): a cluster has few models."""
    labels, key = node_head(pod, node)
    usage, parts = record.usage or {}, rows.parts
    for product, count in sorted((record.capacity or {}).items()):
        fixed = parts.get(product)
        if fixed is None:
            fixed = parts[product] = _product_parts(record.NAME, product)
        head, middle, capacity_tail, used_head, used_tail = fixed
        if rows.samples:
            rows.items.append(
                f'{head}{labels}{middle}{key}{capacity_tail}{count}"}},'
                f'{used_head}{labels}{middle}{key}{used_tail}{usage.get(product, 0)}"}}'
            )
            continue
        capacity = f'{head}{labels}{middle}{key}{capacity_tail}{count}"}}'
        used = f'{used_head}{labels}{middle}{key}{used_tail}{usage.get(product, 0)}"}}'
        rows.items += (capacity, used)
        rows.samples.update({f"{record.NAME}_capacity": capacity, f"{record.NAME}_used": used})


def _product_parts(metric: str, product: str) -> tuple[str, str, str, str, str]:
    """What a product's two rows hold besides the node's labels and key and the counts."""
    name = json_string(product)
    return (
        f'{{"name":"{metric}_capacity",',
        f",{name}],",
        f'{metric}.{name[1:-1]}.capacity","value":"',
        f'{{"name":"{metric}_used",',
        f'{metric}.{name[1:-1]}.used","value":"',
    )
