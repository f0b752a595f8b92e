"""Test modules share helpers through tests/support.py, never by importing one another or conftest."""

from __future__ import annotations

import re

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
