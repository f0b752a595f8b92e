"""The lines an operator meets first name the fix that applies (issue 32), through the built executables.

A wrong ``etcd.prefix`` reads as every node missing: a "no record" line names the key it looked at and the
prefix, and says to check the prefix before adding the node (add-node under the wrong prefix would register
it a second time there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PluginDir, executable

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


def test_a_ca_file_in_a_directory_this_user_cannot_enter_is_not_called_missing(tmp_path: Path) -> None:
    """As core's (unprivileged) user: root enters any directory, so as root the call runs as nobody."""
    if not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("no /usr/bin/python3 for an unprivileged user to run")
    work = Path(tempfile.mkdtemp(prefix="eru-ca-"))  # pytest's own tmp_path is root's alone
    try:
        work.chmod(0o755)
        locked = work / "tls"
        locked.mkdir()
        (locked / "ca.pem").write_text("a ca")
        locked.chmod(0o700 if os.geteuid() == 0 else 0o600)  # no x for the user the call runs as
        bin_dir = work / "bin"
        bin_dir.mkdir()
        (bin_dir / "python3").symlink_to("/usr/bin/python3")
        config = {"etcd": {"machines": ["https://127.0.0.1:1"], "prefix": "/x", "ca": str(locked / "ca.pem")}}
        (work / "gpu.yaml").write_text(json.dumps(config))
        (work / "gpu.yaml").chmod(0o644)
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        done = subprocess.run([*as_user, executable("gpu"), "get-node-resource-info"], input='{"nodename":"n1"}',
                              cwd=work, capture_output=True, text=True, timeout=60,
                              env={"PATH": f"{bin_dir}:/usr/bin:/bin"})  # fmt: skip
    finally:
        locked.chmod(0o700)
        shutil.rmtree(work)
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (128, "", 1), done
    line = done.stderr.strip()
    assert f"etcd.ca: {locked / 'ca.pem'}: a directory on its path cannot be entered by this user" in line, line


def test_a_disk_spec_with_a_part_missing_says_how_many_parts_and_the_format_it_wants(storage: PluginDir) -> None:
    request = {"nodename": "d1", "resource": {"volumes": ["/data0:1T"], "disks": ["/dev/vdb:/data0:1000:1000:1G"]}}
    line = one_line(storage.call("add-node", request))
    assert "wrong disk format: /dev/vdb:/data0:1000:1000:1G, 5 parts, want 6" in line, line
    assert "(want device:mounts:read_IOPS:write_IOPS:read_BPS:write_BPS, e.g. " in line, line
    assert line.endswith(": invalid disk") and "invalid disk: invalid disk" not in line, line


def test_a_typo_of_the_etcd_key_is_named_with_did_you_mean(gpu: PluginDir) -> None:
    (gpu.path / "gpu.yaml").write_text(f"etdc:\n  machines:\n    - {gpu.etcd.url}\n")
    line = one_line(gpu.call("get-node-resource-info", {"nodename": "n1"}))
    assert line.endswith(
        "Machines is required, but blank (the file has no etcd section: did you mean etcd for 'etdc'?)"
    )


def test_a_missing_yaml_says_file_not_found_and_where_to_put_it_without_the_machines_text(gpu: PluginDir) -> None:
    (gpu.path / "gpu.yaml").unlink()
    line = one_line(gpu.call("get-node-resource-info", {"nodename": "n1"}))
    assert f"config {gpu.path / 'gpu.yaml'}: file not found: put gpu.yaml in {gpu.path}" in line, line
    assert "Machines" not in line, line


def test_explain_with_nothing_on_stdin_says_what_goes_there(gpu: PluginDir) -> None:
    done = explain(gpu, "")
    assert (done.returncode, done.stdout) == (128, ""), done
    assert done.stderr.startswith("resource-gpu explain: stdin is empty: explain reads get-nodes-deploy-capacity's")
    assert "EOF" not in done.stderr, done.stderr


def test_explain_prints_a_disks_bytes_per_second_in_the_units_they_were_written_in(storage: PluginDir) -> None:
    disk = "/dev/vdb:/data0:1000:1000:300G:300G"
    storage.ok("add-node", {"nodename": "d9", "resource": {"volumes": ["/data0:1T"], "disks": [disk]}})
    request = {"workload_resource": {"volumes": ["/data0:/d:rw:1G:0:0:100G:100G"]}, "deploy_count": 5}
    done = explain(storage, json.dumps(request), "--node", "d9")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines()[1].split(None, 2) == [
        "d9",
        "3",
        "disk /dev/vdb read_bps: 300G of 300G left, 100G per workload",
    ]


def test_doctors_repair_of_a_storage_record_it_cannot_keep_the_capacity_of_says_to_set_it_again(
    storage: PluginDir,
) -> None:
    storage.etcd.put(storage.key("s1"), '{"capacity":{"volumes":{},"disks":[],"storage":99999999999999999999}}')
    done = subprocess.run([storage.exe, "doctor"], cwd=storage.path, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"})  # fmt: skip
    assert done.returncode == 1, done
    notes = " ".join(line.strip()[2:] for line in done.stdout.splitlines() if line.startswith("  # "))
    assert '"storage":0' in notes and "set the real one again after it (set-node-resource-capacity)" in notes, done
    # The repair names this executable and its yaml by absolute path: it pastes from any directory.
    assert f"{storage.exe} --config {storage.path / 'storage.yaml'} set-node-resource-info" in done.stdout, done
