"""What pyproject.toml cannot declare: a wheel carries the compiled validators and the schemas.

``pip install .`` gives working ``resource-gpu`` / ``resource-storage`` commands: the call path checks every
request and response against validators that build.py compiles from ``schemas/`` (as it does for the
executables), and ``help`` reads the schema files, so both go into the wheel's ``resource_extend`` package.
An editable install (``pip install -e .``, the checkout's venv) reads ``schemas/`` in place instead.
"""

from __future__ import annotations

import shutil
import sys
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


setup(cmdclass={"build_py": BuildPyWithValidators})
