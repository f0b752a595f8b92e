"""The console scripts of an installed package: ``resource-gpu`` and ``resource-storage`` from ``pip install``.

One entry for every plugin, named by the script's own name (``resource-<plugin>``), so that pyproject.toml
lists no plugin the registry does not. The registry is ``plugins/`` in a checkout; a wheel installs it as
``resource_extend._plugins`` (setup.py), since a top-level package named ``plugins`` would collide with
other projects'. The executables never run this: build.py starts them from ``plugins/<name>.py``. Like those
entry modules, it stands above the registry and the command tree, and hands the registry's lookup down.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        import resource_extend._plugins as registry  # a wheel's (setup.py puts plugins/ there)
    except ImportError:
        import plugins as registry  # a checkout's (an editable install)
    name = sys.argv[0].rpartition("/")[2].partition("resource-")[2]
    if name not in registry.names():
        known = ", ".join(f"resource-{n}" for n in registry.names())
        sys.stderr.write(f"{sys.argv[0]}: not a plugin's command: install it under one of these names: {known}\n")
        sys.exit(2)
    from resource_extend.command.cli import serve_named

    serve_named(name, registry.plugin)
