"""The default build runs where ``/usr/bin/env`` and ``/bin/sh`` are busybox's, as in core's image (alpine).

Busybox's env has no ``-S``, so a ``#!/usr/bin/env -S python3 -IS`` line prints busybox's usage there and
exits 1 on every call. Each call here runs the built file in a mount namespace (``unshare``, util-linux)
where Debian's ``busybox`` is bind-mounted over ``/usr/bin/env`` and ``/bin/sh``: the kernel then runs the
file's own first line with busybox, as Alpine's would. Busybox comes from the test's own set-up (the
machine's, else ``apt-get download busybox`` unpacked into ``build/busybox/``), so a fresh CI machine
needs nothing installed beforehand.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin, verdict, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, ROOT, as_python3, executable, reference_python, sample_cases

CASES = sample_cases()  # one success and one failure of every verb
UNPACKED = ROOT / "build" / "busybox"


def fetch_busybox() -> Path:
    """Debian's busybox binary: the machine's, or the package downloaded and unpacked under build/."""
    for found in (shutil.which("busybox"), UNPACKED / "bin" / "busybox"):
        if found and os.access(found, os.X_OK):
            return Path(found)
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        pytest.skip("busybox is not installed and this machine has no apt-get to fetch Debian's package")
    download = ROOT / "build" / "busybox-deb"
    download.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(["apt-get", "download", "busybox"], cwd=download, capture_output=True, timeout=300)
    if fetched.returncode != 0 and os.geteuid() == 0:  # a fresh machine has no package lists yet
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=600)
        fetched = subprocess.run(["apt-get", "download", "busybox"], cwd=download, capture_output=True, timeout=300)
    assert fetched.returncode == 0, fetched.stderr.decode(errors="replace")[-2000:]
    (package,) = download.glob("busybox_*.deb")
    subprocess.run(["dpkg-deb", "-x", str(package), str(UNPACKED)], check=True, timeout=120)
    return UNPACKED / "bin" / "busybox"


# Mounts busybox over env and sh, then runs the command: its #! line is read by the kernel in there.
ENTER = 'mount --bind "$1" /usr/bin/env && mount --bind "$1" /bin/sh && shift && exec "$@"'


@pytest.fixture(scope="module")
def as_alpine(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The argv prefix that runs a command where /usr/bin/env and /bin/sh are busybox's."""
    busybox = fetch_busybox()
    namespace = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]
    prefix = [*namespace, "/bin/sh", "-c", ENTER, "sh", str(busybox)]
    probe = subprocess.run([*prefix, "/usr/bin/env", "--help"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0 and "BusyBox" not in probe.stderr + probe.stdout:
        pytest.skip(f"cannot enter a mount namespace here: {probe.stderr.strip()[-300:]}")
    # In there, env is busybox's: the reason for this file.
    assert "BusyBox" in probe.stdout + probe.stderr and "-S" not in probe.stdout + probe.stderr, probe
    return prefix


def wrapper(directory: Path, plugin: str, prefix: list[str], exe: str) -> str:
    """A file that runs ``exe`` with busybox as env and sh, named as the executable (the name core sees)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"resource-{plugin}"
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in [*prefix, exe])
    path.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n')
    path.chmod(0o755)
    return str(path)


def serve(case: dict[str, Any], exe: str, etcd: DevEtcd, prefix: str, work: Path) -> Outcome:
    work.mkdir()
    write_config(str(work), case["plugin"], etcd.url, prefix, case.get("config"))
    for node, record in (case.get("store") or {}).items():
        etcd.put(f"{prefix}/resource/{case['plugin']}/{node}", json.dumps(record))
    stdin = case["stdin_raw"] if "stdin_raw" in case else json.dumps(case.get("request", {}))
    out = run_plugin(exe, case["verb"], stdin.encode(), str(work))
    # A line about a node without a record names its key: the same answer under another prefix.
    return Outcome(out.status, out.stdout, out.stderr.replace(prefix, "<prefix>"))


def test_the_default_build_answers_under_busybox_env_as_under_gnu_env(
    as_alpine: list[str], etcd: DevEtcd, tmp_path: Path
) -> None:
    differences: list[tuple[str, object]] = []
    for number, case in enumerate(CASES):
        plugin = case["plugin"]
        alpine = wrapper(tmp_path / "alpine", plugin, as_alpine, executable(plugin))
        mine = serve(case, alpine, etcd, f"/bb/{os.getpid()}/{number}", tmp_path / f"bb-{number}")
        gnu = serve(case, executable(plugin), etcd, f"/gnu/{os.getpid()}/{number}", tmp_path / f"gnu-{number}")
        if (mine.status, mine.stdout, mine.stderr) != (gnu.status, gnu.stdout, gnu.stderr):
            differences.append((case["id"], (mine, gnu)))
        problem = verdict(case, mine)
        if problem:
            differences.append((case["id"], problem))
    assert not differences, differences


def dockerfile() -> str:
    text = (ROOT / "docs" / "python.md").read_text()
    (block,) = re.findall(r"```dockerfile\n(.*?)```", text, re.S)
    return str(block)


def test_the_docs_dockerfile_for_cores_image_gives_files_that_answer_under_busybox(
    as_alpine: list[str], etcd: DevEtcd, prefix: str, tmp_path: Path
) -> None:
    """What this machine can do of docs/python.md's Dockerfile without docker: its COPY lines, from a build
    context of this checkout's build and the yaml an operator writes, into an image root, then calls run from
    the plugin directory the Dockerfile fills, with busybox as env and sh and python3 on PATH (its apk line)."""
    lines = [line.split() for line in dockerfile().splitlines() if line and not line.startswith("#")]
    assert ["RUN", "apk", "add", "--no-cache", "python3"] in lines  # Alpine's python3: on PATH as /usr/bin/python3
    context, image = tmp_path / "context", tmp_path / "image"
    context.mkdir()
    for plugin in PLUGINS:
        shutil.copy2(executable(plugin), context / f"resource-{plugin}")
        write_config(str(context), plugin, etcd.url, prefix)
    copies = [line[1:] for line in lines if line[0] == "COPY"]
    assert copies, lines
    for *sources, destination in copies:
        target = image / destination.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        for source in sources:
            shutil.copy2(context / source, target / source)
    plugin_dir = image / "etc" / "eru" / "plugins"
    for plugin in PLUGINS:
        exe = wrapper(tmp_path / "alpine", plugin, as_alpine, str(plugin_dir / f"resource-{plugin}"))
        named = run_plugin(exe, "name", b"", str(plugin_dir))
        assert (named.status, named.stdout, named.stderr) == (0, f'"{plugin}"', ""), named
        read = run_plugin(exe, "get-node-resource-info", b'{"nodename":"nobody"}', str(plugin_dir))
        assert (read.status, read.stderr) == (0, ""), read  # etcd answered, through the yaml the image holds


# Removes the working directory, then runs the command from it (issue 35): the kernel runs the file's
# #!/bin/sh line from a directory that no longer exists, as under a core whose directory was replaced.
FROM_REMOVED = 'mkdir "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"'


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_call_from_a_removed_working_directory_keeps_stderr_empty_under_busybox(
    plugin: str, as_alpine: list[str], etcd: DevEtcd, prefix: str, tmp_path: Path
) -> None:
    # Busybox's sh (core's Alpine image) starts silently there, and nothing of the plugin's own asks for the
    # working directory on a call that succeeds. Debian's dash does not: it prints "sh: 0: getcwd() failed"
    # while it starts, before it reads a byte of the file (docs/troubleshooting.md).
    write_config(str(tmp_path), plugin, etcd.url, prefix)
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps({"capacity": {}, "usage": {}}))
    # python3 itself on PATH, not a shim (pyenv's is a bash script, which would complain of the directory).
    env = {**as_python3(tmp_path, reference_python()), "ERU_RESOURCE_CONFIG_PATH": str(tmp_path / f"{plugin}.yaml")}
    argv = [*as_alpine, "/bin/sh", "-c", FROM_REMOVED, "sh", str(tmp_path / "gone"), executable(plugin)]
    for verb, request in (("name", b""), ("get-node-resource-info", b'{"nodename":"n1"}')):
        done = subprocess.run([*argv, verb], input=request, env=env, capture_output=True, timeout=60)
        assert (done.returncode, done.stderr) == (0, b""), (verb, done)
