"""The get-metrics request both plugins read (metrics.py): both shapes, null entries."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.metrics import metrics_nodes


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
