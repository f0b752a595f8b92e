"""The --grpc build's start, in-process: which interpreters it refuses and where it unpacks.

Its directory checks run as root and as nobody against real directories in tests/test_extraction_security.py;
the refusal of other interpreters runs through a real --grpc build in tests/test_interpreters.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from resource_extend.boot import extract

BUILT_FOR = ("cpython-311", "linux", "x86_64")


@pytest.fixture(autouse=True)
def built_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "BUILT_FOR", BUILT_FOR)


def test_the_interpreter_and_platform_it_was_built_for_run_it() -> None:
    assert extract.mismatch(BUILT_FOR, (3, 11)) is None


def test_an_interpreter_older_than_3_9_is_told_its_version_first() -> None:
    why = extract.mismatch(("cpython-38", "linux", "x86_64"), (3, 8))
    assert why == "python3 here is 3.8; the plugin needs Python 3.9 or newer (see docs/python.md)"


@pytest.mark.parametrize(
    "here", [("cpython-312", "linux", "x86_64"), ("cpython-311", "linux", "aarch64"), ("pypy39", "linux", "x86_64")]
)
def test_another_interpreter_or_machine_is_refused_naming_both(here: tuple[str, str, str]) -> None:
    why = extract.mismatch(here, (3, 12))
    assert why is not None
    assert "compiled extensions for cpython-311 on linux/x86_64" in why
    assert f"python3 here is {here[0]} on {here[1]}/{here[2]}" in why


def test_the_root_is_shiv_root_then_home_then_a_per_user_directory_in_tmpdir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHIV_ROOT", str(tmp_path / "chosen"))
    assert extract.root() == str(tmp_path.resolve() / "chosen")
    monkeypatch.delenv("SHIV_ROOT")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert extract.root() == str(tmp_path.resolve() / ".shiv")
    monkeypatch.setenv("HOME", "relative/home")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert extract.root().startswith(str(tmp_path.resolve() / "resource-extend-"))


def test_the_verb_in_its_failure_line_skips_options() -> None:
    assert extract.verb_of(["--config", "a.yaml", "add-node"]) == " add-node"


# -- a build in use is never removed (issue 35) -------------------------------------------------------------

BUILD = "resource-gpu_" + "a" * 64


def _open(path: Path) -> int:
    import os

    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def test_a_build_a_call_holds_is_not_removed_and_one_none_holds_is(tmp_path: Path) -> None:
    import os

    (tmp_path / BUILD / "site-packages").mkdir(parents=True)
    root_fd = _open(tmp_path)
    call_fd = _open(tmp_path / BUILD)
    try:
        assert extract.hold(call_fd, BUILD, root_fd)
        extract.remove_unused(str(tmp_path), root_fd, BUILD)
        assert (tmp_path / BUILD / "site-packages").is_dir()  # a running call's: kept
        os.close(call_fd)  # the call exits
        call_fd = -1
        extract.remove_unused(str(tmp_path), root_fd, BUILD)
        assert list(tmp_path.iterdir()) == []  # no temporary left either
    finally:
        for fd in (root_fd, call_fd):
            if fd >= 0:
                os.close(fd)


def test_a_call_that_waited_while_its_build_was_removed_is_told_to_unpack_it_again(tmp_path: Path) -> None:
    import fcntl
    import os
    import threading

    (tmp_path / BUILD).mkdir()
    root_fd = _open(tmp_path)
    pruning = _open(tmp_path / BUILD)
    fcntl.flock(pruning, fcntl.LOCK_EX)  # as remove_unused holds it
    call_fd = _open(tmp_path / BUILD)
    held: list[bool] = []
    waiting = threading.Thread(target=lambda: held.append(extract.hold(call_fd, BUILD, root_fd)))
    try:
        waiting.start()
        waiting.join(0.2)
        assert held == []  # the call waits for the removal
        os.rename(tmp_path / BUILD, tmp_path / ".gone")
        os.close(pruning)
        waiting.join(5)
        assert held == [False]
    finally:
        os.close(call_fd)
        os.close(root_fd)
