"""The lines an operator meets first name the fix that applies (issue 32), through the built executables.

A wrong ``etcd.prefix`` reads as every node missing: a "no record" line names the key it looked at and the
prefix, and says to check the prefix before adding the node (add-node under the wrong prefix would register
it a second time there).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PluginDir

NO_RECORD = {
    ("gpu", "calculate-deploy"): {
        "nodename": "g2",
        "deploy_count": 1,
        "workload_resource_request": {"prod_count_map": {"nvidia-3090": 1}},
    },
    ("gpu", "calculate-realloc"): {
        "nodename": "g2",
        "workload_resource": {"prod_count_map": {"nvidia-3090": 1}},
        "workload_resource_request": {"prod_count_map": {"nvidia-3090": 1}},
    },
    ("storage", "calculate-deploy"): {
        "nodename": "g2",
        "deploy_count": 1,
        "workload_resource_request": {"storage": "1G"},
    },
    ("storage", "calculate-realloc"): {
        "nodename": "g2",
        "workload_resource": {"storage_request": 1, "storage_limit": 1},
        "workload_resource_request": {"storage": "1G"},
    },
}


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    (tmp_path / "storage").mkdir()
    return PluginDir("storage", tmp_path / "storage", etcd, prefix)


def one_line(out: Any) -> str:
    assert (out.status, out.stdout) == (128, ""), out
    (line,) = out.stderr.splitlines()
    return str(line)


@pytest.mark.parametrize(("plugin", "verb"), sorted(NO_RECORD))
def test_a_plan_on_a_node_without_a_record_names_the_key_and_prefix_and_says_to_check_the_prefix_first(
    plugin: str, verb: str, gpu: PluginDir, storage: PluginDir
) -> None:
    side = {"gpu": gpu, "storage": storage}[plugin]
    line = one_line(side.call(verb, NO_RECORD[plugin, verb]))
    assert line.startswith(f"resource-{plugin} {verb}: node 'g2' has no {plugin} record at {side.key('g2')} "), line
    assert f"(etcd.prefix '{side.prefix}')" in line and "check the config's etcd.prefix" in line, line
    assert line.index("etcd.prefix") < line.index("add-node"), line
    assert "not enough" in line, line  # and still what the plan lacked


def explain(plugin: PluginDir, stdin: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    return subprocess.run([plugin.exe, "explain", *flags], cwd=plugin.path, capture_output=True, text=True,
                          timeout=60, env=env, input=stdin)  # fmt: skip


def test_explain_names_the_key_of_a_node_without_a_record_and_says_to_check_the_prefix(gpu: PluginDir) -> None:
    done = explain(gpu, json.dumps({"workload_resource": {"prod_count_map": {"nvidia-3090": 1}}}), "--node", "g2")
    assert (done.returncode, done.stderr) == (0, ""), done
    row = done.stdout.splitlines()[1]
    assert row.startswith("g2 ") and f"no record at {gpu.key('g2')} " in row and "check etcd.prefix" in row, row
