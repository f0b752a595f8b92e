"""The storage plugin's metrics: a node's flat storage, used and in all, in bytes."""

from __future__ import annotations

from resource_extend.formats.jsonio import Rendered
from resource_extend.metrics import gauge, node_head
from resource_extend.storage.record import StorageRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.metrics import MetricDescription

METRICS_DESCRIPTION: list[MetricDescription] = [
    gauge("storage_used", "node used storage.", ["podname", "nodename"]),
    gauge("storage_capacity", "node available storage.", ["podname", "nodename"]),
]


def describe(record: type[StorageRecord]) -> list[MetricDescription]:
    """The two gauges, the same for every storage node."""
    return METRICS_DESCRIPTION


def render_rows(rows: Rendered, pod: str, node: str, record: StorageRecord) -> None:
    """A node's two rows, used then capacity storage in bytes; labels ``[pod, node]``, keys
    ``core.node.<node>.storage.used`` and ``….capacity``. Written as one item (one text, one append)."""
    labels, key = node_head(pod, node)
    used = record.usage.storage if record.usage is not None else 0
    capacity = record.capacity.storage if record.capacity is not None else 0
    if rows.samples:
        rows.items.append(
            f'{{"name":"storage_used",{labels}],{key}storage.used","value":"{used}"}},'
            f'{{"name":"storage_capacity",{labels}],{key}storage.capacity","value":"{capacity}"}}'
        )
        return
    used_row = f'{{"name":"storage_used",{labels}],{key}storage.used","value":"{used}"}}'
    capacity_row = f'{{"name":"storage_capacity",{labels}],{key}storage.capacity","value":"{capacity}"}}'
    rows.items += (used_row, capacity_row)
    rows.samples.update(storage_used=used_row, storage_capacity=capacity_row)
