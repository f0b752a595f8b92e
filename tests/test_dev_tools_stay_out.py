"""The development tools live in their own package, which the executables never carry."""

from __future__ import annotations

import zipfile

import pytest

from tests.support import PLUGINS, executable


@pytest.mark.parametrize("plugin", PLUGINS)
def test_executable_carries_no_development_tools(plugin: str) -> None:
    with zipfile.ZipFile(executable(plugin)) as archive:
        names = archive.namelist()
    assert not [name for name in names if "resource_extend_dev" in name]
    assert [name for name in names if name.endswith("resource_extend/cli.py")]
