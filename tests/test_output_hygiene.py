"""stdout carries valid UTF-8 JSON or nothing, and a stdout nobody can write to is one clean failure.

Decision 11 (lone surrogate escapes read as U+FFFD, as Go's decoder does) and issue 10 item 3 (an
unwritable stdout is one stderr line and exit 128, never a traceback), through the built executables.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import INCREMENT, PLUGINS, SEED, PluginDir


@pytest.fixture(params=PLUGINS)
def plugin_dir(request: pytest.FixtureRequest, tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    return PluginDir(request.param, tmp_path, etcd, prefix)


def shell(plugin: PluginDir, command: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    """``command`` with ``$P`` as the executable, in a shell, so it can redirect or close stdout."""
    env = {**os.environ, "P": plugin.exe}
    return subprocess.run(["sh", "-c", command], input=stdin, cwd=plugin.path, capture_output=True, timeout=30, env=env)


def test_a_lone_surrogate_in_a_node_name_reads_as_the_replacement_character(plugin_dir: PluginDir) -> None:
    out = plugin_dir.call("get-nodes-resource-info", raw=b'{"nodenames":["\\ud800","x"]}')
    assert (out.status, out.stderr) == (0, "")
    assert sorted(json.loads(out.stdout)["node_resource_info_map"]) == ["x", "\ufffd"]


@pytest.mark.parametrize("escape", ["\\udc80", "\\ud800", "\\udfff\\ud800", "\\ud800x"])
def test_an_echoed_lone_surrogate_goes_out_as_utf8_replacement_characters(plugin_dir: PluginDir, escape: str) -> None:
    request = f'{{"podname":"{escape}","nodename":"n\\ud83d\\ude00"}}'.encode()
    done = shell(plugin_dir, '"$P" get-metrics', request)
    assert (done.returncode, done.stderr) == (0, b"")
    text = done.stdout.decode("utf-8")  # strict: any raw surrogate byte fails here
    expected_pod = escape.replace("\\ud800", "\ufffd").replace("\\udc80", "\ufffd").replace("\\udfff", "\ufffd")
    for row in json.loads(text):
        assert row["labels"][:2] == [expected_pod, "n\U0001f600"]


def test_a_valid_surrogate_pair_is_kept_as_one_character(plugin_dir: PluginDir) -> None:
    plugin_dir.ok("add-node", {"nodename": "n\U0001f600"})
    out = plugin_dir.call("get-nodes-resource-info", raw=b'{"nodenames":["n\\ud83d\\ude00"]}')
    assert (out.status, out.stderr) == (0, "")
    found = json.loads(out.stdout)["node_resource_info_map"]
    assert list(found) == ["n\U0001f600"]
    assert (
        found["n\U0001f600"]["capacity"]
        == plugin_dir.ok("get-node-resource-info", {"nodename": "n\U0001f600"})["capacity"]
    )


def test_a_lone_surrogate_in_a_written_name_is_stored_as_utf8(plugin_dir: PluginDir) -> None:
    out = plugin_dir.call("add-node", raw=b'{"nodename":"n\\udc80"}')
    assert (out.status, out.stderr) == (0, "")
    assert plugin_dir.etcd.get(plugin_dir.key("n\ufffd")) is not None


@pytest.mark.parametrize(
    ("redirect", "reason"),
    [(">/dev/full", "No space left on device"), (">&-", "Bad file descriptor")],
)
@pytest.mark.parametrize("verb", ["name", "verbs", "calculate-remap", "get-node-resource-info"])
def test_a_stdout_that_cannot_be_written_is_one_line_and_exit_128(
    plugin_dir: PluginDir, verb: str, redirect: str, reason: str
) -> None:
    done = shell(plugin_dir, f'"$P" {verb} {redirect}', b'{"nodename":"n1"}')
    assert done.returncode == 128
    lines = done.stderr.decode().splitlines()
    assert lines == [f"resource-{plugin_dir.plugin} {verb}: cannot write the response to stdout: {reason}"]


@pytest.mark.parametrize("verb", ["add-node", "set-node-resource-usage", "remove-node"])
def test_a_write_with_stdout_closed_fails_before_the_store_is_touched(plugin_dir: PluginDir, verb: str) -> None:
    # Issue 35: add-node wrote the node, then failed on the answer; core, told it failed, adds it again.
    plugin = plugin_dir.plugin
    request: Any = {"add-node": {"nodename": "fresh"}, "remove-node": {"nodename": "n1"}}.get(verb, INCREMENT[plugin])
    plugin_dir.etcd.put(plugin_dir.key("n1"), json.dumps(SEED[plugin]))
    before = plugin_dir.etcd.get(plugin_dir.key("n1"))
    done = shell(plugin_dir, f'"$P" {verb} >&-', json.dumps(request).encode())
    assert done.returncode == 128
    assert done.stderr.decode().splitlines() == [
        f"resource-{plugin} {verb}: cannot write the response to stdout: Bad file descriptor"
    ]
    assert plugin_dir.etcd.get(plugin_dir.key("fresh")) is None
    assert plugin_dir.etcd.get(plugin_dir.key("n1")) == before


def test_a_reader_that_went_away_is_one_line_and_exit_128(plugin_dir: PluginDir) -> None:
    # The reader exits before the plugin writes; the plugin's status is reported on fd 3.
    command = '{ sleep 0.3; echo "{}" | "$P" calculate-remap; echo "status=$?" >&3; } 3>&2 | true'
    done = shell(plugin_dir, command, b"")
    lines = done.stderr.decode().splitlines()
    assert lines == [
        f"resource-{plugin_dir.plugin} calculate-remap: cannot write the response to stdout: Broken pipe",
        "status=128",
    ]


def test_help_to_a_full_disk_is_one_line_and_exit_128(plugin_dir: PluginDir) -> None:
    done = shell(plugin_dir, '"$P" --help >/dev/full', b"")
    assert done.returncode == 128
    assert done.stderr.decode().splitlines() == [
        f"resource-{plugin_dir.plugin}: cannot write to stdout: No space left on device"
    ]


@pytest.mark.parametrize(
    ("args", "stdin", "status", "stdout_starts", "stderr_lines"),
    [
        (["name"], b"", 0, b'"', 0),
        (["calculate-remap"], b"{}", 0, b'{"engine_params_map":{}}', 0),
        (["get-node-resource-info"], b"{not json", 128, b"", 1),
        (["bogus"], b"{}", 2, b"", 2),
        ([], b"", 2, b"", 2),
        (["--version"], b"", 0, b"Plugin:", 0),
    ],
)
def test_every_exit_path_flushes_its_output_and_keeps_its_status(
    plugin_dir: PluginDir, args: list[str], stdin: bytes, status: int, stdout_starts: bytes, stderr_lines: int
) -> None:
    done = subprocess.run([plugin_dir.exe, *args], input=stdin, cwd=plugin_dir.path, capture_output=True, timeout=30)
    assert done.returncode == status
    assert done.stdout.startswith(stdout_starts) and (stdout_starts or done.stdout == b"")
    assert len(done.stderr.decode().splitlines()) == stderr_lines
    assert b"Traceback" not in done.stderr
