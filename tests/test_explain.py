"""``resource-<plugin> explain`` through the built executables on a real etcd: the table, ``--json``, the
node selection, unreadable records, and that it writes nothing and fails the way a verb fails."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PluginDir


def explain(plugin: PluginDir, request: Any, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    stdin = request if isinstance(request, str) else json.dumps(request)
    return subprocess.run(
        [plugin.exe, "explain", *flags], cwd=plugin.path, capture_output=True, text=True, timeout=60, env=env,
        input=stdin,
    )  # fmt: skip


def revision(etcd: DevEtcd) -> int:
    return int(etcd.call("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    (tmp_path / "storage").mkdir()
    plugin = PluginDir("storage", tmp_path / "storage", etcd, prefix)
    plugin.ok("add-node", {"nodename": "n7", "resource": {"volumes": ["/data0:100G", "/data3:120G"]}})
    plugin.ok(
        "add-node",
        {
            "nodename": "n9",
            "resource": {"volumes": ["/data0:1T"], "disks": ["/dev/vdb:/data0:1000:1000:1G:1G"]},
        },
    )
    raw = b'{"capacity":{"volumes":{"/data0":99999999999999999999},"disks":[],"storage":0},"usage":null}'
    etcd.call(
        "/v3/kv/put",
        {"key": base64.b64encode(plugin.key("n4").encode()).decode(), "value": base64.b64encode(raw).decode()},
    )
    return plugin


def test_explain_prints_each_nodes_count_its_first_limit_and_a_summary(storage: PluginDir) -> None:
    done = explain(storage, {"workload_resource": {"volumes": ["AUTO:/data:rw:200G"]}, "deploy_count": 2})
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["NODE", "FITS", "FIRST", "LIMIT", "REACHED"]
    assert lines[1].startswith("n4    —     record unreadable: ") and lines[1].endswith("(run doctor)")
    assert lines[2:] == [
        "n7    0     volume AUTO:/data:rw:200G: largest free volume /data3 has 120G",
        "n9    5",
        "1/3 nodes can take 2: 1 short of volume space, 1 unreadable",
    ]


def test_explain_json_carries_the_same_rows_for_machines(storage: PluginDir) -> None:
    request = {"workload_resource": {"volumes": ["AUTO:/data:rw:10G:0:400:0:0"]}, "deploy_count": 3}
    done = explain(storage, request, "--json", "--node", "n9", "--node=n7", "--node", "gone")
    assert (done.returncode, done.stderr) == (0, "")
    doc = json.loads(done.stdout)
    assert doc["directory"] == storage.key("")
    assert doc["asked"] == 3
    assert [(n["node"], n["record"], n["capacity"]) for n in doc["nodes"]] == [
        ("n9", "ok", 2),
        ("n7", "ok", 0),
        ("gone", "no record", 0),
    ]
    assert doc["nodes"][0]["limit"] == {
        "kind": "disk quota",
        "text": "disk /dev/vdb write_IOPS: 1000 of 1000 left, 400 per workload",
    }
    assert doc["nodes"][1]["limit"]["text"] == "disk quota for AUTO:/data:rw:10G:0:400:0:0: no disk holds /data0"
    assert doc["can_take"] == 0
    assert doc["summary"] == "0/3 nodes can take 3: 2 short of disk quota, 1 without a record"


def test_explain_counts_what_get_nodes_deploy_capacity_answers(storage: PluginDir) -> None:
    workload = {"volumes": ["AUTO:/data:rw:50G:0:100:0:0"], "storage": "1G"}
    verb = storage.ok("get-nodes-deploy-capacity", {"nodenames": ["n7", "n9"], "workload_resource": workload})
    done = explain(storage, {"nodenames": ["n7", "n9"], "workload_resource": workload}, "--json")
    counts = {n["node"]: n["capacity"] for n in json.loads(done.stdout)["nodes"]}
    assert {node: entry["capacity"] for node, entry in verb["nodes_deploy_capacity_map"].items()} == {
        node: count for node, count in counts.items() if count > 0
    }


def test_gpu_explain_names_the_product_that_runs_out(gpu: PluginDir) -> None:
    gpu.ok("add-node", {"nodename": "g1", "resource": {"prod_count_map": {"nvidia-a100": 4}}})
    gpu.ok("add-node", {"nodename": "g2", "resource": {"prod_count_map": {"nvidia-a100": 1, "nvidia-3090": 8}}})
    done = explain(gpu, {"workload_resource": {"prod_count_map": {"nvidia-a100": 1}}, "deploy_count": 2})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "NODE  FITS  FIRST LIMIT REACHED",
        "g1    4",
        "g2    1     nvidia-a100: 1 free, 1 per workload",
        "1/2 nodes can take 2: 1 short of nvidia-a100",
    ]


def test_explain_writes_nothing(storage: PluginDir, etcd: DevEtcd) -> None:
    before = revision(etcd)
    assert explain(storage, {"workload_resource": {"storage": "1G"}}).returncode == 0
    assert revision(etcd) == before


@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        ("", "resource-storage explain: stdin is empty: explain reads"),
        ('{"nodenames":"n7","workload_resource":{}}', "resource-storage explain: request does not match the schema"),
        ('{"workload_resource":{"volumes":["AUTO:/x:rw:-5G"]}}', "resource-storage explain: workload_resource: volume"),
        (
            '{"workload_resource":{},"deploy_count":2.5}',
            "resource-storage explain: deploy_count 2.5: want a non-negative",
        ),
        ('{"workload_resource":{},"deploy_count":10000000}', "resource-storage explain: deploy_count 10000000 is more"),
    ],
)
def test_a_bad_request_fails_in_one_line_with_nothing_on_stdout(storage: PluginDir, stdin: str, error: str) -> None:
    done = explain(storage, stdin)
    assert (done.returncode, done.stdout) == (128, "")
    assert done.stderr.startswith(error) and done.stderr.count("\n") == 1, done.stderr


def test_an_empty_prefix_is_an_error_not_an_empty_table(tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    plugin = PluginDir("storage", tmp_path, etcd, prefix + "-typo")
    done = explain(plugin, {"workload_resource": {"storage": "1G"}})
    assert (done.returncode, done.stdout) == (128, "")
    assert done.stderr == f"resource-storage explain: 0 records under {plugin.key('')}: is etcd.prefix right?\n"


def test_node_is_an_option_of_explain_only(gpu: PluginDir) -> None:
    done = subprocess.run(
        [gpu.exe, "get-nodes-deploy-capacity", "--node", "n1"], cwd=gpu.path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.startswith("resource-gpu: --node is an option of explain only")
