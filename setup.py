"""What pyproject.toml cannot declare: a wheel carries the compiled validators and the schemas.

``pip install .`` gives working ``resource-gpu`` / ``resource-storage`` commands: the call path checks every
request and response against validators that build.py compiles from ``schemas/`` (as it does for the
executables), and ``help`` reads the schema files, so both go into the wheel's ``resource_extend`` package.
An editable install (``pip install -e .``, the checkout's venv) reads ``schemas/`` in place instead.

The registry and entry modules (``plugins/``) go in as ``resource_extend._plugins``, their imports of the
registry pointed there: a top-level package named ``plugins`` is a name other projects install too. And the
wheel says what it was built from (``_build_info``: the commit and the time), as the executables do.
"""

from __future__ import annotations

import atexit
import re
import shutil
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithValidators(build_py):
    def run(self) -> None:
        super().run()
        sys.path.insert(0, str(ROOT))
        import build  # build.py beside this file

        package = Path(self.build_lib) / "resource_extend"
        schemas = package / "_schemas"
        if schemas.exists():
            shutil.rmtree(schemas)
        shutil.copytree(ROOT / "schemas", schemas)
        for plugin in build.PLUGINS:
            target = package / f"_validators_{plugin}"
            if target.exists():
                shutil.rmtree(target)
            build.compile_validators(plugin, schemas, target)
        registry = package / "_plugins"
        if registry.exists():
            shutil.rmtree(registry)
        registry.mkdir()
        for module in sorted((ROOT / "plugins").glob("*.py")):
            shutil.copy2(module, registry / module.name)
        # Only the wheel's copies: the checkout's modules keep importing the top-level registry.
        for module in package.rglob("*.py"):
            text = module.read_text()
            moved = re.sub(r"^(\s*)(from plugins import|import plugins as)", _moved, text, flags=re.MULTILINE)
            if moved != text:
                module.write_text(moved)
        (package / "_build_info.py").write_text(
            f'"""Written by setup.py."""\n\nREVISION = {build.git_revision()!r}\nBUILT = {build.build_time()!r}\n'
            "BUILT_FOR = None\nPRECOMPILED = ()\n"
        )


def _moved(match: re.Match[str]) -> str:
    indent, statement = match.groups()
    return indent + statement.replace("plugins", "resource_extend._plugins", 1)


# A fresh build directory per run, not the checkout's build/: a file left there by an older layout (a
# top-level plugins/) would go into the wheel, and two builds at once (make dist, tests/test_wheel.py) would
# write the same files.
BUILD_BASE = tempfile.mkdtemp(prefix="resource-extend-setup-")
atexit.register(shutil.rmtree, BUILD_BASE, True)

setup(cmdclass={"build_py": BuildPyWithValidators}, options={"build": {"build_base": BUILD_BASE}})
