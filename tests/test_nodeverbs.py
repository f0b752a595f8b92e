"""The node verbs both plugins answer through ``resource_extend.command.nodeverbs``, as core sees them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, PluginDir

UNPARSABLE_WORKLOADS = {"storage": [{"volumes_request": ["::bad::"]}], "gpu": [{"prod_count_map": {"a": 1}}, "x"]}


@pytest.mark.parametrize("plugin", PLUGINS)
def test_an_unknown_node_answers_null_whatever_its_workloads_hold(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str
) -> None:
    # The record is read first, as the reference reads it: the workloads of a node it has no record of
    # are never parsed, so even bindings that do not parse get null, not an error.
    node = PluginDir(plugin, tmp_path, etcd, prefix)
    request: dict[str, Any] = {"nodename": "ghost", "workloads_resource": UNPARSABLE_WORKLOADS[plugin]}
    assert node.ok("get-node-resource-info", request) is None
    assert node.ok("fix-node-resource", {"nodename": "ghost"}) is None
    assert etcd.dump(prefix) == {}
