"""What both plugins' metrics share (metrics.py): the get-metrics request in both shapes, and rows written as
JSON text that must be, byte for byte, the rows of the spec encoded the usual way."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.formats.bigdocs import representatives
from resource_extend.formats.validation import check
from resource_extend.gpu import metrics as gpu_metrics
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.metrics import metrics_nodes
from resource_extend.storage import metrics as storage_metrics
from resource_extend.storage.record import NodeResource, StorageRecord


def test_metrics_requests_come_in_both_shapes() -> None:
    assert metrics_nodes({"nodes": [{"podname": "p", "nodename": "n"}, {"nodename": None}]}) == [("p", "n"), ("", "")]
    assert metrics_nodes({"podname": "p", "nodename": "n"}) == [("p", "n")]
    with pytest.raises(PluginError):
        metrics_nodes({"nodes": "n"})


def test_metrics_requests_take_both_shapes_and_null_entries() -> None:
    from resource_extend.metrics import metrics_nodes

    assert metrics_nodes({"nodes": [{"podname": "p", "nodename": "n"}, None]}) == [("p", "n"), ("", "")]
    assert metrics_nodes({"podname": "p", "nodename": "n"}) == [("p", "n")]
    assert metrics_nodes({"nodes": None}) == [] and metrics_nodes({}) == []
    with pytest.raises(PluginError, match="podname and nodename must be strings"):
        metrics_nodes({"nodes": [{"nodename": 5}]})


# The rows as the spec writes them (protocol-and-gpu.md, storage-types.md), built as values: the oracle.
def spec_row(name: str, labels: list[str], node: str, rest: list[str], value: int) -> dict[str, Any]:
    key = ".".join(["core.node", node.replace(".", "_"), *rest])
    return {"name": name, "labels": labels, "key": key, "value": str(value)}


def spec_gpu_rows(pod: str, node: str, record: GpuRecord) -> list[dict[str, Any]]:
    usage = record.usage or {}
    rows = []
    for product, count in sorted((record.capacity or {}).items()):
        labels = [pod, node, product]
        rows.append(spec_row("gpu_capacity", labels, node, ["gpu", product, "capacity"], count))
        rows.append(spec_row("gpu_used", labels, node, ["gpu", product, "used"], usage.get(product, 0)))
    return rows


def spec_storage_rows(pod: str, node: str, record: StorageRecord) -> list[dict[str, Any]]:
    used = record.usage.storage if record.usage is not None else 0
    capacity = record.capacity.storage if record.capacity is not None else 0
    return [
        spec_row("storage_used", [pod, node], node, ["storage", "used"], used),
        spec_row("storage_capacity", [pod, node], node, ["storage", "capacity"], capacity),
    ]


# Names with what JSON and Go escape (quotes, backslashes, controls, <>&, U+2028/9), dots and non-ASCII.
names = st.text(st.sampled_from('ab.-_"\\\n\x00\x1f<>&\u2028\u2029ñ\u4e00\U0001f600'), max_size=8) | st.text(max_size=6)
int64s = st.integers(-(2**63), 2**63 - 1)
gpu_maps = st.none() | st.dictionaries(names, int64s, max_size=4)
gpu_records = st.builds(GpuRecord, gpu_maps, gpu_maps)
sides = st.none() | st.builds(NodeResource, storage=int64s)
storage_records = st.builds(StorageRecord, sides, sides)


# Each plugin's renderer, the spec's rows it must write, and the records it reads.
PLUGINS: dict[str, tuple[Any, Any, st.SearchStrategy[Any]]] = {
    "gpu": (gpu_metrics.render_rows, spec_gpu_rows, gpu_records),
    "storage": (storage_metrics.render_rows, spec_storage_rows, storage_records),
}


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
@given(data=st.data())
def test_rows_written_as_text_are_the_spec_rows_encoded(plugin: str, data: st.DataObject) -> None:
    render, spec, records = PLUGINS[plugin]
    rows, expected = jsonio.Rendered(), []
    for pod, node, record in data.draw(st.lists(st.tuples(names, names, records), max_size=6)):
        render(rows, pod, node, record)
        expected += spec(pod, node, record)
    assert jsonio.dumps(rows) == jsonio.dumps(expected)
    assert representatives("get-metrics", rows) == expected[:2]
    check(plugin, "get-metrics", "response", rows)
