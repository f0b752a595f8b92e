#!/usr/bin/env python3
"""Build ./resource-gpu and ./resource-storage: one self-contained shiv zipapp per plugin.

    python build.py                    # ./resource-gpu, ./resource-storage: pure Python, gateway transport
    python build.py --grpc [--out DIR] # the same names in DIR (default build/grpc/), with the grpc extra

    python build.py --python /usr/bin/python3  # bake that interpreter into the shebang (default: env -S python3)

Each staging tree holds the library without the other plugin, PyYAML, the schemas, validators compiled
from the schemas (so no schema library is imported on a call) and bytecode compiled ahead of time.
The default build runs straight from its archive and unpacks nothing; the --grpc build carries compiled
extensions, so it unpacks itself once per build into a directory it checks no other user can write.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import importlib.machinery
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

ROOT = Path(__file__).resolve().parent
PLUGINS = ("gpu", "storage")
RUNTIME_DEPS = ("PyYAML>=6.0",)
# The grpc extra of pyproject.toml (a test keeps the two lists equal). `--grpc` bundles it, so that
# `etcd.transport: grpc` works; grpcio is a compiled extension, so such a build is for this platform only.
GRPC_DEPS = ("etcd-sdk-python==0.0.7", "grpcio>=1.66.2,<2", "protobuf>=5.27.2,<8")

# What every start of an executable runs first (formatted per start: the program's name and its arguments).
# The library's syntax needs Python 3.9: an older python3 would end the call in a traceback, so the start
# says it in the plugin's one failure line instead. Written for any Python 3, as the rest of a start is.
PRELUDE = """\
def _verb(args):
    # The verb as the plugin's failure lines name it: the first argument that is not an option.
    i = 0
    while i < len(args):
        if args[i] == "--config":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return " " + args[i]
    return ""


if sys.version_info < (3, 9):
    sys.stderr.write(
        "%s%s: python3 here is %d.%d; the plugin needs Python 3.9 or newer (see docs/python.md)\\n"
        % (PROG_NAME, _verb(ARGS), sys.version_info[0], sys.version_info[1])
    )
    sys.stderr.flush()
    sys.exit(128)
"""


def prelude(prog: str, args: str) -> str:
    """PRELUDE for one start: ``prog`` and ``args`` are the Python expressions of its name and arguments."""
    return PRELUDE.replace("PROG_NAME", prog).replace("ARGS", args)


# The zipapp's __main__, for a build without compiled extensions (the default): it runs the plugin straight
# from the archive (zipimport, with the unchecked-hash bytecode rewrite_main adds beside each source), so a
# call unpacks nothing and imports no file another local user could have written.
BOOT_FROM_ZIP = (
    """\
# -*- coding: utf-8 -*-
# Written by build.py: runs the plugin from this archive; nothing is unpacked.
import os
import sys

"""
    + prelude("os.path.basename(sys.argv[0])", "sys.argv[1:]")
    + """
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
from {module} import {function}

{function}()
"""
)

# What the default build's shebang runs with `python3 -IS -c`, from the archive's root (the shebang puts the
# archive first on sys.path). Running the archive as a zipapp would have the interpreter import runpy, and
# with it importlib.util, contextlib, functools and collections (~3 ms of a ~15 ms call) only to find
# __main__; `-c` starts the plugin directly. argv arrives as [-c, archive, verb, ...].
START = (
    """\
# -*- coding: utf-8 -*-
# Written by build.py: run by the shebang's -c; the archive is sys.path[0] and sys.argv[1].
import os
import sys

"""
    + prelude("os.path.basename(sys.argv[1])", "sys.argv[2:]")
    + """
archive = os.path.abspath(sys.argv.pop(1))
sys.argv[0] = archive
sys.path[0] = archive
sys.path.insert(1, os.path.join(archive, "site-packages"))
from {module} import {function}

{function}()
"""
)
START_MODULE = "_resource_extend_start"

# The __main__ of a build with compiled extensions (--grpc: grpcio), which must be files to be loaded. The
# archive is unpacked once per build id under $SHIV_ROOT, ~/.shiv or $TMPDIR/resource-extend-<uid>, and every
# call first proves that no other user can have written what it imports: the root, the build's directory and
# its site-packages are real directories (opened with O_NOFOLLOW) owned by the caller with no group or other
# write bit, and every directory above the root belongs to root or the caller and is not writable by others
# unless sticky (/tmp). What lies below was written by the caller alone: a new build is unpacked with umask
# 077 into a private temporary directory (0700) that is then renamed into place (simultaneous first calls:
# one rename wins, the others use its result). Anything else refuses the call with one line, exit 128. A
# fresh unpack removes all but this build and the newest one before it.
BOOT_EXTRACTING = (
    """\
# -*- coding: utf-8 -*-
# Written by build.py: unpacks the compiled extensions this build needs into a directory only the caller
# can write, after checking that nobody else can have planted anything there.
import os
import stat
import sys

BUILD_ID = {build_id!r}
PROG = {prog!r}
KEEP_BEFORE = 1  # extracted builds kept besides this one
STALE_TEMP = 3600.0  # seconds after which a crashed extraction's temporary directory is removed

"""
    + prelude("PROG", "sys.argv[1:]")
    + """


class Refused(Exception):
    pass


def _fail(cause):
    sys.stderr.write("%s%s: %s\\n" % (PROG, _verb(sys.argv[1:]), cause))
    sys.stderr.flush()
    os._exit(128)


def _check_ancestors(path):
    # Every directory above the root: owned by root or the caller, writable by nobody else unless sticky.
    uid = os.getuid()
    current = "/"
    for part in [""] + [p for p in path.split("/") if p]:
        current = os.path.join(current, part)
        st = os.lstat(current)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise Refused("%s is not a directory" % current)
        if st.st_uid not in (0, uid):
            raise Refused("%s belongs to uid %d" % (current, st.st_uid))
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            raise Refused("%s is writable by other users" % current)


def _open_own_dir(name, dir_fd=None, create=False):
    # O_NOFOLLOW: a symlink planted under this name is refused, never followed.
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        raise Refused("cannot open %s as a directory of its own: %s" % (name, exc.strerror))
    st = os.fstat(fd)
    if st.st_uid != os.getuid():
        os.close(fd)
        raise Refused("%s belongs to uid %d, not to the caller (uid %d)" % (name, st.st_uid, os.getuid()))
    if st.st_mode & 0o022:
        os.close(fd)
        raise Refused("%s is writable by group or others (mode %o)" % (name, stat.S_IMODE(st.st_mode)))
    return fd


def _root():
    # Symlinks above the root are resolved once here, and only the resolved path is used and checked.
    chosen = os.environ.get("SHIV_ROOT")
    home = os.environ.get("HOME")
    if chosen:
        parent, base = os.path.split(os.path.abspath(chosen).rstrip("/"))
    elif home and os.path.isabs(home) and os.path.isdir(home) and os.access(home, os.W_OK | os.X_OK):
        parent, base = home, ".shiv"
    else:
        parent, base = os.environ.get("TMPDIR") or "/tmp", "resource-extend-%d" % os.getuid()
    return os.path.join(os.path.realpath(parent), base)


def _extract(archive, root, root_fd, name):
    import tempfile
    import zipfile

    old_umask = os.umask(0o077)
    try:
        temp = tempfile.mkdtemp(prefix="." + name + ".", dir=root)
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                if member.filename.startswith("site-packages/"):
                    zipped.extract(member, temp)
        try:
            os.rename(os.path.basename(temp), name, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        except OSError:  # another call unpacked the same build first: use its copy
            import shutil

            shutil.rmtree(temp, ignore_errors=True)
            return False
    finally:
        os.umask(old_umask)
    return True


def _prune(root, root_fd, name):
    # Only entries that are ours by name and by owner: older builds of this executable, shiv's lock files
    # and temporary directories that a killed extraction left behind.
    import shutil
    import time

    prefix = PROG + "_"
    builds = []
    leftovers = []
    now = time.time()
    for entry in os.scandir(root_fd):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.name == name or st.st_uid != os.getuid():
            continue
        build_id = entry.name[len(prefix):] if entry.name.startswith(prefix) else ""
        if len(build_id) == 64 and all(c in "0123456789abcdef" for c in build_id) and stat.S_ISDIR(st.st_mode):
            builds.append((st.st_mtime, entry.name))
        elif entry.name.startswith("." + prefix) and now - st.st_mtime > STALE_TEMP:
            leftovers.append(entry.name)
    builds.sort(reverse=True)
    for old in [b[1] for b in builds[KEEP_BEFORE:]] + leftovers:
        path = os.path.join(root, old)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)  # fd-based on Linux: never follows a symlink inside
        else:
            try:
                os.unlink(old, dir_fd=root_fd)
            except OSError:
                pass


def _site():
    archive = os.path.dirname(os.path.abspath(__file__))
    name = "%s_%s" % (PROG, BUILD_ID)
    root = _root()
    _check_ancestors(os.path.dirname(root))
    root_fd = _open_own_dir(root, create=True)
    try:
        fresh = False
        try:
            build_fd = _open_own_dir(name, dir_fd=root_fd)
        except Refused:
            if os.path.lexists(os.path.join(root, name)):
                raise
            fresh = _extract(archive, root, root_fd, name)
            build_fd = _open_own_dir(name, dir_fd=root_fd)
        try:
            os.close(_open_own_dir("site-packages", dir_fd=build_fd))
        finally:
            os.close(build_fd)
        if fresh:
            _prune(root, root_fd, name)
    finally:
        os.close(root_fd)
    return os.path.join(root, name, "site-packages")


try:
    _path = _site()
except Refused as exc:
    _fail("refusing to load the unpacked build: %s" % exc)
except OSError as exc:
    _fail("cannot unpack the build (set SHIV_ROOT to a directory of your own): %s" % exc)
sys.path.insert(1, _path)
from {module} import {function}

{function}()
"""
)


def sh(*args: str) -> None:
    subprocess.run(args, check=True)


def stage(plugin: str, out: Path, deps: Path, extract: bool = False) -> None:
    """Copy the library (minus the other plugin), its dependencies, schemas and compiled validators.

    A build that runs from its archive cannot load compiled extensions, so it leaves them out: the only
    one is PyYAML's optional libyaml binding, without which PyYAML uses its pure-Python loader.
    """
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(deps, out)
    if not extract:
        for path in sorted(out.rglob("*")):
            if path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                path.unlink()
    others = [p for p in PLUGINS if p != plugin]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_validators_*", "_schemas", *others)
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
    # Unchecked-hash pycs: zipimport loads them without comparing timestamps, and they stay valid when an
    # extracting build unpacks the files with new timestamps.
    compileall.compile_dir(out, quiet=1, optimize=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def compile_validators(plugin: str, schema_dir: Path, package: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import fastjsonschema

    from resource_extend.schemafiles import handlers, verb_schema, verbs_with_schemas, without_annotations
    from resource_extend.validation import module_name

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
    # fastjsonschema checks a "number" with isinstance(x, (int, float, Decimal)); json.loads never makes a
    # Decimal, so a class nothing is an instance of keeps the answers and saves importing decimal per call.
    # Only multipleOf constructs Decimals: then the real one stays.
    if "Decimal(" not in code:
        code = code.replace(
            "from decimal import Decimal\n", "from resource_extend.schemaerror import NeverDecimal as Decimal\n"
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
        code = code.replace("import re\n", "from resource_extend.schemaerror import LazyPatterns\n", 1)
        if re.search(r"^\s*re\.|[^.\w]re\.", code, re.MULTILINE):
            raise SystemExit("build.py: the generated code uses re beyond REGEX_PATTERNS; update build.py")
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


def zipapp(plugin: str, site: Path, work: Path, target: Path, extract: bool = False, python: str = "python3") -> None:
    raw = work / f"resource-{plugin}.shiv"
    sh(
        sys.executable, "-m", "shiv", "--site-packages", str(site), "-e", f"plugins.{plugin}:main",
        "-p", "/usr/bin/env python3", "-o", str(raw), "--reproducible",
    )  # fmt: skip
    rewrite_main(raw, target, site, extract=extract, python=python)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    raw.unlink()


def shebang(python: str, start: bool = False) -> bytes:
    """``#!<interpreter> -IS``: isolated (no PYTHON* variables, user site or script directory on sys.path, which
    matters when core runs the plugin as root) and without ``site`` (no .pth hooks of the host: ~40 ms).

    Linux passes everything after the interpreter as one argument, so ``-IS`` works after an absolute path;
    after ``/usr/bin/env`` it needs ``env -S`` (coreutils 8.30+, BSD; not busybox): a bare name such as
    ``python3`` is looked up on PATH that way, an absolute path is used as it is. Behind ``env -S`` a build
    that runs from its archive (``start``) adds ``-c`` and the line that imports START from the archive,
    so the interpreter never runs the archive as a zipapp; with an absolute path there is one argument only,
    and the archive's ``__main__`` starts the plugin.
    """
    if "/" in python:
        interpreter = os.path.abspath(python)
        if any(c.isspace() for c in interpreter):
            raise SystemExit(f"build.py: --python {python!r}: a shebang cannot hold a path with spaces")
        line = f"#!{interpreter} -IS\n"
    elif python and all(c.isalnum() or c in "._-" for c in python):
        code = f"import sys;sys.path[:0]=[sys.argv[1]];import {START_MODULE}"
        line = f'#!/usr/bin/env -S {python} -IS -c "{code}"\n' if start else f"#!/usr/bin/env -S {python} -IS\n"
    else:
        raise SystemExit(f"build.py: --python {python!r}: give a command name (python3) or an absolute path")
    if len(line) > 127:  # Linux before 5.1 truncates the shebang line there
        raise SystemExit(f"build.py: --python {python!r}: the shebang line would be longer than 127 bytes")
    return line.encode()


def rewrite_main(
    source: Path, target: Path, site: Path | None = None, *, extract: bool = False, python: str = "python3"
) -> None:
    """Copy shiv's zipapp with our __main__ in place of shiv's (whose bootstrap it leaves out), our shebang,
    and the bytecode of ``site``.

    shiv leaves .pyc files out. A build that runs from the archive gets each unchecked-hash .pyc that
    stage() compiled beside its source, where zipimport looks (it never reads __pycache__); an
    extracting build gets them in __pycache__, where they stay valid wherever they are unpacked.
    """
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(source) as src, tmp.open("wb") as out:
        env = json.loads(src.read("environment.json"))
        module, _, function = env["entry_point"].partition(":")
        template = BOOT_EXTRACTING if extract else BOOT_FROM_ZIP
        name = target.name
        boot = template.format(build_id=env["build_id"], prog=name, module=module, function=function).encode()
        out.write(shebang(python, start=not extract))
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                if info.filename.startswith("_bootstrap/"):
                    continue  # shiv's extraction code: neither of our __main__ runs it
                if info.filename == "__main__.py":
                    dst.writestr(info, boot, compress_type=zipfile.ZIP_STORED)
                else:
                    dst.writestr(info, src.read(info))
            if not extract:
                start = START.format(module=module, function=function)
                root = zipfile.ZipInfo(f"{START_MODULE}.py", (1980, 1, 1, 0, 0, 0))
                root.external_attr = 0o644 << 16
                dst.writestr(root, start, compress_type=zipfile.ZIP_STORED)
                root.filename = f"{START_MODULE}.pyc"
                dst.writestr(root, _unchecked_pyc(start, f"{START_MODULE}.py"), compress_type=zipfile.ZIP_STORED)
            for pyc in sorted(site.rglob("*.pyc")) if site is not None else ():
                assert site is not None
                relative = pyc.relative_to(site)
                if not extract:
                    if pyc.parent.name != "__pycache__":
                        continue
                    relative = relative.parent.parent / (pyc.name.split(".")[0] + ".pyc")
                entry = zipfile.ZipInfo(f"site-packages/{relative.as_posix()}", (1980, 1, 1, 0, 0, 0))
                entry.external_attr = 0o644 << 16
                # Stored, not deflated: a call reads ~100 of them, and inflating costs more than the bytes.
                dst.writestr(entry, pyc.read_bytes(), compress_type=zipfile.ZIP_STORED)
    tmp.chmod(0o755)
    tmp.replace(target)  # atomic: a running core never sees a half-written executable


def _unchecked_pyc(source: str, name: str) -> bytes:
    """The unchecked-hash bytecode of ``source``, as compileall writes it for the library."""
    import importlib.util

    code = compile(source, name, "exec", dont_inherit=True)
    flags = 0b01  # hash-based, unchecked: zipimport takes it without comparing it to the source
    header = importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + importlib.util.source_hash(source.encode())
    import marshal

    return header + marshal.dumps(code)


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
        " through `env -S`) or an absolute path baked into the shebang (make build PYTHON=/usr/bin/python3)",
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
        build(plugins, ROOT / "build", out, RUNTIME_DEPS, python=args.python)
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
) -> None:
    deps = work / "deps"
    if deps.exists():
        shutil.rmtree(deps)
    sh(sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(deps), *requirements)
    for plugin in plugins:
        site = work / plugin
        stage(plugin, site, deps, extract)
        target = out / f"resource-{plugin}"
        zipapp(plugin, site, work, target, extract, python)
        print(f"built {target}")


if __name__ == "__main__":
    main()
