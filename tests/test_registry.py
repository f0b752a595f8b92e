"""The registry (plugins/__init__.py): the one list of plugins, each looked up alone, each shipped one complete."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import plugins
from tests.support import ROOT


@pytest.mark.parametrize("name", list(plugins.SHIPPED))
def test_looking_up_one_plugin_imports_no_other_plugins_code(name: str) -> None:
    others = sorted({plugins.package(other) for other in plugins.SHIPPED} - {plugins.package(name)})
    code = f"import sys, plugins; plugins.plugin({name!r}); print(sorted(m for m in sys.modules if 'resource_' in m))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert plugins.package(name) in loaded.stdout
    assert not [other for other in others if f"'{other}" in loaded.stdout], loaded.stdout


@pytest.mark.parametrize("name", list(plugins.SHIPPED))
def test_every_shipped_plugin_has_its_entry_script_and_schemas(name: str) -> None:
    # What the registry cannot hold: what pip and build.py find by file.
    assert f'\nresource-{name} = "resource_extend.console:main"\n' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "plugins" / f"{name}.py").read_text().count(f'serve_named("{name}", plugin)') == 1
    assert (ROOT / "schemas" / name / "name.response.json").exists()
    assert plugins.plugin(name).name == name


def test_a_name_is_declared_once() -> None:
    with pytest.raises(ValueError, match="already declared"):
        plugins.register("gpu", "somewhere.else")
    assert "elsewhere" not in plugins.names()


def test_no_list_of_plugin_names_outside_the_registry() -> None:
    # A second list goes stale when a plugin is added: read plugins.SHIPPED (or tests.support.PLUGINS).
    pair = re.compile(r"""["'](gpu|storage)["']\s*,\s*["'](gpu|storage)["']""")
    sources = [*ROOT.glob("resource_extend/**/*.py"), *ROOT.glob("resource_extend_dev/*.py"), ROOT / "build.py"]
    sources += [p for p in ROOT.glob("tests/**/*.py") if p.name != "test_registry.py"]
    found = [f"{p.relative_to(ROOT)}:{n}" for p in sources for n, line in enumerate(p.read_text().splitlines(), 1)
             if pair.search(line)]  # fmt: skip
    assert not found, found
