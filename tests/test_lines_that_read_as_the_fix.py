"""Every line issue 36 found misleading a person at the keyboard reads as the fix — through the built executables.

A volume bigger than any the node has is named; an IOPS request on a node without disks says the disk is
missing and points at explain; an empty stdin says what goes there; a verb at a terminal says what it waits
for, and Ctrl-C is one line; --version names the plugin; explain calls an over-committed node so, not
"-7"; an unknown option gets a did-you-mean; and a CA directory is named with the config file's name.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PluginDir

TIB = 1 << 40
STORAGE_NODE = {
    "capacity": {"volumes": {"/data0": TIB, "/data1": TIB}, "disks": [], "storage": 2 * TIB},
    "usage": {"volumes": {}, "disks": [], "storage": 0},
}


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    (tmp_path / "storage").mkdir()
    return PluginDir("storage", tmp_path / "storage", etcd, prefix)


def one_line(plugin: PluginDir, verb: str, request: object = None, raw: bytes | None = None) -> str:
    out = plugin.call(verb, request, raw=raw)
    assert (out.status, out.stdout) == (128, ""), out
    (line,) = out.stderr.splitlines()
    return str(line)


def run(plugin: PluginDir, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    return subprocess.run([plugin.exe, *args], cwd=plugin.path, capture_output=True, text=True, timeout=60,
                          env=env, input=stdin)  # fmt: skip


def test_a_volume_bigger_than_any_of_the_node_is_named(storage: PluginDir) -> None:
    storage.etcd.put(storage.key("s1"), json.dumps(STORAGE_NODE))
    request = {"nodename": "s1", "deploy_count": 1, "workload_resource_request": {"volumes": ["AUTO:/d:rw:1536G"]}}
    line = one_line(storage, "calculate-deploy", request)
    assert "volume AUTO:/d:rw:1.5T: largest free volume /data1 has 1T" in line, line
    assert "resource-storage explain --node s1 shows each limit" in line, line
    assert line.endswith("cannot alloc a plan, not enough resource"), line  # the reference's words stay
    # Past the flat storage too: the storage line names the volume as well.
    request["workload_resource_request"] = {"volumes": ["AUTO:/d:rw:3T"]}
    line = one_line(storage, "calculate-deploy", request)
    assert "not enough storage" in line and "volume AUTO:/d:rw:3T: largest free volume /data1 has 1T" in line, line


def test_an_iops_request_on_a_node_without_disks_names_the_missing_disk_and_explain(storage: PluginDir) -> None:
    storage.etcd.put(storage.key("s1"), json.dumps(STORAGE_NODE))
    request = {
        "nodename": "s1",
        "deploy_count": 1,
        "workload_resource_request": {"volumes": ["AUTO:/d:rw:1G:100:100:0:0"]},
    }
    line = one_line(storage, "calculate-deploy", request)
    assert "no disk holds /data0" in line and "the node has no disks" in line, line
    assert "resource_request.disks" in line and "explain --node s1" in line, line


@pytest.mark.parametrize("stdin", [b"", b" \n"])
def test_an_empty_stdin_says_what_goes_there(gpu: PluginDir, stdin: bytes) -> None:
    line = one_line(gpu, "add-node", raw=stdin)
    assert line.startswith("resource-gpu add-node: decode plugin input: EOF: stdin is empty; add-node reads its"), line
    assert "| resource-gpu add-node" in line and "resource-gpu add-node --help shows its keys" in line, line


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("args", [["add-node"], ["explain", "--node", "n1"]])
def test_a_verb_at_a_terminal_says_what_it_waits_for_and_ctrl_c_is_one_line(gpu: PluginDir, args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    leader, follower = pty.openpty()
    try:
        # Ctrl-C's default, as at a terminal: a suite started as a background job inherits SIGINT ignored
        # (POSIX shells ignore it for asynchronous commands), and Python keeps an ignored SIGINT ignored.
        child = subprocess.Popen([gpu.exe, *args], cwd=gpu.path, stdin=follower, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, preexec_fn=_interruptible)  # fmt: skip
        assert child.stderr is not None
        first = child.stderr.readline().decode()  # written before the read starts to wait
        assert first.startswith(f"resource-gpu {args[0]}: reading the request from the terminal: type one JSON"), first
        assert f"| resource-gpu {args[0]}" in first, first
        time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        os.close(leader)
        os.close(follower)
    assert (child.returncode, out, err.decode()) == (130, b"", f"resource-gpu {args[0]}: interrupted\n")


def test_version_names_the_plugin(gpu: PluginDir, storage: PluginDir) -> None:
    for plugin, summary in ((gpu, "GPU cards per product model"), (storage, "")):
        first = run(plugin, "--version").stdout.splitlines()[0]
        assert first.startswith(f"Plugin:         resource-{plugin.plugin} ({summary}"), first


def test_explain_says_over_committed_not_a_negative_fit(gpu: PluginDir, storage: PluginDir) -> None:
    over = {"capacity": {"prod_count_map": {"nvidia-3090": 4}}, "usage": {"prod_count_map": {"nvidia-3090": 11}}}
    gpu.etcd.put(gpu.key("g1"), json.dumps(over))
    done = run(gpu, "explain", "--node", "g1", stdin='{"workload_resource":{"prod_count_map":{"nvidia-3090":1}}}')
    assert done.returncode == 0 and "-7" not in done.stdout, done
    assert done.stdout.splitlines()[1].split() == [
        "g1", "0", "nvidia-3090:", "over-committed,", "11", "used", "of", "4", "(7", "over;", "run", "doctor)",
    ]  # fmt: skip
    flat = {
        "capacity": {"volumes": {}, "disks": [], "storage": 1 << 30},
        "usage": {"volumes": {}, "disks": [], "storage": 8 << 30},
    }
    storage.etcd.put(storage.key("s3"), json.dumps(flat))
    done = run(storage, "explain", "--node", "s3", stdin='{"workload_resource":{"storage":"1G"}}')
    row = done.stdout.splitlines()[1]
    assert row.split()[:2] == ["s3", "0"] and "storage: over-committed, 8G used of 1G (7G over; run doctor)" in row, row


def test_an_unknown_option_gets_a_did_you_mean(gpu: PluginDir) -> None:
    done = run(gpu, "doctor", "--jsn")
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines()[0] == "resource-gpu: unknown option '--jsn'; did you mean '--json'?", done.stderr


def test_a_ca_directory_is_named_with_the_config_files_name(gpu: PluginDir, tmp_path: Path) -> None:
    ca = tmp_path / "ca.d"
    ca.mkdir()
    gpu.configure()
    config = gpu.path / "gpu.yaml"
    settings = json.loads(config.read_text())
    settings["etcd"].update(machines=["https://127.0.0.1:1"], ca=str(ca))
    config.write_text(json.dumps(settings))
    line = one_line(gpu, "get-node-resource-info", {"nodename": "n1"})
    # The file's name as every other config line gives it (core runs the plugin in its directory: gpu.yaml).
    assert line.startswith(f"resource-gpu get-node-resource-info: config gpu.yaml: etcd.ca: {ca}: is a directory"), line
    assert f"{ca}/<file>.pem" in line, line


def test_a_ca_file_the_tls_library_cannot_load_is_named_with_the_config_files_name(
    gpu: PluginDir, tmp_path: Path
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate\n")
    config = gpu.path / "gpu.yaml"
    settings = json.loads(config.read_text())
    # A member that accepts the connection: the file is loaded once a TLS connection is to be made.
    settings["etcd"].update(machines=[gpu.etcd.url.replace("http://", "https://")], ca=str(ca))
    config.write_text(json.dumps(settings))
    line = one_line(gpu, "get-node-resource-info", {"nodename": "n1"})
    assert f"config gpu.yaml: etcd.ca: cannot load {ca}: " in line, line
