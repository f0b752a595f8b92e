"""``pip install .`` gives working commands: a wheel built from this checkout, installed into a fresh venv,
serves a success and a failure of every verb of both plugins from the conformance vectors through its
console scripts, and its help reads the schemas it carries."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from resource_extend_dev.conformance import check_case
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, ROOT, sample_cases


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(work)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (built_wheel,) = work.glob("resource_extend-*.whl")
    return built_wheel


@pytest.fixture(scope="module")
def installed(wheel: Path) -> Path:
    """A fresh venv with the wheel and its runtime dependencies alone (no dev tools, no checkout on sys.path)."""
    venv = wheel.parent / "venv"
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


def test_the_wheel_installs_one_package_of_its_own_name_and_no_dev_tools_or_dev_scripts(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        tops = {name.split("/")[0] for name in names}
        scripts = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    # "plugins" is a name other projects install: the registry goes in under the project's package.
    assert tops == {"resource_extend", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, tops
    assert "resource_extend/_plugins/__init__.py" in names
    assert not [n for n in names if "resource_extend_dev" in n or n.startswith("tests/")]
    assert "conformance" not in scripts and "resource-gpu = resource_extend.console:main" in scripts, scripts
    # What an index shows: classifiers and the project's addresses.
    assert "Classifier: Programming Language :: Python :: 3.13" in metadata
    assert "Project-URL: Homepage, https://github.com/projecteru2/resource-extend" in metadata


def test_the_installed_commands_version_names_the_commit_the_build_time_and_site_packages(
    installed: Path, tmp_path: Path
) -> None:
    version = subprocess.run([str(installed / "resource-gpu"), "--version"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=60)  # fmt: skip
    assert version.returncode == 0, version
    fields = dict(line.split(":", 1) for line in version.stdout.splitlines())
    revision = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert fields["Git hash"].strip() == (revision or "HEAD") and fields["Built"].strip() != "now", fields
    assert "imports it from site-packages" in fields["Bytecode"] and "checkout" not in fields["Bytecode"], fields
    generic = subprocess.run([str(installed / "python"), "-I", "-c", "import plugins"], cwd=tmp_path)
    assert generic.returncode != 0, "the wheel must not install a top-level package named plugins"
