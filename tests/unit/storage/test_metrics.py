"""The storage plugin's metric rows (storage/metrics.py)."""

from __future__ import annotations

import json

from resource_extend.formats.jsonio import Rendered, dumps
from resource_extend.storage.metrics import render_rows
from tests.support import FOUR, TiB


def test_metric_rows_use_a_dot_free_key_and_the_raw_name_in_labels() -> None:
    rows = Rendered()
    render_rows(rows, "pod", "a.b", FOUR)
    assert json.loads(dumps(rows)) == [
        {"name": "storage_used", "labels": ["pod", "a.b"], "key": "core.node.a_b.storage.used", "value": "0"},
        {"name": "storage_capacity", "labels": ["pod", "a.b"], "key": "core.node.a_b.storage.capacity",
         "value": str(4 * TiB)},
    ]  # fmt: skip
