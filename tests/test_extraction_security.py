"""Nothing another local user can write is imported or run, and no call writes where another user can read.

Issue 10 item 4: the executables used to unpack themselves under ``$TMPDIR/resource-extend-<uid>``,
checking ownership through symlinks and never the mode, so another user could plant code that the next
call as root imported. The default build now runs from its archive and unpacks nothing; the --grpc build
(compiled extensions must be files) unpacks into a directory it proves only the caller can write.

The attackers here are real other users: children that drop to ``nobody`` or to an unused uid with
``setpriv``. The extracting ``__main__`` is exercised through a small build made by build.py's own
functions (a fake plugin in place of grpc, whose real build test_grpc_transport.py makes once).
"""

from __future__ import annotations

import compileall
import json
import os
import py_compile
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, executable

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534
STRANGER = 54321  # a uid with no account: a second local user
# The interpreter the dropped-privilege children run: /root is closed to them, so not a pyenv one.
SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two local users")


def system_python_ok() -> bool:
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return False
    out = subprocess.run(
        [SYSTEM_PYTHON, "-c", f"import sys; print(sys.version_info[:2] == {tuple(sys.version_info[:2])!r})"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() == "True"  # the bytecode in the archive is for this minor version


needs_system_python = pytest.mark.skipif(not system_python_ok(), reason=f"{SYSTEM_PYTHON} of this minor version")


def as_user(uid: int, argv: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` as ``uid`` (no supplementary groups), the way a second local user would."""
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    return subprocess.run(drop + argv, capture_output=True, timeout=60, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable sticky directory like /tmp, inside a directory every user can traverse."""
    top = Path(tempfile.mkdtemp(prefix="extraction-security-", dir="/tmp"))
    top.chmod(0o755)
    area = top / "tmp"
    area.mkdir()
    area.chmod(0o1777)
    try:
        yield area
    finally:
        shutil.rmtree(top)


def tree(path: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``path`` with its owner and mode: what a call must leave as it found it."""
    found = {}
    for entry in sorted(path.rglob("*")):
        st = entry.lstat()
        found[str(entry.relative_to(path))] = (st.st_uid, st.st_mode)
    return found


def plant(shared: Path, victim_uid: int, build_id: str, prog: str, attacker: int) -> Path:
    """As ``attacker``, the attack of issue 10: point the victim's fallback root at the shared sticky directory
    itself (root owns it, so an ownership check through the symlink passes) and plant the entry module of
    ``prog`` where the unpacked build would be. The planted code leaves a marker if it ever runs."""
    entry = prog.removeprefix("resource-") + ".py"
    script = textwrap.dedent(
        f"""
        import os
        shared = {str(shared)!r}
        site = os.path.join(shared, "{prog}_{build_id}", "site-packages", "plugins")
        os.makedirs(site)
        for name in ("__init__.py", {entry!r}):
            with open(os.path.join(site, name), "w") as f:
                f.write("open(%r, 'w').write('planted code ran')\\ndef main():\\n    pass\\n"
                        % os.path.join(shared, "PWNED"))
        os.symlink(shared, os.path.join(shared, "resource-extend-{victim_uid}"))
        """
    )
    done = as_user(attacker, [SYSTEM_PYTHON, "-c", script])
    assert done.returncode == 0, done.stderr
    return shared


def build_id_of(exe: Path | str) -> str:
    with zipfile.ZipFile(exe) as bundled:
        found: str = json.loads(bundled.read("environment.json"))["build_id"]
    return found


def env_without_home(tmpdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "SHIV_ROOT", "ERU_RESOURCE_CONFIG_PATH")}
    env["TMPDIR"] = str(tmpdir)
    return env


# -- the default build: no extraction at all -------------------------------------------------------------


@needs_system_python
@pytest.mark.parametrize("plugin", PLUGINS)
def test_code_planted_in_the_old_extraction_root_never_runs_as_root(
    plugin: str, shared: Path, etcd: DevEtcd, prefix: str
) -> None:
    exe = executable(plugin)
    evil = plant(shared, 0, build_id_of(exe), f"resource-{plugin}", attacker=NOBODY)
    before = tree(shared)
    work = shared.parent / "plugins"
    work.mkdir()
    (work / f"{plugin}.yaml").write_text(f"etcd:\n  machines:\n    - {etcd.url}\n  prefix: {prefix}\n")
    for argv in (["name"], ["get-node-resource-info"]):
        out = subprocess.run([exe, *argv], cwd=work, input=b'{"nodename": "n1"}', env=env_without_home(shared),
                             capture_output=True, timeout=60)  # fmt: skip
        assert out.returncode == 0 and out.stderr == b"", out.stderr
    assert not (evil / "PWNED").exists()
    assert tree(shared) == before  # nothing written, least of all into the directory the attacker owns


@needs_system_python
@pytest.mark.parametrize("home", ["unset", "empty", "a-file"])
@pytest.mark.parametrize("uid", [0, NOBODY])
def test_the_default_build_writes_nothing_with_any_home_and_a_read_only_cwd(uid: int, home: str, shared: Path) -> None:
    copy = shared.parent / "resource-gpu"
    shutil.copy2(executable("gpu"), copy)
    cwd = shared.parent / "read-only"
    cwd.mkdir(mode=0o555)  # read-only for nobody; root could write, so the snapshot below is the proof
    tmpdir = shared.parent / "empty-tmp"
    tmpdir.mkdir(mode=0o1777)
    env = env_without_home(tmpdir)
    if home != "unset":
        env["HOME"] = str(shared.parent / "home")
        if home == "empty":
            (shared.parent / "home").mkdir(mode=0o777)
        else:
            (shared.parent / "home").write_text("")
    before = tree(shared.parent)
    out = as_user(uid, [SYSTEM_PYTHON, "-IS", str(copy), "verbs"], cwd=cwd, env=env)
    assert out.returncode == 0 and out.stderr == b"", out.stderr
    assert "add-node" in json.loads(out.stdout)
    assert tree(shared.parent) == before


@needs_system_python
def test_pythonpath_and_sitecustomize_are_ignored(shared: Path) -> None:
    # Root's environment may carry PYTHONPATH; the -IS shebang keeps it and every .pth hook out of a call.
    planted = shared / "pythonpath"
    planted.mkdir()
    marker = shared / "PWNED"
    # The start's names, too: its code must come from the archive, never from PYTHONPATH or the working
    # directory.
    for module in ("sitecustomize", "usercustomize", "json", "_json", "_start", "_resource_extend_boot"):
        (planted / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('{module}')\n")
    env = dict(os.environ, PYTHONPATH=str(planted), PYTHONSTARTUP=str(planted / "json.py"))
    out = subprocess.run([executable("gpu"), "verbs"], env=env, cwd=planted, capture_output=True, timeout=60)
    assert out.returncode == 0 and out.stderr == b"", out.stderr
    assert not marker.exists()


def test_the_executables_run_the_interpreter_isolated_and_without_site() -> None:
    for plugin in PLUGINS:
        with open(executable(plugin), "rb") as f:
            line = f.readline()
            second = f.readline()
        assert line.startswith(b"#!"), line
        # Linux passes what follows the interpreter as one argument: a name on PATH is run by sh's next line.
        if line == b"#!/bin/sh\n":
            assert second.startswith(b"''''exec python3 -IS ") and second.endswith(b' "$0" "$@" # ' + b"'" * 3 + b"\n")
        else:  # an absolute interpreter: its one argument is the flags, with -c's command joined to them
            assert line.endswith(b" -IS\n") or b" -IScimport " in line, line
        assert len(line) <= 127, line  # Linux before 5.1 reads no further


def test_build_py_bakes_an_absolute_interpreter_or_looks_a_name_up_through_sh() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    assert build.shebang("/usr/bin/python3") == b"#!/usr/bin/python3 -IS\n"
    # Not env -S, which busybox's env (core's Alpine image) lacks: sh execs the name with its flags, in a line
    # that Python reads as a string statement.
    quotes = b"'" * 3
    assert (
        build.shebang("python3.11") == b"#!/bin/sh\n'" + quotes + b'exec python3.11 -IS "$0" "$@" # ' + quotes + b"\n"
    )
    start = b'''-c "import sys,posix;fd=posix.open(sys.argv[1],0);exec(posix.read(fd,2546))"'''
    assert build.shebang("python3", start=2546) == (
        b"#!/bin/sh\n'" + quotes + b"exec python3 -IS " + start + b' "$0" "$@" # ' + quotes + b"\n"
    )
    # One argument only after an absolute path: -c's command joins the flags (Python reads the rest of an
    # argument after -c as the command), and the archive starts through the stub as behind sh.
    code = b"import sys,posix;fd=posix.open(sys.argv[1],0);exec(posix.read(fd,2546))"
    assert build.shebang("/usr/bin/python3", start=2546) == b"#!/usr/bin/python3 -ISc" + code + b"\n"
    assert build.prefixed("/usr/bin/python3") and build.prefixed("python3")
    # A path too long for that line within 127 bytes runs the zipapp's __main__ instead.
    long = "/opt/" + "p" * 40 + "/bin/python3"
    assert not build.prefixed(long) and build.shebang(long) == f"#!{long} -IS\n".encode()
    for bad in ("/opt/my python/bin/python3", "python3 -u", "/" + "x" * 130):
        with pytest.raises(SystemExit):
            build.shebang(bad)


# -- the extracting build (--grpc): every directory it imports from is the caller's alone -----------------


def make_build(work: Path, tag: str, python: str) -> Path:
    """``resource-fake``: build.py's extracting zipapp around a plugin that reports where it was loaded from."""
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    site = work / f"site-{tag}"
    (site / "plugins").mkdir(parents=True)
    (site / "plugins" / "__init__.py").write_text("")
    (site / "plugins" / "fake.py").write_text(
        f"TAG = {tag!r}\n\ndef main():\n    import sys\n    sys.stdout.write(TAG + ' ' + __file__)\n"
    )
    # As stage() does: the unchecked-hash bytecode travels in the archive.
    compileall.compile_dir(site, quiet=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    out = work / f"out-{tag}"
    out.mkdir()
    target = out / "resource-fake"
    build.zipapp("fake", site, work, target, extract=True, python=python)
    target.chmod(0o755)
    return target


@pytest.fixture
def fake_build(shared: Path) -> Path:
    work = shared.parent / "work"
    work.mkdir()
    return make_build(work, "one", SYSTEM_PYTHON)


def run_fake(exe: Path, uid: int, root: Path | None = None, tmpdir: Path | None = None) -> tuple[int, str, str]:
    env = env_without_home(tmpdir or Path("/nonexistent"))
    if root is not None:
        env["SHIV_ROOT"] = str(root)
    out = as_user(uid, [str(exe), "name"], cwd="/", env=env)
    return out.returncode, out.stdout.decode(), out.stderr.decode()


def refused(outcome: tuple[int, str, str]) -> str:
    status, stdout, stderr = outcome
    assert status == 128 and stdout == "", outcome
    assert len(stderr.splitlines()) == 1 and stderr.startswith("resource-fake name: "), stderr
    return stderr


@needs_system_python
@pytest.mark.parametrize("uid", [0, NOBODY])
def test_an_extracting_build_unpacks_into_directories_only_the_caller_can_write(
    uid: int, fake_build: Path, shared: Path
) -> None:
    status, stdout, stderr = run_fake(fake_build, uid, tmpdir=shared)
    root = shared / f"resource-extend-{uid}"
    assert (status, stderr) == (0, "")
    assert stdout.startswith(f"one {root}/resource-fake_")  # imported from the unpacked copy
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        assert not stat.S_ISLNK(st.st_mode) and st.st_uid == uid, path
        assert not st.st_mode & 0o022, path
    for directory in (root, *root.iterdir(), *root.glob("*/site-packages/**/")):
        assert stat.S_IMODE(directory.lstat().st_mode) == 0o700, directory
    again = run_fake(fake_build, uid, tmpdir=shared)
    assert again == (0, stdout, "")


@needs_system_python
@pytest.mark.parametrize("victim", [0, NOBODY])
def test_an_extracting_build_refuses_a_symlinked_root_and_runs_nothing_planted(
    victim: int, fake_build: Path, shared: Path
) -> None:
    evil = plant(shared, victim, build_id_of(fake_build), "resource-fake", attacker=STRANGER)
    before = tree(shared)
    line = refused(run_fake(fake_build, victim, tmpdir=shared))
    assert "resource-extend" in line
    assert not (evil / "PWNED").exists()
    assert tree(shared) == before  # not a byte written into the attacker's directory


@needs_system_python
@pytest.mark.parametrize("how", ["owned-by-another-user", "group-writable", "world-writable", "a-symlink"])
def test_an_extracting_build_refuses_a_root_it_cannot_trust(how: str, fake_build: Path, shared: Path) -> None:
    root = shared / "root"
    if how == "owned-by-another-user":
        assert as_user(STRANGER, ["mkdir", "-m", "0777", str(root)]).returncode == 0
    elif how == "a-symlink":
        assert as_user(STRANGER, ["mkdir", "-m", "0777", str(shared / "theirs")]).returncode == 0
        assert as_user(STRANGER, ["ln", "-s", str(shared / "theirs"), str(root)]).returncode == 0
    else:
        assert (
            as_user(NOBODY, ["mkdir", "-m", "0770" if how == "group-writable" else "0707", str(root)]).returncode == 0
        )
    before = tree(shared)
    refused(run_fake(fake_build, NOBODY, root=root))
    assert tree(shared) == before


@needs_system_python
def test_an_extracting_build_refuses_a_root_under_a_directory_others_can_rename_in(
    fake_build: Path, shared: Path
) -> None:
    # Not sticky: another user could swap the root after the checks.
    open_dir = shared / "open"
    assert as_user(NOBODY, ["mkdir", "-m", "0777", str(open_dir)]).returncode == 0
    assert "writable by other users" in refused(run_fake(fake_build, NOBODY, root=open_dir / "root"))
    assert list(open_dir.iterdir()) == []


@needs_system_python
def test_an_extracting_build_refuses_a_planted_build_directory(fake_build: Path, shared: Path) -> None:
    # The root is the caller's, but the build's own directory there is a symlink (or someone else's).
    root = shared / "root"
    assert as_user(NOBODY, ["mkdir", "-m", "0700", str(root)]).returncode == 0
    theirs = shared / "theirs"
    theirs.mkdir(mode=0o777)
    (root / f"resource-fake_{build_id_of(fake_build)}").symlink_to(theirs)
    os.lchown(root / f"resource-fake_{build_id_of(fake_build)}", NOBODY, NOBODY)
    refused(run_fake(fake_build, NOBODY, root=root))
    assert list(theirs.iterdir()) == []


@needs_system_python
def test_unpacked_builds_do_not_pile_up_the_current_and_the_one_before_stay(shared: Path) -> None:
    work = shared.parent / "work"
    work.mkdir()
    root = shared / "root"
    foreign = [root / "notes", root / ("resource-other_" + "a" * 64)]
    builds = [make_build(work, tag, SYSTEM_PYTHON) for tag in ("one", "two", "three")]
    ids = [build_id_of(exe) for exe in builds]
    assert len(set(ids)) == 3
    assert run_fake(builds[0], NOBODY, root=root)[0] == 0
    for path in foreign:
        path.mkdir()
        os.chown(path, NOBODY, NOBODY)
    # A directory with our naming that another user owns is not ours to remove.
    strangers = root / ("resource-fake_" + "b" * 64)
    strangers.mkdir()
    os.chown(strangers, STRANGER, STRANGER)
    for exe, tag in zip(builds[1:], ("two", "three")):
        status, stdout, _ = run_fake(exe, NOBODY, root=root)
        assert status == 0 and stdout.startswith(tag)
    left = sorted(p.name for p in root.iterdir())
    assert left == sorted(
        [f"resource-fake_{ids[1]}", f"resource-fake_{ids[2]}", strangers.name, *(p.name for p in foreign)]
    )


@needs_system_python
def test_simultaneous_first_runs_of_an_extracting_build_all_succeed(fake_build: Path, shared: Path) -> None:
    root = shared / "root"
    env = env_without_home(Path("/nonexistent"))
    env["SHIV_ROOT"] = str(root)
    procs = [
        subprocess.Popen([str(fake_build), "name"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(12)
    ]
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 12, results
    assert all(err == b"" and out.startswith(b"one ") for out, err in results)
    assert [p.name for p in root.iterdir()] == [f"resource-fake_{build_id_of(fake_build)}"]  # no temporaries left


@needs_system_python
def test_an_extracting_build_with_nowhere_to_unpack_fails_with_one_line(fake_build: Path, shared: Path) -> None:
    closed = shared.parent / "closed"
    closed.mkdir(mode=0o755)  # root's: nobody cannot create its root there, and HOME is unset
    line = refused(run_fake(fake_build, NOBODY, tmpdir=closed))
    assert "cannot unpack the build" in line and str(closed) in line
    assert list(closed.iterdir()) == []
