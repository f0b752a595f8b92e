"""Test modules share helpers through tests/support.py, never by importing one another or conftest; unit test
files mirror the modules they test."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import ROOT

# `from tests.test_x import`, `import tests.test_x`, `from tests.conftest import`, and the relative forms.
CROSS_IMPORT = re.compile(r"^\s*(from|import)\s+(tests\.(unit\.)?(test_\w+|conftest)|\.+(test_\w+|conftest))\b", re.M)


def test_no_test_module_imports_another_or_conftest() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for match in CROSS_IMPORT.finditer(path.read_text())
    ]
    assert not offenders, offenders


UNIT = ROOT / "tests" / "unit"


def module_under_test(test_file: Path) -> Path | None:
    """The module tests/unit/<path>/test_<name>.py tests: resource_extend/<path>/<name>.py, or the package
    resource_extend/<path>/<name>/ tested through its entry points (storage's scheduler).

    A module with two distinct kinds of test may have test_<module>_<aspect>.py beside test_<module>.py; the
    longest <module> that exists is the one tested, so an aspect never hides a module of the longer name.
    """
    package = ROOT / "resource_extend" / test_file.parent.relative_to(UNIT)
    words = test_file.stem[len("test_") :].split("_")
    for end in range(len(words), 0, -1):
        name = "_".join(words[:end])
        for module in (package / f"{name}.py", package / name / "__init__.py"):
            if module.is_file():
                return module
    return None


def test_unit_test_files_mirror_the_modules_they_test() -> None:
    test_files = sorted(UNIT.rglob("test_*.py"))
    assert test_files
    orphans = [str(path.relative_to(ROOT)) for path in test_files if module_under_test(path) is None]
    assert not orphans, f"name each after the module it tests, resource_extend/<path>/<module>.py: {orphans}"


def test_every_unit_test_directory_is_a_package() -> None:
    # Files of the same name in two directories (gpu/test_record.py, storage/test_record.py) import apart only so.
    directories = {path.parent for path in UNIT.rglob("*.py")}
    assert [str(d.relative_to(ROOT)) for d in sorted(directories) if not (d / "__init__.py").is_file()] == []
