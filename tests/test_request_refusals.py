"""Requests core could not have meant are refused naming the field (decision 14), and every refusal line
says what was wrong, with which value, and what to do (issue 14 item 1) — through the built executables.

Each refusal also leaves etcd exactly as it was: the checks run before any write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, PluginDir

TIB = 1 << 40
GPU_NODE = {"capacity": {"prod_count_map": {"nvidia-3090": 2}}, "usage": {"prod_count_map": {}}}
STORAGE_NODE = {
    "capacity": {"volumes": {"/data0": TIB}, "disks": [], "storage": 2 * TIB},
    "usage": {"volumes": {}, "disks": [], "storage": 0},
}


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    path = tmp_path / "storage"
    path.mkdir()
    return PluginDir("storage", path, etcd, prefix)


def refused(plugin: PluginDir, verb: str, request: Any, *needles: str, raw: bytes | None = None) -> str:
    """Call ``verb``; assert one clean failure line holding every needle and an untouched store."""
    before = plugin.etcd.dump(plugin.prefix)
    out = plugin.call(verb, request, raw=raw)
    assert (out.status, out.stdout) == (128, ""), out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"resource-{plugin.plugin} {verb}: "), out.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    assert plugin.etcd.dump(plugin.prefix) == before
    return lines[0]


def seed(plugin: PluginDir, node: str, record: dict[str, Any]) -> None:
    plugin.etcd.put(plugin.key(node), json.dumps(record))


# -- decision 14: unknown keys in a node resource ------------------------------------------------------


def test_gpu_counts_without_prod_count_map_are_refused_not_a_node_without_cards(gpu: PluginDir) -> None:
    refused(gpu, "add-node", {"nodename": "n1", "resource": {"nvidia-3090": 2}}, "request.resource", "nvidia-3090")
    assert gpu.etcd.get(gpu.key("n1")) is None
    # The corrected retry then works: nothing was stored by the first call.
    assert gpu.ok("add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3090": 2}}})


@pytest.mark.parametrize("key", ["resource", "resource_request"])
def test_gpu_capacity_change_with_an_unknown_key_is_refused(gpu: PluginDir, key: str) -> None:
    seed(gpu, "n1", GPU_NODE)
    request = {"nodename": "n1", key: {"prod_count_map": {"nvidia-3090": 1}, "nvidia-3070": 1}, "delta": True}
    refused(gpu, "set-node-resource-capacity", request, f"request.{key}", "nvidia-3070")


@pytest.mark.parametrize(
    ("verb", "key", "resource"),
    [
        ("add-node", "resource", {"volume": ["/data0:1T"]}),
        ("set-node-resource-capacity", "resource_request", {"disk": ["/dev/vda:/:1:1:1:1"]}),
        ("set-node-resource-capacity", "resource", {"volumes": {"/data0": 1}, "storgae": 5}),
    ],
)
def test_storage_node_resource_with_an_unknown_key_is_refused(
    storage: PluginDir, verb: str, key: str, resource: dict[str, Any]
) -> None:
    seed(storage, "n0", STORAGE_NODE)
    unknown = next(k for k in resource if k not in ("volumes", "disks", "storage"))
    refused(storage, verb, {"nodename": "n0" if verb != "add-node" else "n1", key: resource}, key, unknown)


# -- decision 14: deploy_count -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [("two", '"two"'), (-1, "-1"), (2.5, "2.5"), (True, "true"), (None, "null")]
)
@pytest.mark.parametrize("plugin_name", PLUGINS)
def test_a_deploy_count_that_is_not_a_count_is_refused_naming_it(
    tmp_path: Path, etcd: DevEtcd, prefix: str, plugin_name: str, value: Any, shown: str
) -> None:
    plugin = PluginDir(plugin_name, tmp_path, etcd, prefix)
    request = {"nodename": "n1", "deploy_count": value, "workload_resource_request": {}}
    refused(plugin, "calculate-deploy", request, "request.deploy_count", f"got {shown}")


@pytest.mark.parametrize(("value", "plans"), [(0, 0), ("3", 3), (3.0, 3)])
def test_zero_and_decimal_strings_stay_valid_deploy_counts(gpu: PluginDir, value: Any, plans: int) -> None:
    seed(gpu, "n1", GPU_NODE)
    request = {"nodename": "n1", "deploy_count": value, "workload_resource_request": None}
    assert len(gpu.ok("calculate-deploy", request)["engines_params"]) == plans


@pytest.mark.parametrize("plugin_name", PLUGINS)
def test_a_huge_deploy_count_is_refused_early_naming_the_bound(
    tmp_path: Path, etcd: DevEtcd, prefix: str, plugin_name: str
) -> None:
    plugin = PluginDir(plugin_name, tmp_path, etcd, prefix)
    request = {"nodename": "n1", "deploy_count": 1000000, "workload_resource_request": {}}
    refused(plugin, "calculate-deploy", request, "deploy_count 1000000", "scheduler.max_deploy_count", "at most 10000")
    plugin.configure(scheduler={"max_deploy_count": 1000000})
    # Raising max_deploy_count alone does not let a million plans through: the work is bounded too.
    refused(plugin, "calculate-deploy", request, "deploy_count 1000000 = 1000000", "scheduler.max_deploy_work")
    request["deploy_count"] = 10000
    plugin.configure()
    assert len(plugin.ok("calculate-deploy", request)["workloads_resource"]) == 10000


# -- decision 14: negative volume sizes, capacity devices, binding flags --------------------------------


@pytest.mark.parametrize("verb", ["calculate-deploy", "get-nodes-deploy-capacity"])
def test_a_new_workload_with_a_negative_volume_size_is_refused(storage: PluginDir, verb: str) -> None:
    seed(storage, "n0", STORAGE_NODE)
    asked = {"volumes": ["AUTO:/data:rw:-10G"]}
    request: dict[str, Any] = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": asked}
    if verb == "get-nodes-deploy-capacity":
        request = {"nodenames": ["n0"], "workload_resource": asked}
    refused(storage, verb, request, "AUTO:/data:rw:-10737418240", "negative size", "0 (unlimited) or more")


def test_a_realloc_may_still_shrink_a_volume(storage: PluginDir) -> None:
    seed(storage, "n0", STORAGE_NODE)
    plan = storage.ok(
        "calculate-deploy",
        {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"volumes": ["AUTO:/data:rw:10G"]}},
    )["workloads_resource"][0]
    done = storage.ok(
        "calculate-realloc",
        {
            "nodename": "n0",
            "workload_resource": plan,
            "workload_resource_request": {"volumes": ["AUTO:/data:rw:-5G"]},
        },
    )
    assert done["workload_resource"]["volumes_request"] == ["AUTO:/data:rw:5368709120:0:0:0:0"]


BAD_DEVICES = ["", "AUTO", "../../etc", "data0", "/a\x00b", "/a\nb", "/a,b", "/a\x7fb"]


@pytest.mark.parametrize("device", BAD_DEVICES)
def test_a_capacity_volume_device_must_be_an_absolute_path_without_separators(storage: PluginDir, device: str) -> None:
    seed(storage, "n0", STORAGE_NODE)
    line = refused(storage, "add-node", {"nodename": "n1", "resource": {"volumes": [f"{device}:1T"]}}, "device")
    assert repr(device) in line and "absolute path" in line
    refused(
        storage, "set-node-resource-capacity", {"nodename": "n0", "resource_request": {"volumes": [f"{device}:1T"]}}
    )
    refused(
        storage, "set-node-resource-capacity", {"nodename": "n0", "resource": {"volumes": {device: TIB}}}, "volumes"
    )


def test_the_root_directory_stays_a_valid_volume_device(storage: PluginDir) -> None:
    added = storage.ok("add-node", {"nodename": "n1", "resource": {"volumes": ["/:1T"]}})
    assert added["capacity"]["volumes"] == {"/": TIB}


@pytest.mark.parametrize("flags", ["rw,ro", "rrw", "xyz", "o", "oo", "rwmm"])
def test_binding_flags_outside_the_grammar_are_refused(storage: PluginDir, flags: str) -> None:
    seed(storage, "n0", STORAGE_NODE)
    request = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"volumes": [f"AUTO:/x:{flags}:1G"]}}
    refused(storage, "calculate-deploy", request, f"flags {flags!r}", "r, w, o, m", "invalid volume")


@pytest.mark.parametrize(("flags", "stored"), [("wrm", "mrw"), ("ro", "ro"), ("orw", "rowo"), ("rowo", "rowo")])
def test_binding_flags_in_the_grammar_still_plan(storage: PluginDir, flags: str, stored: str) -> None:
    seed(storage, "n0", STORAGE_NODE)
    request = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"volumes": [f"AUTO:/x:{flags}:1G"]}}
    plan = storage.ok("calculate-deploy", request)["workloads_resource"][0]
    assert plan["volumes_request"][0].split(":")[2] == stored


# -- issue 14 item 1: lines that name the field, the value and the fix ----------------------------------


def test_a_bad_size_unit_names_the_binding_the_field_and_the_units(storage: PluginDir) -> None:
    seed(storage, "n0", STORAGE_NODE)
    request = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"volumes": ["AUTO:/data:rw:10X"]}}
    line = refused(storage, "calculate-deploy", request, "'AUTO:/data:rw:10X'", "size '10X'", "invalid suffix: 'X'")
    assert "e.g. 10G" in line


@pytest.mark.parametrize(("binding", "fields"), [("a:b:c:d:e:f:g:h:i", "9 fields"), ("/data", "1 field")])
def test_a_binding_with_the_wrong_number_of_fields_says_how_many_and_the_grammar(
    storage: PluginDir, binding: str, fields: str
) -> None:
    request = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"volumes": [binding]}}
    refused(
        storage,
        "calculate-deploy",
        request,
        repr(binding),
        fields,
        "wants 2 to 8",
        "source:destination",
        "invalid volume",
    )


def test_a_capacity_volume_without_a_size_says_device_colon_size(storage: PluginDir) -> None:
    refused(
        storage,
        "add-node",
        {"nodename": "n1", "resource": {"volumes": ["/data"]}},
        "'/data'",
        "device:size",
        "/data0:1T",
    )


def test_not_enough_storage_counts_bytes_against_bytes(storage: PluginDir) -> None:
    seed(storage, "n0", STORAGE_NODE)
    request = {"nodename": "n0", "deploy_count": 1, "workload_resource_request": {"storage": "100T"}}
    refused(
        storage,
        "calculate-deploy",
        request,
        f"request: 1 x {100 * TIB} bytes",
        f"available: {2 * TIB} bytes",
        "room for 0",
        "deploy fewer workloads or ask for less storage",
        "not enough resource",
    )


def test_planning_on_a_node_never_added_says_it_has_no_record(gpu: PluginDir, storage: PluginDir) -> None:
    wants = {
        "nodename": "ghost",
        "deploy_count": 1,
        "workload_resource_request": {"prod_count_map": {"nvidia-3090": 1}},
    }
    refused(gpu, "calculate-deploy", wants, "node 'ghost' has no gpu record", "add-node", "nvidia-3090 wants 1 x 1")
    wants = {"nodename": "ghost", "deploy_count": 1, "workload_resource_request": {"storage": "1G"}}
    refused(storage, "calculate-deploy", wants, "node 'ghost' has no storage record", "add-node", "not enough storage")
    # Nothing to plan is still an answer, as the reference gives it.
    assert gpu.ok("calculate-deploy", {"nodename": "ghost", "deploy_count": 2})["engines_params"] == [
        {"prod_count_map": {}},
        {"prod_count_map": {}},
    ]


@pytest.mark.parametrize("verb", ["get-nodes-resource-info", "get-nodes-deploy-capacity", "get-most-idle-node"])
def test_one_name_as_a_string_says_nodenames_must_be_an_array(gpu: PluginDir, verb: str) -> None:
    refused(gpu, verb, {"nodenames": "node-1"}, "request.nodenames", "must be array", 'got "node-1"')


@pytest.mark.parametrize("storage_value", [2**80, 1e300, 2**63])
def test_a_byte_count_past_int64_is_refused_before_any_arithmetic(storage: PluginDir, storage_value: Any) -> None:
    seed(storage, "n0", STORAGE_NODE)
    refused(storage, "add-node", {"nodename": "n1", "resource": {"storage": storage_value}}, "storage", "beyond int64")
    request = {
        "nodename": "n0",
        "resource_request": {"volumes": {"/data0": TIB}, "disks": [], "storage": storage_value},
    }
    refused(storage, "set-node-resource-capacity", request, "storage", "beyond int64")


def test_flags_are_checked_in_requests_not_in_what_core_passes_back() -> None:
    from resource_extend.errors import PluginError
    from resource_extend.storage.workload import WorkloadResource
    from resource_extend.storage.workload_request import WorkloadRequest

    with pytest.raises(PluginError, match="flags 'rrw'"):
        WorkloadRequest.parse({"volumes": ["AUTO:/x:rrw:1G"]})
    # calculate-realloc's delta carries a synthetic plan key; core hands it back to set-node-resource-usage.
    delta = {"volume_plan_request": {"fake-source:fake-destination:fake-flags:0:0:0:0:0": {"/data0": 1}}}
    assert WorkloadResource.from_json(delta).volume_plan_request is not None
