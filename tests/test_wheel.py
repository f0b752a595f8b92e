"""``pip install .`` gives working commands: a wheel built from this checkout, installed into a fresh venv,
serves a success and a failure of every verb of both plugins from the conformance vectors through its
console scripts, and its help reads the schemas it carries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from resource_extend_dev.conformance import check_case
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, ROOT, sample_cases


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its runtime dependencies alone (no dev tools, no checkout on sys.path)."""
    work = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(work)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = work.glob("resource_extend-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return venv / "bin"


def test_the_installed_commands_serve_every_verb(installed: Path, etcd: DevEtcd, prefix: str) -> None:
    failures = {}
    for number, case in enumerate(sample_cases()):
        problem = check_case(case, str(installed / f"resource-{case['plugin']}"), etcd, f"{prefix}/{number}")
        if problem:
            failures[case["id"]] = problem
    assert not failures, failures


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_installed_commands_check_with_the_compiled_validators_and_help_reads_the_schemas(
    installed: Path, plugin: str, tmp_path: Path
) -> None:
    helped = subprocess.run([str(installed / f"resource-{plugin}"), "help", "add-node"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert helped.returncode == 0 and "nodename" in helped.stdout and helped.stderr == "", helped
    probe = f"import resource_extend._validators_{plugin}.add_node_request as m; print(m.__file__)"
    where = subprocess.run([str(installed / "python"), "-I", "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert where.returncode == 0 and "site-packages" in where.stdout, where
    fastjsonschema = subprocess.run([str(installed / "python"), "-I", "-c", "import fastjsonschema"], cwd=tmp_path)
    assert fastjsonschema.returncode != 0, "a call must not need fastjsonschema: the validators are compiled"
