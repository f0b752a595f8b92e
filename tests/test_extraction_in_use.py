"""A cleanup never removes an unpacked build that a running call uses (issue 35).

The --grpc build unpacks itself once per build id and a fresh unpack removes older builds (boot/extract.py).
Calls of build A exited 1 with ``ModuleNotFoundError`` when a newer build's first run removed A's directory
while they were running. Here build.py's extracting zipapp wraps a small plugin whose call imports a module
late, as the real plugin imports a verb's code once etcd answered: calls of A run in loops while build C
runs for the first time; every call of A succeeds. Once no call of A runs, the next fresh unpack removes it.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support import ROOT

PLUGIN = """
import time

def main():
    time.sleep(0.2)  # the call's work, during which a newer build may unpack
    from plugins import late  # imported late, from the unpacked directory

    import sys
    sys.stdout.write(late.TAG)
"""


def make_build(work: Path, tag: str) -> Path:
    """build.py's extracting zipapp (the --grpc build's __main__) around the plugin above, tagged ``tag``."""
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    site = work / f"site-{tag}"
    (site / "plugins").mkdir(parents=True)
    (site / "plugins" / "__init__.py").write_text("")
    (site / "plugins" / "fake.py").write_text(PLUGIN)
    (site / "plugins" / "late.py").write_text(f"TAG = {tag!r}\n")
    compileall.compile_dir(site, quiet=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    out = work / f"out-{tag}"
    out.mkdir()
    target = out / "resource-fake"
    build.zipapp("fake", site, work, target, extract=True, python=sys.executable)
    target.chmod(0o755)
    return target


def run(exe: Path, root: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "ERU_RESOURCE_CONFIG_PATH")}
    env["SHIV_ROOT"] = str(root)
    done = subprocess.run([str(exe), "name"], env=env, capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def unpacked(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def test_a_newer_build_s_first_run_never_removes_a_build_whose_calls_are_running(tmp_path: Path) -> None:
    root = tmp_path / "root"
    a, b, c, d = (make_build(tmp_path, tag) for tag in ("a", "b", "c", "d"))
    assert run(a, root) == (0, "a", "")
    time.sleep(0.05)  # the builds are ordered by their directories' times
    assert run(b, root) == (0, "b", "")  # A stays: the newest build before B
    outcomes: list[tuple[int, str, str]] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            outcomes.append(run(a, root))

    loops = [threading.Thread(target=loop) for _ in range(3)]
    for thread in loops:
        thread.start()
    time.sleep(0.5)  # calls of A under way
    try:
        assert run(c, root) == (0, "c", "")  # its first run: A is neither this build nor the newest before it
        time.sleep(0.5)
    finally:
        stop.set()
        for thread in loops:
            thread.join()
    assert len(outcomes) >= 6
    assert set(outcomes) == {(0, "a", "")}, [o for o in outcomes if o != (0, "a", "")][:3]
    # No call of A runs now: the next fresh unpack removes what it may (all but D and the newest before it).
    assert run(d, root) == (0, "d", "")
    builds = [name for name in unpacked(root) if not name.startswith(".")]
    assert len(builds) == 2, unpacked(root)
