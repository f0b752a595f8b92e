#!/usr/bin/env python3
"""Build ./resource-gpu and ./resource-storage: one self-contained shiv zipapp per plugin.

    python build.py                    # ./resource-gpu, ./resource-storage: pure Python, gateway transport
    python build.py --grpc [--out DIR] # the same names in DIR (default build/grpc/), with the grpc extra

Each staging tree holds the library without the other plugin, PyYAML, the schemas, validators compiled
from the schemas (so no schema library is imported on a call) and bytecode compiled ahead of time.
The zipapp's __main__ picks a writable extraction root when $HOME is unset or read-only.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import json
import os
import py_compile
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PLUGINS = ("gpu", "storage")
RUNTIME_DEPS = ("PyYAML>=6.0",)
# The grpc extra of pyproject.toml (a test keeps the two lists equal). `--grpc` bundles it, so that
# `etcd.transport: grpc` works; grpcio is a compiled extension, so such a build is for this platform only.
GRPC_DEPS = ("etcd-sdk-python==0.0.7", "grpcio>=1.66.2,<2", "protobuf>=5.27.2,<8")

# The zipapp's __main__. shiv's bootstrap imports a dozen modules and hashes nothing we need on a warm
# start, so once shiv has extracted this build (its directory name carries the build id) we put the
# extracted site-packages on sys.path and call the entry point directly. The first run, or a forced
# extraction, goes through shiv's own bootstrap, whose file lock makes simultaneous first runs safe.
# shiv extracts to ~/.shiv, which fails without a writable HOME: then $TMPDIR/resource-extend-<uid>.
BOOT = """\
# -*- coding: utf-8 -*-
import os
import sys

BUILD_ID = {build_id!r}
ENTRY = {entry!r}


def _fallback_root():
    home = os.environ.get("HOME")
    if home:
        cache = os.path.join(home, ".shiv")
        if os.access(cache if os.path.isdir(cache) else home, os.W_OK | os.X_OK):
            return None
    base = os.path.join(os.environ.get("TMPDIR") or "/tmp", "resource-extend-%d" % os.getuid())
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        if os.stat(base).st_uid != os.getuid():
            raise PermissionError(base + " belongs to another user")
    except OSError as exc:
        sys.stderr.write("resource-extend: no writable extraction root (set SHIV_ROOT): %s\\n" % exc)
        sys.exit(128)
    return base


if "SHIV_ROOT" not in os.environ:
    _root = _fallback_root()
    if _root:
        os.environ["SHIV_ROOT"] = _root
_root = os.environ.get("SHIV_ROOT") or os.path.join(os.path.expanduser("~"), ".shiv")
_name = os.path.basename(os.path.realpath(sys.argv[0]))
_site = os.path.join(_root, "%s_%s" % (_name, BUILD_ID), "site-packages")
if os.path.isdir(_site) and not os.environ.get("SHIV_FORCE_EXTRACT"):
    sys.path.insert(1, _site)
    _module, _, _func = ENTRY.partition(":")
    getattr(__import__(_module, fromlist=[_func]), _func)()
else:
    import _bootstrap

    _bootstrap.bootstrap()
"""

# Development helpers that a plugin call never imports; they stay out of the executables.
DEV_ONLY = ("bench.py", "demo.py", "devetcd.py", "conformance.py")


def sh(*args: str) -> None:
    subprocess.run(args, check=True)


def stage(plugin: str, out: Path, deps: Path) -> None:
    """Copy the library (minus the other plugin), its dependencies, schemas and compiled validators."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(deps, out)
    others = [p for p in PLUGINS if p != plugin]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_validators_*", "_schemas", *others, *DEV_ONLY)
    shutil.copytree(ROOT / "resource_extend", out / "resource_extend", ignore=ignore)
    (out / "plugins").mkdir()
    shutil.copy2(ROOT / "plugins" / "__init__.py", out / "plugins")
    shutil.copy2(ROOT / "plugins" / f"{plugin}.py", out / "plugins")
    schemas = out / "resource_extend" / "_schemas"
    shutil.copytree(ROOT / "schemas", schemas, ignore=shutil.ignore_patterns(*others))
    compile_validators(plugin, schemas, out / "resource_extend" / f"_validators_{plugin}")
    (out / "resource_extend" / "_build_info.py").write_text(
        f'"""Written by build.py."""\n\nREVISION = {git_revision()!r}\nBUILT = {build_time()!r}\n'
    )
    # Unchecked-hash pycs stay valid after shiv extracts the files with new timestamps.
    compileall.compile_dir(out, quiet=1, optimize=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def compile_validators(plugin: str, schema_dir: Path, package: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import fastjsonschema

    from resource_extend.schemabundle import bundle, verbs_with_schemas
    from resource_extend.validation import module_name

    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f'"""Validators compiled from schemas/{plugin} by build.py."""\n')
    for verb in verbs_with_schemas(schema_dir, plugin):
        for direction in ("request", "response"):
            code = fastjsonschema.compile_to_code(without_annotations(bundle(schema_dir, plugin, verb, direction)))
            (package / f"{module_name(verb, direction)}.py").write_text(generated(code))


ANNOTATIONS = {"title", "description", "examples", "$comment"}
SCHEMA_MAPS = {"properties", "patternProperties", "definitions"}


def without_annotations(schema: Any) -> Any:
    """The schema minus the keywords that do not validate: the generated code embeds them otherwise."""
    if isinstance(schema, list):
        return [without_annotations(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            kept[key] = {name: without_annotations(sub) for name, sub in value.items()}
        elif key in ("const", "enum", "default"):
            kept[key] = value  # data, not schema
        else:
            kept[key] = without_annotations(value)
    return kept


def generated(code: str) -> str:
    """fastjsonschema's code with its exception import pointed at our small shim module."""
    original = "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException"
    if original not in code:
        raise SystemExit("build.py: fastjsonschema's generated code changed; update build.py")
    shim = "from resource_extend.schemaerror import JsonSchemaValueException, JsonSchemaValuesException"
    # The generator writes the root schema's function first; its name comes from the schema's $id.
    entry = re.search(r"^def (\w+)\(", code, re.MULTILINE)
    if entry is None:
        raise SystemExit("build.py: no validation function in fastjsonschema's generated code")
    header = "# Generated by build.py from the JSON Schemas; do not edit.\n"
    code = code.replace(original, shim)
    if code.count("Decimal") == 1:  # only its import: the schemas use no multipleOf
        code = code.replace("from decimal import Decimal\n", "")
    return header + code + f"\n\nvalidate = {entry.group(1)}\n"


def git_revision() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "HEAD"


def build_time() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = datetime.datetime.fromtimestamp(int(epoch)) if epoch else datetime.datetime.now()
    return now.strftime("%Y-%m-%dT%H:%M:%S")


def zipapp(plugin: str, site: Path, work: Path, target: Path) -> None:
    raw = work / f"resource-{plugin}.shiv"
    sh(
        sys.executable, "-m", "shiv", "--site-packages", str(site), "-e", f"plugins.{plugin}:main",
        "-p", "/usr/bin/env python3", "-o", str(raw), "--reproducible",
    )  # fmt: skip
    rewrite_main(raw, target, site)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    raw.unlink()


def rewrite_main(source: Path, target: Path, site: Path | None = None) -> None:
    """Copy shiv's zipapp with our __main__ (BOOT) in place of shiv's, and the bytecode of ``site``.

    shiv leaves .pyc files out, so without them every module compiles on the first import after
    extraction, and on every call where the bytecode cannot be written (PYTHONDONTWRITEBYTECODE, a
    read-only cache). The unchecked-hash pycs stage() compiled stay valid wherever they are extracted.
    """
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(source) as src, tmp.open("wb") as out:
        env = json.loads(src.read("environment.json"))
        boot = BOOT.format(build_id=env["build_id"], entry=env["entry_point"]).encode()
        out.write(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info, boot if info.filename == "__main__.py" else src.read(info))
            for pyc in sorted(site.rglob("*.pyc")) if site is not None else ():
                assert site is not None
                entry = zipfile.ZipInfo(f"site-packages/{pyc.relative_to(site).as_posix()}", (1980, 1, 1, 0, 0, 0))
                entry.external_attr = 0o644 << 16  # shiv restores these permission bits on extraction
                dst.writestr(entry, pyc.read_bytes(), compress_type=zipfile.ZIP_DEFLATED)
    tmp.chmod(0o755)
    tmp.replace(target)  # atomic: a running core never sees a half-written executable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "plugins", nargs="*", help=f"any of {', '.join(PLUGINS)}; default: every plugin with an entry module"
    )
    parser.add_argument(
        "--grpc",
        action="store_true",
        help="include the grpc extra (etcd.transport: grpc); same file names, default --out build/grpc",
    )
    parser.add_argument("--out", type=Path, help="directory for the executables (default: the repository root)")
    args = parser.parse_args()
    unknown = set(args.plugins) - set(PLUGINS)
    if unknown:
        parser.error(f"unknown plugin(s): {', '.join(sorted(unknown))}")
    plugins = args.plugins or [p for p in PLUGINS if (ROOT / "plugins" / f"{p}.py").exists()]
    # Core names a resource after its executable's file name, so a grpc build keeps the names and goes to
    # another directory.
    out: Path = args.out or (ROOT / "build" / "grpc" if args.grpc else ROOT)
    out.mkdir(parents=True, exist_ok=True)
    if not args.grpc:
        build(plugins, ROOT / "build", out, RUNTIME_DEPS)
        return
    # A work directory of its own, so a grpc build (the test suite makes one) can run beside any other build.
    (ROOT / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grpc-work-", dir=ROOT / "build") as work:
        build(plugins, Path(work), out, (*RUNTIME_DEPS, *GRPC_DEPS))


def build(plugins: list[str], work: Path, out: Path, requirements: tuple[str, ...]) -> None:
    deps = work / "deps"
    if deps.exists():
        shutil.rmtree(deps)
    sh(sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(deps), *requirements)
    for plugin in plugins:
        site = work / plugin
        stage(plugin, site, deps)
        target = out / f"resource-{plugin}"
        zipapp(plugin, site, work, target)
        print(f"built {target}")


if __name__ == "__main__":
    main()
