"""Decision 19: what a person writes is checked as strictly as Kubernetes checks a manifest — through the built
executables.

A key the plugin does not read, or a value of a type it does not read, in a workload request, a node resource
object or among a request's top-level keys, is refused before the store is touched, in one line naming the
key's path and the nearest key read. Every key and alias the reference reads keeps working, `null` and `{}`
still ask for nothing, and add-node's engine `info` stays open.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PluginDir

TIB = 1 << 40
GPU_NODE = {"capacity": {"prod_count_map": {"nvidia-3090": 4}}, "usage": {"prod_count_map": {}}}
STORAGE_NODE = {
    "capacity": {"volumes": {"/data0": TIB}, "disks": [], "storage": 2 * TIB},
    "usage": {"volumes": {}, "disks": [], "storage": 0},
}


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    path = tmp_path / "storage"
    path.mkdir()
    return PluginDir("storage", path, etcd, prefix)


def plugin_dir(name: str, gpu: PluginDir, storage: PluginDir) -> PluginDir:
    found = gpu if name == "gpu" else storage
    found.etcd.put(found.key("n1"), json.dumps(GPU_NODE if name == "gpu" else STORAGE_NODE))
    return found


def refused(plugin: PluginDir, verb: str, request: Any, *needles: str) -> str:
    """Call ``verb``; assert one failure line (exit 128) holding every needle, and an untouched store."""
    before = plugin.etcd.dump(plugin.prefix)
    out = plugin.call(verb, request)
    assert (out.status, out.stdout) == (128, ""), out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"resource-{plugin.plugin} {verb}: "), out.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    assert plugin.etcd.dump(plugin.prefix) == before
    return lines[0]


# The three misspellings, as a new user met them.


def test_a_misspelt_prod_count_map_is_refused_not_a_plan_for_no_cards(gpu: PluginDir, storage: PluginDir) -> None:
    plugin = plugin_dir("gpu", gpu, storage)
    request = {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"prod_count": {"nvidia-3090": 1}}}
    line = refused(plugin, "calculate-deploy", request)
    assert line == (
        "resource-gpu calculate-deploy: request does not match the schema: "
        "request.workload_resource_request.prod_count is an unknown key; did you mean prod_count_map?"
    )


def test_one_volume_given_as_a_string_is_refused_not_a_node_without_volumes(storage: PluginDir) -> None:
    line = refused(
        storage, "add-node", {"nodename": "n1", "resource": {"volumes": "/data0:1T"}}, "request.resource.volumes"
    )
    assert line.endswith('got "/data0:1T": a list is read here, ["/data0:1T"]'), line
    assert storage.etcd.get(storage.key("n1")) is None
    assert storage.ok("add-node", {"nodename": "n1", "resource": {"volumes": ["/data0:1T"]}})  # the fix works


def test_a_misspelt_nodename_names_the_key_not_an_empty_name(gpu: PluginDir) -> None:
    line = refused(gpu, "add-node", {"nodname": "n1", "resource": {"prod_count_map": {"nvidia-3090": 1}}})
    assert line.endswith("request.nodname is an unknown key; did you mean nodename?"), line
    assert "node name is empty" not in line


# Their siblings across both plugins' request objects: (plugin, verb, request, path, nearest key read).
SIBLINGS: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("gpu", "calculate-deploy", {"nodename": "n1", "deploy_cont": 2}, "request.deploy_cont", "deploy_count"),
    (
        "gpu",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource_request": {"prod_count_maps": {}}},
        "request.workload_resource_request.prod_count_maps",
        "prod_count_map",
    ),
    (
        "gpu",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource_requests": {}},
        "request.workload_resource_requests",
        "workload_resource_request",
    ),
    (
        "gpu",
        "get-nodes-deploy-capacity",
        {"nodenames": ["n1"], "workload_resource": {"Prod_Count_Map": {}}},
        "request.workload_resource.Prod_Count_Map",
        "prod_count_map",
    ),
    ("gpu", "get-nodes-deploy-capacity", {"node_names": ["n1"]}, "request.node_names", "nodenames"),
    (
        "gpu",
        "set-node-resource-capacity",
        {"nodename": "n1", "resource_request": {"prod_count_map": {}}, "detla": True},
        "request.detla",
        "delta",
    ),
    (
        "gpu",
        "set-node-resource-usage",
        {"nodename": "n1", "resource_request": {"count_map": {}}},
        "request.resource_request.count_map",
        "prod_count_map",
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"volumes_request": []}},
        "request.workload_resource_request.volumes_request",
        "volumes-request",
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"storage_limit": "1G"}},
        "request.workload_resource_request.storage_limit",
        "storage-limit",
    ),
    (
        "storage",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource_request": {"volumes-limt": []}},
        "request.workload_resource_request.volumes-limt",
        "volumes-limit",
    ),
    (
        "storage",
        "get-nodes-deploy-capacity",
        {"nodenames": ["n1"], "workload_resource": {"storge": "1G"}},
        "request.workload_resource.storge",
        "storage",
    ),
    (
        "storage",
        "add-node",
        {"nodename": "n1", "resource": {"disk": ["/dev/vda:/:1:1:1:1"]}},
        "request.resource.disk",
        "disks",
    ),
    (
        "storage",
        "set-node-resource-capacity",
        {"nodename": "n1", "resource_request": {"rm_disks": "/dev/vda"}},
        "request.resource_request.rm_disks",
        "rm-disks",
    ),
    ("storage", "set-node-resource-info", {"nodename": "n1", "capacty": {}}, "request.capacty", "capacity"),
]


@pytest.mark.parametrize(("plugin_name", "verb", "request_", "path", "near"), SIBLINGS, ids=[s[3] for s in SIBLINGS])
def test_an_unknown_key_is_refused_naming_its_path_and_the_nearest_key_read(
    gpu: PluginDir, storage: PluginDir, plugin_name: str, verb: str, request_: dict[str, Any], path: str, near: str
) -> None:
    plugin = plugin_dir(plugin_name, gpu, storage)
    refused(plugin, verb, request_, f"{path} is an unknown key; did you mean {near}?")


def test_an_unknown_key_far_from_every_key_read_is_answered_with_the_keys_read(
    gpu: PluginDir, storage: PluginDir
) -> None:
    # A model written where its map belongs: "did you mean prod_count_map?" would rename it; the keys read
    # there say where it goes.
    plugin = plugin_dir("gpu", gpu, storage)
    request = {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"nvidia-3090": 1}}
    line = refused(plugin, "calculate-deploy", request)
    assert line.endswith(
        "request.workload_resource_request.nvidia-3090 is an unknown key; the keys read here: prod_count_map"
    ), line


WRONG_TYPES: list[tuple[str, str, dict[str, Any], str]] = [
    ("gpu", "add-node", {"nodename": "n2", "resource": "nvidia-3090"}, "request.resource must be object or null"),
    (
        "gpu",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"prod_count_map": {"nvidia-3090": "1"}}},
        "request.workload_resource_request.prod_count_map.nvidia-3090 must be integer",
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"volume": ["AUTO:/d:rw:1G", 7]}},
        "request.workload_resource_request.volume[1] must be string",
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"volumes": "AUTO:/d:rw:1G"}},
        "request.workload_resource_request.volumes must be array or null",
    ),
    (
        "storage",
        "get-nodes-deploy-capacity",
        {"nodenames": ["n1"], "workload_resource": {"storage": True}},
        "request.workload_resource.storage must be string or number or null",
    ),
    (
        "storage",
        "set-node-resource-capacity",
        {"nodename": "n1", "resource_request": {"rm-disks": 5}},
        "request.resource_request.rm-disks must be string or null",
    ),
    ("storage", "add-node", {"nodename": "n2", "resource": ["/data0:1T"]}, "request.resource must be object or null"),
]


@pytest.mark.parametrize(("plugin_name", "verb", "request_", "needle"), WRONG_TYPES, ids=[w[3] for w in WRONG_TYPES])
def test_a_value_of_the_wrong_type_is_refused_naming_its_path(
    gpu: PluginDir, storage: PluginDir, plugin_name: str, verb: str, request_: dict[str, Any], needle: str
) -> None:
    refused(plugin_dir(plugin_name, gpu, storage), verb, request_, needle)


# What keeps working: every key and alias the reference reads, null and {}, and the engine's info.

STORAGE_ALIASES = [
    {"volumes-request": ["AUTO:/a:rw:1G"], "volumes-limit": ["AUTO:/a:rw:1G"]},
    {"volume-request": ["AUTO:/a:rw:1G"], "volume-limit": ["AUTO:/a:rw:1G"]},
    {"volume": ["AUTO:/a:rw:1G"]},
    {"volumes": ["AUTO:/a:rw:1G"], "storage": 1 << 30},
    {"storage-request": "1G", "storage-limit": "2G"},
    {"storage": None},
    {},
]


@pytest.mark.parametrize("asked", STORAGE_ALIASES, ids=[json.dumps(a) for a in STORAGE_ALIASES])
def test_every_storage_key_and_alias_the_reference_reads_still_plans(storage: PluginDir, asked: dict[str, Any]) -> None:
    storage.etcd.put(storage.key("n1"), json.dumps(STORAGE_NODE))
    answer = storage.ok("calculate-deploy", {"nodename": "n1", "deploy_count": 1, "workload_resource_request": asked})
    assert len(answer["engines_params"]) == 1


@pytest.mark.parametrize("asked", [None, {}, {"prod_count_map": None}, {"prod_count_map": {}}])
def test_null_and_empty_still_ask_for_nothing(gpu: PluginDir, asked: Any) -> None:
    gpu.etcd.put(gpu.key("n1"), json.dumps(GPU_NODE))
    answer = gpu.ok("calculate-deploy", {"nodename": "n1", "deploy_count": 1, "workload_resource_request": asked})
    assert answer["workloads_resource"] == [{"prod_count_map": {}}]


def test_the_engine_info_of_add_node_stays_open(gpu: PluginDir, storage: PluginDir) -> None:
    info = {"Type": "docker", "NCPU": 8, "StorageTotal": 10 * TIB, "Driver": "overlay2", "Labels": {"a": "b"}}
    assert gpu.ok("add-node", {"nodename": "n9", "resource": {"prod_count_map": {"nvidia-3090": 1}}, "info": info})
    assert storage.ok("add-node", {"nodename": "n9", "resource": None, "info": info})


def test_core_rollback_of_set_node_resource_info_may_carry_the_diffs_it_read(storage: PluginDir) -> None:
    storage.etcd.put(storage.key("n1"), json.dumps(STORAGE_NODE))
    read = storage.ok("get-node-resource-info", {"nodename": "n1", "workloads_resource": None})
    assert storage.ok("set-node-resource-info", {"nodename": "n1", **read}) == {}
