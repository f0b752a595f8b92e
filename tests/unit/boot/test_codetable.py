"""Which files of a staged tree become modules of a code table (the table itself: test_start.py)."""

from __future__ import annotations

import pytest

from resource_extend.boot.codetable import module_name


@pytest.mark.parametrize(
    ("relative", "named"),
    [
        ("resource_extend/command/cli.py", ("resource_extend.command.cli", False)),
        ("resource_extend/__init__.py", ("resource_extend", True)),
        ("yaml/__init__.py", ("yaml", True)),
        ("plugins/gpu.py", ("plugins.gpu", False)),
        ("top.py", ("top", False)),
        ("pkg/not-a-module.py", None),
        ("PyYAML-6.0.dist-info/RECORD", None),
        ("pkg/data.json", None),
        ("__init__.py", None),
    ],
)
def test_a_file_is_a_module_only_when_an_import_statement_can_name_it(
    relative: str, named: tuple[str, bool] | None
) -> None:
    assert module_name(relative) == named
