"""The registry: every plugin this project ships, by name, and the entry modules of its executables.

The one list of plugins: the executables' entry modules (``plugins/<name>.py``), build.py, the dev tools and
the tests read it, and nothing else names the plugins. Each name maps to the module holding the plugin's
manifest (``PLUGIN``, a ``resource_extend.plugin.Plugin``); looking one up imports that module only, so a call
of one plugin never loads another. A plugin declared elsewhere (the tests' own) is added with ``register``.
"""

from __future__ import annotations

import sys

from resource_extend.command import executable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.plugin import Plugin

# name -> the module of its manifest. A shipped plugin also has an entry module here (plugins/<name>.py),
# a script in pyproject.toml and a schema directory (schemas/<name>/).
SHIPPED = {
    "gpu": "resource_extend.gpu.manifest",
    "storage": "resource_extend.storage.manifest",
}
_declared = dict(SHIPPED)


def names() -> list[str]:
    """Every plugin's name: the shipped ones, then those ``register`` added."""
    return list(_declared)


def manifest_module(name: str) -> str:
    return _declared[name]


def package(name: str) -> str:
    """The package of the plugin's code (``resource_extend.gpu``): what a build of another plugin leaves
    out, unless that plugin's manifest lives in it too."""
    return _declared[name].rpartition(".")[0]


def plugin(name: str) -> Plugin[Any]:
    """The plugin's manifest; imports its module (and no other plugin's)."""
    module = _declared[name]
    executable.load_manifest()  # an executable's start loads the manifest's modules its own way (no importlib)
    __import__(module)  # not importlib: one more import on every call
    found: Plugin[Any] = sys.modules[module].PLUGIN
    if found.name != name:  # the config file and the etcd directory a call reads are named before it loads
        raise ValueError(f"plugin {name!r}: its manifest {module} declares {found.name!r}")
    return found


def register(name: str, module: str) -> None:
    """Declare a plugin whose manifest ``PLUGIN`` is in ``module`` (a plugin the tests declare, say)."""
    if _declared.get(name, module) != module:
        raise ValueError(f"plugin {name!r} is already declared by {_declared[name]}")
    _declared[name] = module
