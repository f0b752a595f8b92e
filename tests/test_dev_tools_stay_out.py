"""The development tools live in their own package, which the executables never carry."""

from __future__ import annotations

import marshal
import zipfile

import pytest

from tests.support import PLUGINS, executable


@pytest.mark.parametrize("plugin", PLUGINS)
def test_executable_carries_no_development_tools(plugin: str) -> None:
    # The modules are in the archive's tables (the sources' and one per interpreter), not as members.
    with zipfile.ZipFile(executable(plugin)) as archive:
        names = archive.namelist()
        # The sources are (format, kind, modules); a code table's index is (format, magic, where, digest, modules,
        # groups).
        tables = {
            n: marshal.loads(archive.read(n))[2 if n == "_code/sources.marshal" else 4]
            for n in names
            if n.startswith("_code/") and n.endswith(".marshal")
        }
    assert not [name for name in names if "resource_extend_dev" in name]
    assert "_code/sources.marshal" in tables
    for table, modules in tables.items():
        assert "resource_extend.command.cli" in modules, table
        assert not [name for name in modules if name.startswith("resource_extend_dev")], table
