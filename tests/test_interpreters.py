"""One build, every python3 (decision 16): the built executables run under each interpreter this machine has.

Core runs a plugin through its shebang, which finds ``python3`` on PATH; each case here puts a directory
holding only ``python3`` (a link to one interpreter) first on PATH and runs the file as core does. No
interpreter is simulated: 3.6-3.8 are real old interpreters that must print the one-line refusal, and
3.9-3.13 must answer the conformance vectors byte for byte as the build's own interpreter does. An
interpreter this machine lacks is skipped under its name.
"""

from __future__ import annotations

import ast
import json
import marshal
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin, verdict, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import (
    INTERPRETERS,
    OLD_MINORS,
    PLUGINS,
    SUPPORTED_MINORS,
    as_python3,
    executable,
    interpreter,
    reference_python,
    sample_cases,
)

CASES = sample_cases()  # one success and one failure of every verb


def serve(case: dict[str, Any], exe: str, etcd: DevEtcd, prefix: str, work: Path, env: dict[str, str]) -> Outcome:
    work.mkdir()
    write_config(str(work), case["plugin"], etcd.url, prefix, case.get("config"))
    for node, record in (case.get("store") or {}).items():
        etcd.put(f"{prefix}/resource/{case['plugin']}/{node}", json.dumps(record))
    stdin = case["stdin_raw"] if "stdin_raw" in case else json.dumps(case.get("request", {}))
    out = run_plugin(exe, case["verb"], stdin.encode(), str(work), env=env)
    # A line about a node without a record names its key: the same answer under another prefix.
    return Outcome(out.status, out.stdout, out.stderr.replace(prefix, "<prefix>"))


def test_the_sample_covers_every_verb_of_both_plugins() -> None:
    verbs = {(c["plugin"], c["verb"]) for c in CASES}
    for plugin in PLUGINS:
        assert len({v for p, v in verbs if p == plugin}) >= 12, sorted(verbs)


@pytest.mark.parametrize("label", [*SUPPORTED_MINORS, "system"])
def test_every_supported_python3_answers_the_vectors_byte_for_byte_as_the_build_interpreter(
    label: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    python = interpreter(label)
    env = as_python3(tmp_path / "it", python)
    reference = as_python3(tmp_path / "ref", reference_python())
    differences: list[tuple[str, object]] = []
    for number, case in enumerate(CASES):
        exe = executable(case["plugin"])
        mine = serve(case, exe, etcd, f"/py/{label}/{os.getpid()}/{number}", tmp_path / f"it-{number}", env)
        theirs = serve(
            case, exe, etcd, f"/py/ref-{label}/{os.getpid()}/{number}", tmp_path / f"ref-{number}", reference
        )
        if (mine.status, mine.stdout, mine.stderr) != (theirs.status, theirs.stdout, theirs.stderr):
            differences.append((case["id"], (mine, theirs)))
        problem = verdict(case, mine)
        if problem:
            differences.append((case["id"], problem))
    assert not differences, differences


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("label", OLD_MINORS)
def test_an_older_python3_fails_every_call_in_one_line_naming_both_versions(
    label: str, plugin: str, tmp_path: Path
) -> None:
    env = as_python3(tmp_path, interpreter(label))
    for args in (["get-node-resource-info"], ["--config", "x.yaml", "add-node"], ["--version"]):
        done = subprocess.run([executable(plugin), *args], input=b"{}", cwd=tmp_path, env=env, capture_output=True,
                              timeout=30)  # fmt: skip
        verb = "" if args == ["--version"] else f" {args[-1]}"
        assert (done.returncode, done.stdout) == (128, b""), done
        assert done.stderr.decode() == (
            f"resource-{plugin}{verb}: python3 here is {label}; the plugin needs Python 3.9 or newer"
            " (see docs/python.md)\n"
        )


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_archive_holds_each_member_once_and_passes_its_checksums(plugin: str) -> None:
    with zipfile.ZipFile(executable(plugin)) as archive:
        names = archive.namelist()
        assert archive.testzip() is None
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    assert "_start.py" in names and "_code/start.py" in names
    assert not [n for n in names if n.endswith(".pyc")], "bytecode lives in the code tables, one per minor"
    unzip = shutil.which("unzip")
    if unzip:
        checked = subprocess.run([unzip, "-tq", executable(plugin)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_shebang_execs_the_text_in_front_of_the_zip_which_says_where_each_minors_start_and_index_are(
    plugin: str,
) -> None:
    data = Path(executable(plugin)).read_bytes()
    line = data.split(b"\n", 2)[1].decode()  # #!/bin/sh, then the line sh execs
    size = int(line.rpartition("posix.read(fd,")[2].partition(")")[0])
    with zipfile.ZipFile(executable(plugin)) as archive:
        assert size == min(info.header_offset for info in archive.infolist())  # the text ends where the zip starts
        text = data[:size].decode()
        ast.parse(text)  # the shebang lines are a comment and a string to Python
        table = next(line for line in text.splitlines() if line.startswith("TABLE = "))
        words = ast.literal_eval(table.partition(" = ")[2]).split()
        entries = {words[i]: [int(n) for n in words[i + 1 : i + 5]] for i in range(0, len(words), 5)}
        compiled = {n[len("_code/") : -len(".start")] for n in archive.namelist() if n.endswith(".start")}
        assert entries.keys() == compiled and compiled  # every minor the build compiled for, and only those
        for magic, (start, start_length, index, index_length) in entries.items():
            for name, at, length in ((f"_code/{magic}.start", start, start_length), ("", index, index_length)):
                info = next(i for i in archive.infolist() if i.header_offset == at)
                assert info.filename == name or (not name and info.filename.endswith(".marshal")), info.filename
                assert length == info.file_size and info.compress_type == zipfile.ZIP_STORED
            assert marshal.loads(archive.read(info.filename))[1].hex() == magic  # the index of the same minor


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_build_carries_a_code_table_for_every_supported_python_it_found(plugin: str) -> None:
    with zipfile.ZipFile(executable(plugin)) as archive:
        members = set(archive.namelist())
        for minor in SUPPORTED_MINORS:
            if INTERPRETERS[minor]:
                assert set(compiled_members(archive, minor)) <= members, minor


def compiled_members(archive: zipfile.ZipFile, minor: str) -> list[str]:
    """The members compiled for ``minor``: its code table's index and blob, and the start, which is named by
    the minor's magic number (the index's second item)."""
    index = f"_code/cpython-{minor.replace('.', '')}.marshal"
    magic_number: bytes = marshal.loads(archive.read(index))[1]
    return [index, index.replace(".marshal", ".code"), f"_code/{magic_number.hex()}.start"]


def without_table(exe: str, minor: str, out: Path) -> str:
    """A copy of ``exe`` without the code table and start of ``minor``: what a build that did not find it makes.
    (The copy moves the members, so the other minors' indexes no longer match it: run it under ``minor`` only.)"""
    with zipfile.ZipFile(exe) as archive:
        drop = set(compiled_members(archive, minor))
    with zipfile.ZipFile(exe) as src, out.open("wb") as handle:
        # The shebang and the stub in front of the zip, as they are.
        handle.write(Path(exe).read_bytes()[: min(info.header_offset for info in src.infolist())])
        with zipfile.ZipFile(handle, "w") as dst:
            for info in src.infolist():
                if info.filename not in drop:
                    dst.writestr(info, src.read(info))
    out.chmod(0o755)
    return str(out)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_python3_the_build_did_not_cover_runs_from_the_sources_with_the_same_answers(
    plugin: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    minor = "3.12" if INTERPRETERS["3.12"] else "3.9"
    env = as_python3(tmp_path, interpreter(minor))
    exe = without_table(executable(plugin), minor, tmp_path / f"resource-{plugin}")
    cases = [c for c in CASES if c["plugin"] == plugin]
    for number, case in enumerate(cases):
        full = serve(
            case, executable(plugin), etcd, f"/src/{plugin}/{os.getpid()}/a{number}", tmp_path / f"a{number}", env
        )
        sources = serve(case, exe, etcd, f"/src/{plugin}/{os.getpid()}/b{number}", tmp_path / f"b{number}", env)
        assert (sources.status, sources.stdout, sources.stderr) == (full.status, full.stdout, full.stderr), case["id"]
    version = subprocess.run([exe, "--version"], env=env, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert f"this python3 ({minor}) compiles them from the sources" in version.stdout, version.stdout


def test_a_repacked_archive_fails_in_one_line_on_a_minor_whose_code_moved(tmp_path: Path) -> None:
    # Repacking moves every member; the index of a minor still in the archive then points at other bytes,
    # which its digest shows before any of them is unmarshalled.
    dropped, kept = ("3.12", "3.11") if INTERPRETERS["3.12"] else ("3.9", "3.11")
    exe = without_table(executable("gpu"), dropped, tmp_path / "resource-gpu")
    env = as_python3(tmp_path, interpreter(kept))
    done = subprocess.run([exe, "get-node-resource-info"], input=b"{}", cwd=tmp_path, env=env, capture_output=True,
                          timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout) == (128, b""), done
    assert done.stderr.decode() == (
        f"{exe}: the code is not where the archive's index says: run the call again if an upgrade replaced the"
        " file, else rebuild it (an archive must not be repacked)\n"
    )


def test_version_names_the_precompiled_minors_and_that_this_python3_uses_them(tmp_path: Path) -> None:
    version = subprocess.run(
        [executable("gpu"), "--version"], capture_output=True, text=True, cwd=tmp_path, check=True,
        env=as_python3(tmp_path, reference_python()),
    )  # fmt: skip
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert "Bytecode:" in version.stdout and minor in version.stdout, version.stdout
    assert "loads them" in version.stdout, version.stdout


# -- the --grpc build: compiled extensions for one interpreter, and a clear line on any other --------------


@pytest.mark.parametrize("label", [*OLD_MINORS, *SUPPORTED_MINORS])
def test_a_grpc_build_runs_on_its_own_interpreter_and_refuses_any_other_in_one_line(
    label: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = as_python3(tmp_path, interpreter(label))
    exe = str(request.getfixturevalue("grpc_build") / "resource-gpu")
    done = subprocess.run([exe, "get-node-resource-info"], input=b"{}", cwd=tmp_path, env=env, capture_output=True,
                          timeout=60)  # fmt: skip
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if label == own:  # it gets as far as the config, which this directory lacks
        assert done.returncode == 128 and b"config" in done.stderr and b"Traceback" not in done.stderr, done
        version = subprocess.run([exe, "--version"], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert "etcd.transport: grpc works" in version.stdout, version
        return
    assert (done.returncode, done.stdout) == (128, b""), done
    line = done.stderr.decode()
    assert line.count("\n") == 1 and line.startswith("resource-gpu get-node-resource-info: "), line
    if label in OLD_MINORS:
        assert f"python3 here is {label}; the plugin needs Python 3.9 or newer" in line
    else:
        tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"
        assert f"compiled extensions for {tag}" in line and f"cpython-{label.replace('.', '')}" in line, line
