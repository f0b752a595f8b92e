"""The process contract core relies on, through the built executable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from resource_extend_dev.conformance import run_plugin
from resource_extend_dev.devetcd import DevEtcd, free_port
from tests.support import PLUGINS, PluginDir, executable

FULL = {"capacity": {"prod_count_map": {"nvidia-3070": 4, "nvidia-3090": 4}}, "usage": {"prod_count_map": {}}}


def run(
    args: list[str], cwd: Path, stdin: bytes = b"{}", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, input=stdin, cwd=cwd, capture_output=True, timeout=30, env=env)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_name_and_verbs_need_no_config_and_no_stdin(plugin: str, tmp_path: Path) -> None:
    name = run([executable(plugin), "name"], tmp_path, stdin=b"")
    assert (name.returncode, name.stdout, name.stderr) == (0, f'"{plugin}"'.encode(), b"")
    verbs = run([executable(plugin), "verbs"], tmp_path, stdin=b"")
    assert verbs.returncode == 0
    listed = json.loads(verbs.stdout)
    assert "calculate-remap" not in listed
    assert "get-nodes-resource-info" in listed


def test_unknown_verb_exits_2_naming_it_and_pointing_at_the_verb_list(tmp_path: Path) -> None:
    out = run([executable("gpu"), "bogus"], tmp_path)
    assert out.returncode == 2
    assert out.stdout == b""
    assert b"unknown verb 'bogus'" in out.stderr
    assert b"--help lists the verbs" in out.stderr


def test_no_verb_prints_usage_on_stderr_and_exits_2(tmp_path: Path) -> None:
    out = run([executable("gpu")], tmp_path)
    assert (out.returncode, out.stdout) == (2, b"")
    assert b"usage:" in out.stderr


def test_help_and_version_print_to_stdout(tmp_path: Path) -> None:
    helped = run([executable("gpu"), "--help"], tmp_path)
    assert helped.returncode == 0 and b"get-nodes-deploy-capacity" in helped.stdout
    version = run([executable("gpu"), "--version"], tmp_path)
    assert version.returncode == 0
    labels = [line[:16] for line in version.stdout.decode().splitlines()]
    assert labels == [
        "Plugin:         ",
        "Version:        ",
        "Git hash:       ",
        "Built:          ",
        "Python version: ",
        "OS/Arch:        ",
        "Bytecode:       ",
        "Transports:     ",
    ]


def test_verb_help_shows_request_keys_and_an_example(tmp_path: Path) -> None:
    out = run([executable("gpu"), "calculate-deploy", "--help"], tmp_path)
    assert out.returncode == 0
    assert b"deploy_count" in out.stdout
    assert b"example request" in out.stdout


def test_config_flag_is_accepted_before_and_after_the_verb(gpu: PluginDir, tmp_path: Path) -> None:
    config = gpu.path / "gpu.yaml"
    moved = tmp_path / "elsewhere.yaml"
    shutil.move(config, moved)
    for args in (
        ["--config", str(moved), "get-node-resource-info"],
        ["get-node-resource-info", f"--config={moved}"],
    ):
        out = run([gpu.exe, *args], gpu.path, b'{"nodename": "ghost"}')
        assert (out.returncode, out.stdout, out.stderr) == (0, b"null", b"")


def test_environment_names_the_config_when_no_flag_is_given(gpu: PluginDir, tmp_path: Path) -> None:
    moved = tmp_path / "env.yaml"
    shutil.move(gpu.path / "gpu.yaml", moved)
    env = dict(os.environ, ERU_RESOURCE_CONFIG_PATH=str(moved))
    out = run([gpu.exe, "get-node-resource-info"], gpu.path, b'{"nodename": "ghost"}', env)
    assert (out.returncode, out.stdout) == (0, b"null")


def test_missing_config_fails_before_stdin_is_read(tmp_path: Path) -> None:
    out = run([executable("gpu"), "get-node-resource-info"], tmp_path, stdin=b"not json")
    assert out.returncode == 128
    assert out.stdout == b""
    lines = out.stderr.decode().splitlines()
    assert len(lines) == 1
    assert "get-node-resource-info" in lines[0] and "gpu.yaml: file not found: put gpu.yaml in" in lines[0]


def test_failures_are_one_stderr_line_with_the_verb_and_no_traceback(gpu: PluginDir) -> None:
    out = gpu.call("add-node", {"nodename": "n1", "resource": {"prod_count_map": {"x": 1.5}}})
    assert out.status == 128
    assert out.stdout == ""
    assert len(out.stderr.splitlines()) == 1
    assert "add-node" in out.stderr and "Traceback" not in out.stderr


def test_add_node_falls_back_to_the_engines_base64_gpu_report(gpu: PluginDir) -> None:
    import base64

    report = base64.b64encode(json.dumps({"prod_count_map": {"nvidia-a100": 2}}).encode()).decode()
    added = gpu.ok("add-node", {"nodename": "n1", "resource": None, "info": {"NCPU": 8, "Resources": {"gpu": report}}})
    assert added["capacity"] == {"prod_count_map": {"nvidia-a100": 2}}
    plain = gpu.ok("add-node", {"nodename": "n2", "info": {"Resources": {"gpu": {"prod_count_map": {"t4": 1}}}}})
    assert plain["capacity"] == {"prod_count_map": {"t4": 1}}
    ignored = gpu.ok("add-node", {"nodename": "n3", "info": {"Resources": {"gpu": "%%%", "cpu": 5}}})
    assert ignored["capacity"] == {"prod_count_map": {}}


def test_cards_in_the_request_win_over_the_engine_report(gpu: PluginDir) -> None:
    report = {"prod_count_map": {"nvidia-a100": 2}}
    added = gpu.ok(
        "add-node",
        {"nodename": "n1", "resource": {"prod_count_map": {"t4": 1}}, "info": {"Resources": {"gpu": report}}},
    )
    assert added["capacity"] == {"prod_count_map": {"t4": 1}}


def test_a_failed_call_leaves_etcd_unchanged(gpu: PluginDir) -> None:
    gpu.etcd.put(gpu.key("n1"), json.dumps(FULL))
    before = gpu.etcd.dump(gpu.prefix)
    for verb, request in [
        (
            "set-node-resource-usage",
            {
                "nodename": "n1",
                "resource": {"prod_count_map": {"nvidia-3070": 1}},
                "delta": True,
                "incr": False,
            },
        ),
        (
            "set-node-resource-capacity",
            {"nodename": "n1", "resource_request": {"prod_count_map": {"nvidia-3070": "x"}}, "delta": True},
        ),
        ("add-node", {"nodename": "n1", "resource": {"prod_count_map": {"a": 1}}}),
        (
            "fix-node-resource",
            {"nodename": "n1", "workloads_resource": [{"prod_count_map": {"nvidia-3070": -1}}]},
        ),
    ]:
        out = gpu.call(verb, request)
        assert out.status == 128, (verb, out)
        assert gpu.etcd.dump(gpu.prefix) == before, verb


def test_get_metrics_takes_upstream_cores_one_node_shape(gpu: PluginDir) -> None:
    gpu.etcd.put(gpu.key("n.1"), json.dumps(FULL))
    rows = gpu.ok("get-metrics", {"podname": "pod", "nodename": "n.1"})
    assert len(rows) == 4
    assert {
        "name": "gpu_capacity",
        "labels": ["pod", "n.1", "nvidia-3070"],
        "key": "core.node.n_1.gpu.nvidia-3070.capacity",
        "value": "4",
    } in rows
    assert gpu.ok("get-metrics", {"podname": "pod", "nodename": "ghost"}) == []


def test_calculate_remap_is_a_no_op_that_touches_nothing(gpu: PluginDir) -> None:
    assert gpu.ok("calculate-remap", {"nodename": "n1"}) == {"engine_params_map": {}}
    assert gpu.etcd.dump(gpu.prefix) == {}


def test_unreachable_etcd_fails_fast_naming_the_endpoints(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    (tmp_path / "gpu.yaml").write_text(json.dumps({"etcd": {"machines": [dead]}}))
    started = time.monotonic()
    out = run_plugin(executable("gpu"), "get-node-resource-info", b'{"nodename": "n1"}', str(tmp_path))
    assert time.monotonic() - started < 10
    assert out.status == 128 and out.stdout == ""
    assert dead in out.stderr and len(out.stderr.splitlines()) == 1


@pytest.mark.parametrize("home", ["unset", "read-only"])
def test_runs_copied_alone_without_a_writable_home(home: str, tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    alone = tmp_path / "plugins"
    alone.mkdir()
    exe = alone / "resource-gpu"
    shutil.copy2(executable("gpu"), exe)
    (alone / "gpu.yaml").write_text(json.dumps({"etcd": {"machines": [etcd.url], "prefix": prefix}}))
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "SHIV_ROOT", "ERU_RESOURCE_CONFIG_PATH")}
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    if home == "read-only":
        # A HOME nobody can create ~/.shiv in, even root (the suite may run as root): a regular file.
        blocked = tmp_path / "not-a-directory"
        blocked.write_text("")
        env["HOME"] = str(blocked)
    out = run([str(exe), "get-node-resource-info"], alone, b'{"nodename": "n1"}', env)
    assert list((tmp_path / "tmp").iterdir()) == []  # it runs from its archive: nothing is unpacked
    assert (out.returncode, out.stdout, out.stderr) == (0, b"null", b"")
