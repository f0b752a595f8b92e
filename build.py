#!/usr/bin/env python3
"""Build ./resource-gpu and ./resource-storage: one self-contained shiv zipapp per plugin.

    python build.py                    # ./resource-gpu, ./resource-storage: pure Python, gateway transport
    python build.py --grpc [--out DIR] # the same names in DIR (default build/grpc/), with the grpc extra

    python build.py --python /usr/bin/python3  # bake that interpreter into the shebang (default: sh runs python3)
    python build.py --pythons "python3.9 python3.12"  # code tables for these only (default $PYTHONS, else all found)

Each staging tree holds the library without the other plugin, PyYAML, the schemas and validators compiled
from the schemas (so no schema library is imported on a call). The default build runs straight from its
archive and unpacks nothing: its start (resource_extend/boot/start.py) runs on any python3, refuses 3.8 and
older in one line, and imports the code from the table compiled for the running CPython minor, or from the
sources for a minor the build did not find. The --grpc build carries compiled extensions for the build's
interpreter, so its start (boot/extract.py) refuses any other, and unpacks the build once into a directory it
checks no other user can write.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import datetime
import importlib.machinery
import json
import marshal
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

import plugins as registry

ROOT = Path(__file__).resolve().parent
# The shipped plugins, as the registry (plugins/__init__.py) lists them.
PLUGINS = tuple(registry.SHIPPED)
RUNTIME_DEPS = ("PyYAML>=6.0",)
# The grpc extra of pyproject.toml (a test keeps the two lists equal). `--grpc` bundles it, so that
# `etcd.transport: grpc` works; grpcio is a compiled extension, so such a build is for this platform only.
GRPC_DEPS = ("etcd-sdk-python==0.0.7", "grpcio>=1.66.2,<2", "protobuf>=5.27.2,<8")

# The starts live in resource_extend/boot/ as code of their own (linted, type-checked, unit-tested) and are
# copied into each archive with the build's constants written in: stub.py as the member the default build's
# shebang reads and execs, start.py into the tables, and extract.py as the --grpc build's __main__.
BOOT = ROOT / "resource_extend" / "boot"
START_MEMBER = "_start.py"  # boot/stub.py: what the shebang execs (a short name: the line has 127 bytes)
# The default build's __main__, for `python3 ./resource-gpu` and shebangs with an absolute interpreter: it
# execs the stub as the shebang does (the stub parses on any Python 3).
ZIPAPP_MAIN = f"""\
import sys, zipimport
exec(zipimport.zipimporter(sys.path[0]).get_data({START_MEMBER!r}))
"""


def boot_source(name: str, **constants: object) -> str:
    """``resource_extend/boot/<name>.py`` with each ``NAME = ...`` line of ``constants`` set to its value."""
    text = (BOOT / f"{name}.py").read_text(encoding="utf-8")
    for key, value in constants.items():
        lines = [line for line in text.splitlines() if line.startswith(f"{key} = ")]
        if len(lines) != 1:
            raise SystemExit(f"build.py: boot/{name}.py must have exactly one line starting {key} = ")
        comment = lines[0].partition("  #")[2]
        text = text.replace(lines[0], f"{key} = {value!r}" + (f"  #{comment}" if comment else ""), 1)
    return text


def sh(*args: str) -> None:
    subprocess.run(args, check=True)


def stage(plugin: str, out: Path, deps: Path, extract: bool = False, build_info: str = "") -> None:
    """Copy the library (minus the other plugin and the starts), its dependencies, schemas and compiled
    validators.

    A build that runs from its archive cannot load compiled extensions, so it leaves them out: the only
    one is PyYAML's optional libyaml binding, without which PyYAML uses its pure-Python loader. Its code
    goes into the archive as sources and as one code table per interpreter (see ``code_tables``); an
    extracting build gets the bytecode of the interpreter it is built for, in ``__pycache__``.
    """
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(deps, out)
    if not extract:
        for path in sorted(out.rglob("*")):
            if path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                path.unlink()
    for cache in sorted(out.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache)
    others = [p for p in PLUGINS if p != plugin]
    # The other plugins' code packages (resource_extend/<package>), unless this plugin's manifest is in one.
    packages = {registry.package(p).rpartition(".")[2] for p in others} - {registry.package(plugin).rpartition(".")[2]}
    ignore = shutil.ignore_patterns(
        "__pycache__", "*.pyc", "_validators_*", "_schemas", "_build_info.py", "boot", *packages
    )
    shutil.copytree(ROOT / "resource_extend", out / "resource_extend", ignore=ignore)
    (out / "plugins").mkdir()
    shutil.copy2(ROOT / "plugins" / "__init__.py", out / "plugins")
    shutil.copy2(ROOT / "plugins" / f"{plugin}.py", out / "plugins")
    schemas = out / "resource_extend" / "_schemas"
    shutil.copytree(ROOT / "schemas", schemas, ignore=shutil.ignore_patterns(*others))
    compile_validators(plugin, schemas, out / "resource_extend" / f"_validators_{plugin}")
    (out / "resource_extend" / "_build_info.py").write_text(
        f'"""Written by build.py."""\n\nREVISION = {git_revision()!r}\nBUILT = {build_time()!r}\n{build_info}'
    )
    if extract:
        # Unchecked-hash pycs stay valid when the files are unpacked with new timestamps.
        mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
        compileall.compile_dir(out, quiet=1, optimize=0, invalidation_mode=mode)


def compile_validators(plugin: str, schema_dir: Path, package: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import fastjsonschema

    from resource_extend.formats.schemafiles import handlers, verb_schema, verbs_with_schemas, without_annotations
    from resource_extend.formats.validation import module_name

    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f'"""Validators compiled from schemas/{plugin} by build.py."""\n')
    for verb in verbs_with_schemas(schema_dir, plugin):
        for direction in ("request", "response"):
            # fastjsonschema follows the references between the files itself, reading them from schema_dir.
            schema = without_annotations(verb_schema(schema_dir, plugin, verb, direction))
            code = fastjsonschema.compile_to_code(schema, handlers=handlers(schema_dir, annotations=False))
            (package / f"{module_name(verb, direction)}.py").write_text(generated(code))


def generated(code: str) -> str:
    """fastjsonschema's code with its exception import pointed at our small shim module."""
    # 2.22 (Python 3.10+) imports both exception classes, 2.21 (the newest on 3.9) the first alone.
    for imported in ("JsonSchemaValueException, JsonSchemaValuesException", "JsonSchemaValueException"):
        original = f"from fastjsonschema import {imported}"
        if original in code:
            break
    else:
        raise SystemExit("build.py: fastjsonschema's generated code changed; update build.py")
    shim = f"from resource_extend.formats.schemaerror import {imported}"
    # The generator writes the root schema's function first; its name comes from the schema's $id.
    entry = re.search(r"^def (\w+)\(", code, re.MULTILINE)
    if entry is None:
        raise SystemExit("build.py: no validation function in fastjsonschema's generated code")
    header = "# Generated by build.py from the JSON Schemas; do not edit.\n"
    code = code.replace(original, shim)
    # fastjsonschema checks a "number" with isinstance(x, (int, float, Decimal)); json.loads never makes a
    # Decimal, so a class nothing is an instance of keeps the answers and saves importing decimal per call.
    # Only multipleOf constructs Decimals: then the real one stays.
    if "Decimal(" not in code:
        code = code.replace(
            "from decimal import Decimal\n", "from resource_extend.formats.schemaerror import NeverDecimal as Decimal\n"
        )
    # Patterns are looked up in REGEX_PATTERNS; a LazyPatterns answers the schemas' own patterns without
    # importing re on every call, and compiles any other the first time it is used.
    if "import re\n" in code:
        block = re.search(r"^REGEX_PATTERNS = \{\n(.*?)^\}\n", code, re.MULTILINE | re.DOTALL)
        if block is None:
            raise SystemExit("build.py: fastjsonschema's generated REGEX_PATTERNS changed; update build.py")
        entries = re.sub(r"re\.compile\(('(?:[^'\\]|\\.)*')\)", r"\1", block.group(1))
        if "re." in entries:
            raise SystemExit("build.py: a pattern fastjsonschema compiles with flags; update build.py")
        code = code.replace(block.group(0), f"REGEX_PATTERNS = LazyPatterns({{\n{entries}}})\n")
        code = code.replace("import re\n", "from resource_extend.formats.schemaerror import LazyPatterns\n", 1)
        if re.search(r"^\s*re\.|[^.\w]re\.", code, re.MULTILINE):
            raise SystemExit("build.py: the generated code uses re beyond REGEX_PATTERNS; update build.py")
    return header + without_definitions(code) + f"\n\nvalidate = {entry.group(1)}\n"


def without_definitions(code: str) -> str:
    """The generated code with every ``definition=`` argument of a raise cut to what the failure line reads.

    Each raise carries the schema fragment it checked as a dict display, and those constants are half of
    what a call spends unmarshalling its two validators. A failure line names the path, the rule and the
    value (validation.describe), and reads two things of the fragment: an unknown key's raise keeps the
    names of the keys read there (``properties``, for the did-you-mean of decision 19), the raise of a type
    that admits a list its ``type``. Every other raise carries ``None``.
    """
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            rules = [k.value.value for k in node.keywords if k.arg == "rule" and isinstance(k.value, ast.Constant)]
            for keyword in node.keywords:
                if keyword.arg == "definition":
                    keyword.value = _kept(keyword.value, rules[0] if rules else None)
    return ast.unparse(tree) + "\n"


def _kept(display: ast.expr, rule: object) -> ast.expr:
    """What describe reads of one raise's schema fragment: ``{"properties": {name: None, ...}}`` for an
    unknown key, ``{"type": [...]}`` for a type that admits a list; ``None`` for any other."""
    wanted = {"additionalProperties": "properties", "type": "type"}.get(rule) if isinstance(rule, str) else None
    if wanted is None or not isinstance(display, ast.Dict):
        return ast.Constant(None)
    for key, value in zip(display.keys, display.values):
        if isinstance(key, ast.Constant) and key.value == wanted:
            if wanted == "properties" and isinstance(value, ast.Dict):
                value = ast.Dict(keys=list(value.keys), values=[ast.Constant(None) for _ in value.keys])
            elif wanted == "type" and "array" not in ast.literal_eval(value):
                break  # only a list's type changes the line (describe: "a list is read here")
            return ast.Dict(keys=[ast.Constant(wanted)], values=[value])
    return ast.Constant(None)


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


def zipapp(
    plugin: str,
    site: Path,
    work: Path,
    target: Path,
    extract: bool = False,
    python: str = "python3",
    tables: dict[str, bytes] | None = None,
) -> None:
    raw = work / f"resource-{plugin}.shiv"
    sh(
        sys.executable, "-m", "shiv", "--site-packages", str(site), "-e", f"plugins.{plugin}:main",
        "-p", "/usr/bin/env python3", "-o", str(raw), "--reproducible",
    )  # fmt: skip
    rewrite_main(raw, target, site, extract=extract, python=python, tables=tables or {})
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    raw.unlink()


def shebang(python: str, start: int = 0) -> bytes:
    """``#!<interpreter> -IS``: isolated (no PYTHON* variables, user site or script directory on sys.path, which
    matters when core runs the plugin as root) and without ``site`` (no .pth hooks of the host: ~40 ms).

    Linux passes everything after the interpreter as one argument, so a bare name such as ``python3`` is
    looked up on PATH by ``#!/bin/sh`` and a second line that execs it with its flags (``env -S`` would do
    it in one line, but busybox's env has no ``-S``). A build that runs from its archive adds ``-c`` and the
    line that opens the file and execs its first ``start`` bytes (these lines, a comment and a string
    statement to Python, then the stub: ``boot_prefix``), so the interpreter never
    runs the archive as a zipapp. After an absolute path that one argument is ``-ISc<line>`` (Python reads
    the rest of an argument after ``-c`` as the command), unless the line would not fit (``prefixed``): then
    it is ``-IS`` and the archive's ``__main__`` starts the plugin.
    """
    line = _line(python, start)
    if len(line.partition("\n")[0]) >= 127:  # Linux before 5.1 truncates the shebang line there
        raise SystemExit(f"build.py: --python {python!r}: the shebang line would be longer than 127 bytes")
    return line.encode()


def prefixed(python: str) -> bool:
    """Whether a build that runs from its archive starts through the stub its shebang execs: always behind
    behind ``sh``; after an absolute path, when the ``-c`` line fits in the 127 bytes with any offset."""
    return len(_line(python, 99999)) <= 127


def _line(python: str, start: int) -> str:
    # exec, not import: importing would compile() the stub, and a process's first compile() builds the
    # ast module's classes (boot/stub.py). fd stays open for the stub: every read is from this file.
    code = f"import sys,posix;fd=posix.open(sys.argv[1],0);exec(posix.read(fd,{start}))"
    if "/" in python:
        interpreter = os.path.abspath(python)
        if any(c.isspace() for c in interpreter):
            raise SystemExit(f"build.py: --python {python!r}: a shebang cannot hold a path with spaces")
        return f"#!{interpreter} -ISc{code}\n" if start else f"#!{interpreter} -IS\n"
    if python and all(c.isalnum() or c in "._-" for c in python):
        # Not `#!/usr/bin/env -S`: busybox's env (core's Alpine image) has no -S and prints its usage instead.
        # Every sh looks the name up on PATH as env does, for about what env costs; to Python the second line
        # is a string statement (three quotes open it, the fourth is its first character).
        run = f'{python} -IS -c "{code}"' if start else f"{python} -IS"
        return f"#!/bin/sh\n''''exec {run} \"$0\" \"$@\" # '''\n"
    raise SystemExit(f"build.py: --python {python!r}: give a command name (python3) or an absolute path")


def rewrite_main(
    source: Path,
    target: Path,
    site: Path | None = None,
    *,
    extract: bool = False,
    python: str = "python3",
    tables: dict[str, bytes] | None = None,
) -> None:
    """Copy shiv's zipapp with our starts in place of shiv's __main__ (whose bootstrap it leaves out), our
    shebang, and the compiled code: ``tables`` (member -> data, see ``code_tables``) for a build that runs from its
    archive, the ``__pycache__`` of ``site`` for an extracting one. Every member is written once.
    """
    tmp = target.with_name(target.name + ".tmp")
    placed: dict[str, tuple[int, bytes]] = {}  # code table -> where its blob's digest is, the digest
    with zipfile.ZipFile(source) as src, tmp.open("wb") as out:
        env = json.loads(src.read("environment.json"))
        entry = tuple(env["entry_point"].split(":", 1))
        name = target.name
        if extract:
            main = boot_source("extract", BUILD_ID=env["build_id"], PROG=name, ENTRY=entry, BUILT_FOR=running_on())
        else:
            main = ZIPAPP_MAIN
        # Behind sh, the shebang execs the stub written after it, which reads the members it needs by their
        # offsets: known once the zip is written, so the stub is written again then, as long as this one.
        members = {} if extract or not prefixed(python) else prefix_members(tables or {})
        placeholder = boot_prefix(python, dict.fromkeys(members, (0, 0, 0, 0))) if members else shebang(python)
        out.write(placeholder)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:

            def add(member: str, data: bytes | str, compress: int = zipfile.ZIP_STORED) -> None:
                dst.writestr(member_info(member), data, compress_type=compress)

            for info in src.infolist():
                if info.filename.startswith("_bootstrap/"):
                    continue  # shiv's extraction code: neither of our starts runs it
                if not extract and info.filename.startswith("site-packages/") and info.filename.endswith(".py"):
                    continue  # in the tables: a member per module would cost each call reading its entry
                if info.filename == "__main__.py":
                    add("__main__.py", main)
                    if not extract and not members and "/" in python:  # the shebang runs the zipapp
                        compiled = main_bytecode(python, main)
                        if compiled is not None:
                            add("__main__.pyc", compiled)
                else:
                    dst.writestr(info, src.read(info))
            if not extract:
                add(START_MEMBER, boot_source("stub"))
                # Only an interpreter without its code table reads the sources: they may be deflated.
                for member, data in sorted((tables or {}).items()):
                    if member.endswith(".marshal") and member != "_code/sources.marshal":
                        placed[member] = add_code_table(dst, member, data)
                    else:
                        add(
                            member,
                            data,
                            zipfile.ZIP_DEFLATED if member == "_code/sources.marshal" else zipfile.ZIP_STORED,
                        )
            for pyc in sorted(site.rglob("*.pyc")) if site is not None and extract else ():
                assert site is not None
                add(f"site-packages/{pyc.relative_to(site).as_posix()}", pyc.read_bytes())
    if members:
        found = members_in(tmp, [m for pair in members.values() for m in pair])
        prefix = boot_prefix(python, {magic: (*found[a], *found[b]) for magic, (a, b) in members.items()})
        if len(prefix) != len(placeholder):
            raise SystemExit("build.py: the stub in front of the archive changed its length once laid out")
        with tmp.open("r+b") as rewritten:
            rewritten.write(prefix)
    with tmp.open("rb") as written:  # each index points at its blob in the file as written
        for member, (at, digest) in placed.items():
            written.seek(at)
            if written.read(len(digest)) != digest:
                raise SystemExit(f"build.py: {member}: the blob is not where its index says ({at})")
    tmp.chmod(0o755)
    tmp.replace(target)  # atomic: a running core never sees a half-written executable


def prefix_members(tables: dict[str, bytes]) -> dict[str, tuple[str, str]]:
    """Per magic number (hex) of a minor the build compiled for, the members the text in front of the archive
    reads by offset: that minor's start and its code table's index (which points into the file itself)."""
    found = {}
    for member, data in tables.items():
        if member.endswith(".marshal") and member != "_code/sources.marshal":
            magic = marshal.loads(data)[1].hex()
            found[magic] = (f"_code/{magic}.start", member)
    return found


def boot_prefix(python: str, table: dict[str, tuple[int, int, int, int]]) -> bytes:
    """What the archive file starts with in a build run through ``sh``: the shebang lines, whose ``-c``
    reads this many bytes of the file and execs them, then boot/prefix.py with ``TABLE`` written in (per
    magic number, where the start's and the index's headers are and their lengths, at a fixed width so that
    the length is known before the offsets are) and without its docstring and comment lines: the text is
    parsed on every call (~50 K instructions a line)."""
    written = " ".join(f"{magic} {' '.join(f'{n:11d}' for n in where)}" for magic, where in sorted(table.items()))
    text = boot_source("prefix", TABLE=written).splitlines()
    code = text[next(i for i, line in enumerate(text) if line.startswith("import ")) :]
    stub = "\n".join(line for line in code if line.strip() and not line.lstrip().startswith("#")).encode() + b"\n"
    size = 0
    while len(shebang(python, start=size)) + len(stub) != size:
        size = len(shebang(python, start=size)) + len(stub)
    return shebang(python, start=size) + stub


def members_in(archive: Path, names: list[str]) -> dict[str, tuple[int, int]]:
    """Where each of ``names`` is in ``archive``: its local header's offset and its length, as the stub reads it
    (stored, a header without an extra field: the stub checks the header's name before it uses the data)."""
    found = {}
    with zipfile.ZipFile(archive) as zipped, archive.open("rb") as raw:
        for name in names:
            info = zipped.getinfo(name)
            raw.seek(info.header_offset)
            header = raw.read(30 + len(name.encode()))
            expected = b"PK\x03\x04" + header[4:26] + bytes((len(name.encode()), 0, 0, 0)) + name.encode()
            if info.compress_type != zipfile.ZIP_STORED or header != expected:
                raise SystemExit(f"build.py: {name}: not stored with a plain local header; the stub cannot read it")
            found[name] = (info.header_offset, info.file_size)
    return found


def add_code_table(archive: zipfile.ZipFile, member: str, table: bytes) -> tuple[int, bytes]:
    """A code table as two stored members: its blob of code (``.code``), then the index (``member``) that
    names where each module's code lies in the file, which is known once the blob is written. Returns where
    the blob starts and its digest, for the check after writing."""
    from resource_extend.boot.codetable import DIGEST, index_member, layout
    from resource_extend.boot.start import FORMAT

    magic, blob, index, groups = layout(table)
    info = member_info(member.removesuffix(".marshal") + ".code")
    archive.writestr(info, blob, compress_type=zipfile.ZIP_STORED)
    at = info.header_offset + len(info.FileHeader())
    archive.writestr(
        member_info(member), index_member(FORMAT, magic, blob, index, at, groups), compress_type=zipfile.ZIP_STORED
    )
    return at, blob[:DIGEST]


def member_info(member: str) -> zipfile.ZipInfo:
    """A member as every build writes it: a fixed date (reproducible archives), readable by all."""
    info = zipfile.ZipInfo(member, (1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    return info


# Compiles the zipapp __main__ (stdin) as an unchecked-hash pyc (stdout) with the interpreter that runs it.
MAIN_PYC = """
import importlib.util, marshal, sys
source = sys.stdin.buffer.read()
code = compile(source, "__main__.py", "exec", dont_inherit=True)
flags = (0b01).to_bytes(4, "little")  # hash-based, unchecked: the archive's members carry no usable mtime
sys.stdout.buffer.write(importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code))
"""


def main_bytecode(python: str, main: str) -> bytes | None:
    """The zipapp ``__main__`` compiled by ``python``, the interpreter a shebang with an absolute path runs
    the archive with: zipimport then loads it without ``compile()``, which builds the ``ast`` module's ~120
    classes on a process's first use (~3 ms a call). None when that interpreter cannot run here or is
    older than 3.9 (the source ``__main__.py`` serves either way, and any interpreter of another minor
    finds this pyc's magic number wrong and falls back to it)."""
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", MAIN_PYC], input=main.encode(), capture_output=True, check=True, timeout=60
        )
        version = subprocess.run(
            [python, "-I", "-S", "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if tuple(map(int, version)) >= (3, 9) else None


def running_on(python: str | None = None) -> tuple[str, str, str]:
    """(cache tag, sys.platform, machine) of ``python`` (default: the interpreter running build.py, whose
    pip fetches the compiled extensions of an extracting build)."""
    code = "import os, sys; print(sys.implementation.cache_tag, sys.platform, os.uname().machine)"
    if python is None:
        tag, platform, machine = str(sys.implementation.cache_tag), sys.platform, os.uname().machine
    else:
        tag, platform, machine = subprocess.run(
            [python, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    return tag, platform, machine


# -- code tables: the library compiled by every CPython 3.9+ the build finds ------------------------------


def interpreters(chosen: str = "", shebang_python: str = "python3") -> dict[str, str]:
    """The interpreters to compile code tables with, one per CPython minor: cache tag -> executable.

    ``chosen`` (``PYTHONS=...``: executables or names, space- or comma-separated) replaces the search of
    the build's own interpreter, ``python3.X`` on PATH, pyenv's versions and /usr/bin, /usr/local/bin.
    The interpreter the shebang names is always added when it can be found. Anything that is not CPython
    3.9 or newer is left out; a chosen one that is not fails the build.
    """
    named = [c for c in chosen.replace(",", " ").split() if c]
    candidates = named or [
        sys.executable,
        *(f"python3.{minor}" for minor in range(9, 20)),
        *(
            str(p)
            for p in sorted(Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv").glob("versions/*/bin/python3"))
        ),
        "/usr/bin/python3",
        "/usr/local/bin/python3",
    ]
    probe = "import sys; print(sys.implementation.name, *sys.version_info[:2], sys.implementation.cache_tag)"
    found: dict[str, str] = {}
    for candidate in [*candidates, shebang_python] if shebang_python else candidates:
        strict = candidate in named
        path = candidate if "/" in candidate else shutil.which(candidate)
        if path is None or not os.access(path, os.X_OK):
            if strict:
                raise SystemExit(f"build.py: PYTHONS names {candidate!r}, which is not an executable here")
            continue
        try:
            answer = subprocess.run([path, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=30)
            name, major, minor, tag = answer.stdout.split()
        except (OSError, ValueError, subprocess.TimeoutExpired):
            name, major, minor, tag = "?", "0", "0", "?"
        if name != "cpython" or (int(major), int(minor)) < (3, 9):
            if strict:
                raise SystemExit(f"build.py: PYTHONS names {candidate!r}, which is not CPython 3.9 or newer")
            continue
        found.setdefault(tag, path)
    return dict(sorted(found.items(), key=lambda item: minor_of(item[0])))


def minor_of(tag: str) -> tuple[int, int]:
    """``cpython-311`` -> (3, 11)."""
    digits = tag.rpartition("-")[2]
    return int(digits[0]), int(digits[1:])


# Where every call of a plugin starts, besides its entry and manifest: the command line, config, JSON and schema
# checks, and the store over the default transport (every verb but a handful reads a node). The start loads
# their imports' closure before the entry runs (boot/start.py PRELOAD); a module no call needs would only
# cost the calls that skip it, and tests/test_import_budget.py lists what a call may import.
EVERY_CALL = (
    "resource_extend.command.cli",
    "resource_extend.config",
    "resource_extend.formats.yamlsubset",  # config files in the simple subset (the samples')
    "resource_extend.formats.schemaerror",  # what every compiled validator imports
    "resource_extend.formats.jsonio",
    "resource_extend.formats.validation",
    "resource_extend.store.nodes",
    "resource_extend.store.etcd.transport",  # imported where the store is first used (verb.Call.store, prefetch)
    "resource_extend.store.etcd.gateway",
)
# Records, in the staged tree, the modules whose imports complete, in that order (for ORDER and VERB_ORDER).
RECORDER = """
import importlib.machinery, sys
done = []

class Recorder:
    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and (spec.origin or "").startswith(site + "/"):
            run = spec.loader.exec_module
            def exec_module(module, run=run):
                run(module)
                done.append(module.__name__)
            spec.loader.exec_module = exec_module
        return spec
"""
# Imports the seeds on the staged tree and prints the site's modules in the order their imports completed.
ORDER = (
    """
import sys
site, seeds = sys.argv[1], sys.argv[2:]
sys.path.insert(0, site)
"""
    + RECORDER
    + """
sys.meta_path.insert(0, Recorder())
for seed in seeds:
    __import__(seed)
print(" ".join(done))
"""
)


# Then, with those loaded, what each verb imports before it reads its call: the validators of its request and
# answer, and a handler's module imported when the verb runs (the verb tables' LazyModules). The handler gets
# a call that raises at its first use, so only imports every call of the verb makes are recorded; each verb's
# are dropped again before the next one's.
VERB_ORDER = (
    """
import sys
site, name, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, site)
for seed in seeds:
    __import__(seed)
"""
    + RECORDER
    + """
class Unused:
    def __getattr__(self, attribute):
        raise LookupError(attribute)

sys.meta_path.insert(0, Recorder())
import plugins
from resource_extend.command.nodeverbs import verb_table
before = set(sys.modules)
for verb in verb_table(plugins.plugin(name)).verbs:
    del done[:]
    for direction in ("request", "response"):
        try:
            __import__("resource_extend._validators_%s.%s_%s" % (name, verb.name.replace("-", "_"), direction))
        except ImportError:
            pass
    try:
        verb.run(Unused())
    except Exception:
        pass
    print(verb.name, *done)
    for module in set(sys.modules) - before:  # as if never imported: `from package import module` looks too
        del sys.modules[module]
        parent, _, child = module.rpartition(".")
        if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
            delattr(sys.modules[parent], child)
"""
)


def verb_preloads(site: Path, plugin: str, preload: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """What each verb of ``plugin`` imports beyond ``preload`` whenever it runs, in completion order: the start
    loads it as it loads ``preload`` (boot/start.py VERB_PRELOAD), a calculate verb's ~20 modules so without
    importlib's machinery (~2 M instructions)."""
    found = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", VERB_ORDER, str(site), plugin, *preload],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    verbs = (line.split() for line in found.stdout.splitlines())
    return {words[0]: tuple(words[1:]) for words in verbs if len(words) > 1}


def code_groups(
    preload: tuple[str, ...], verbs: dict[str, tuple[str, ...]], manifest: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """The pieces the code table holds modules in (boot/codetable.py): what every call imports, what its
    manifest imports beyond that, then one piece per set of verbs that import the same modules, so that no
    module is in two and a verb unmarshals only code it runs."""
    needed: dict[str, list[str]] = {}  # module -> the verbs that import it, in table order
    for verb, modules in verbs.items():
        for module in modules:
            needed.setdefault(module, []).append(verb)
    pieces: dict[tuple[str, ...], list[str]] = {}
    for modules in verbs.values():
        for module in modules:
            piece = pieces.setdefault(tuple(needed[module]), [])
            if module not in piece:
                piece.append(module)
    return [preload, *([manifest] if manifest else []), *(tuple(piece) for piece in pieces.values())]


def preload_order(site: Path, plugin: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The modules a call of ``plugin`` always imports, in the order their imports complete: what the start
    preloads (the closure of the entry and ``EVERY_CALL``: the command line up to the verb's first read of
    etcd), and what the manifest imports beyond it (loaded when the call imports the manifest, after that
    read went out: boot/start.py MANIFEST_PRELOAD)."""
    seeds = (f"plugins.{plugin}", "plugins", *EVERY_CALL)
    first = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", ORDER, str(site), *seeds], capture_output=True, text=True, check=True
    ).stdout.split()
    whole = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", ORDER, str(site), *seeds, registry.manifest_module(plugin)],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return tuple(first), tuple(name for name in whole if name not in first)


def code_tables(
    site: Path, pythons: dict[str, str], work: Path, start: str, groups: list[tuple[str, ...]] | None = None
) -> dict[str, bytes]:
    """The ``_code/`` members: per interpreter, the code table of ``site`` (``groups`` of modules that are
    imported together, each marshalled as one piece: ``code_groups``) and the start (``start``: the source
    of boot/start.py with the build's constants, named by the interpreter's magic number), each compiled by
    that interpreter (boot/codetable.py); and
    for any other interpreter, the table of the sources and the start's source."""
    sys.path.insert(0, str(ROOT))
    from resource_extend.boot.codetable import source_table
    from resource_extend.boot.start import FORMAT

    members: dict[str, bytes] = {
        "_code/sources.marshal": source_table(str(site), FORMAT),
        "_code/start.py": start.encode(),
    }
    source = work / f"{site.name}-start.py"
    source.write_text(start, encoding="utf-8")
    for tag, python in pythons.items():
        out = work / f"{site.name}-{tag}.marshal"
        sh(python, "-I", "-S", str(BOOT / "codetable.py"), str(site), str(out), FORMAT.decode("ascii"), str(source),
           *(",".join(group) for group in groups or ()))  # fmt: skip
        members[f"_code/{tag}.marshal"] = out.read_bytes()
        magic = marshal.loads(members[f"_code/{tag}.marshal"])[1]
        members[f"_code/{magic.hex()}.start"] = Path(f"{out}.start").read_bytes()
        out.unlink()
        Path(f"{out}.start").unlink()
    source.unlink()
    return members


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
    parser.add_argument(
        "--python",
        default="python3",
        help="the interpreter the executables run: a name looked up on PATH at each call (default python3,"
        " through `#!/bin/sh`) or an absolute path baked into the shebang (make build PYTHON=/usr/bin/python3)",
    )
    parser.add_argument(
        "--pythons",
        default=os.environ.get("PYTHONS", ""),
        help="the interpreters whose code tables the default build carries (space- or comma-separated; default"
        " $PYTHONS, else every CPython 3.9+ found: this one, python3.X on PATH, pyenv's, /usr/bin/python3)",
    )
    args = parser.parse_args()
    shebang(args.python)  # refuse a bad --python before the slow steps
    unknown = set(args.plugins) - set(PLUGINS)
    if unknown:
        parser.error(f"unknown plugin(s): {', '.join(sorted(unknown))}")
    plugins = args.plugins or [p for p in PLUGINS if (ROOT / "plugins" / f"{p}.py").exists()]
    # Core names a resource after its executable's file name, so a grpc build keeps the names and goes to
    # another directory.
    out: Path = args.out or (ROOT / "build" / "grpc" if args.grpc else ROOT)
    out.mkdir(parents=True, exist_ok=True)
    if not args.grpc:
        pythons = interpreters(args.pythons, args.python)
        if not pythons:
            raise SystemExit("build.py: no CPython 3.9 or newer found to compile the code with (set PYTHONS)")
        print("code tables for " + ", ".join(f"{'.'.join(map(str, minor_of(t)))} ({p})" for t, p in pythons.items()))
        build(plugins, ROOT / "build", out, RUNTIME_DEPS, python=args.python, pythons=pythons)
        return
    # A work directory of its own, so a grpc build (the test suite makes one) can run beside any other build.
    (ROOT / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grpc-work-", dir=ROOT / "build") as work:
        build(plugins, Path(work), out, (*RUNTIME_DEPS, *GRPC_DEPS), extract=True, python=args.python)


def build(
    plugins: list[str],
    work: Path,
    out: Path,
    requirements: tuple[str, ...],
    extract: bool = False,
    python: str = "python3",
    pythons: dict[str, str] | None = None,
) -> None:
    deps = work / "deps"
    if deps.exists():
        shutil.rmtree(deps)
    sh(sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(deps), *requirements)
    if extract:
        tag, platform, machine = running_on()
        info = f"BUILT_FOR = {(tag, platform, machine)!r}\nPRECOMPILED = {('.'.join(map(str, minor_of(tag))),)!r}\n"
    else:
        minors = tuple(".".join(map(str, minor_of(tag))) for tag in pythons or {})
        info = f"BUILT_FOR = None\nPRECOMPILED = {minors!r}\n"
    for plugin in plugins:
        site = work / plugin
        stage(plugin, site, deps, extract, build_info=info)
        preload, manifest = preload_order(site, plugin)
        verbs = verb_preloads(site, plugin, preload + manifest)
        start = boot_source(
            "start",
            ENTRY=("plugins." + plugin, "main"),
            PRELOAD=preload,
            MANIFEST_PRELOAD=manifest,
            VERB_PRELOAD=verbs,
        )
        groups = code_groups(preload, verbs, manifest)
        tables = {} if extract else code_tables(site, pythons or {}, work, start, groups)
        target = out / f"resource-{plugin}"
        zipapp(plugin, site, work, target, extract, python, tables)
        print(f"built {target}")


if __name__ == "__main__":
    main()
