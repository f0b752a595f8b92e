"""The storage plugin's metric rows (storage/metrics.py)."""

from __future__ import annotations

from resource_extend.storage.metrics import metric_rows
from tests.support import FOUR, TiB


def test_metric_rows_use_a_dot_free_key_and_the_raw_name_in_labels() -> None:
    rows = metric_rows("pod", "a.b", FOUR)
    assert [(r["name"], r["key"], r["value"]) for r in rows] == [
        ("storage_used", "core.node.a_b.storage.used", "0"),
        ("storage_capacity", "core.node.a_b.storage.capacity", str(4 * TiB)),
    ]
    assert rows[0]["labels"] == ["pod", "a.b"]
