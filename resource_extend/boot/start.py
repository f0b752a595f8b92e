"""The default build's start: the archive's root module ``_resource_extend_start``.

The shebang runs it with ``python3 -IS -c "...import _resource_extend_start"`` (argv: ``-c``, the archive,
the verb...); ``python3 ./resource-gpu`` or an absolute interpreter in the shebang runs the archive's
``__main__``, which calls ``run_as_zipapp``. build.py copies this file into the archive and writes the
entry point into ``ENTRY``.

Whatever python3 the host has parses this file: it is written for any Python 3 (no ``from __future__
import annotations``, annotations quoted), so 3.6 to 3.8 get the plugin's one failure line instead of a
traceback, and every later minor gets the same code.

The plugin's code is stored twice in the archive: as sources under ``site-packages/`` and, for each
CPython minor the build found, as one marshalled table of code objects (``_code/<cache tag>.marshal``).
A call whose interpreter has its table reads it in one archive read and imports every module from it
through ``CodeTable`` on ``sys.meta_path``; any other interpreter imports the sources from the archive
(zipimport compiles them on each call: slower, the same answers). Nothing is written on the host.
"""

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any

ENTRY = ("plugins.gpu", "main")  # build.py writes the executable's entry point here
SOURCES = "site-packages"
TABLES = "_code"
# The first item of every table: a table is used only by the interpreter it was compiled for.
FORMAT = b"resource-extend code table 1"
OLDEST = (3, 9)


def verb_of(args: "list[str]") -> str:
    """The verb as the plugin's failure lines name it: the first argument that is not an option."""
    i = 0
    while i < len(args):
        if args[i] == "--config":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return " " + args[i]
    return ""


def too_old(prog: str, args: "list[str]", version: "tuple[int, ...]") -> "str | None":
    """The one line a call on an interpreter older than ``OLDEST`` fails with, or None."""
    if tuple(version[:2]) >= OLDEST:
        return None
    return "%s%s: python3 here is %d.%d; the plugin needs Python %d.%d or newer (see docs/python.md)\n" % (
        prog,
        verb_of(args),
        version[0],
        version[1],
        OLDEST[0],
        OLDEST[1],
    )


def refuse_if_too_old(prog: str, args: "list[str]") -> None:
    line = too_old(prog, args, tuple(sys.version_info[:2]))
    if line is not None:
        sys.stderr.write(line)
        sys.stderr.flush()
        sys.exit(128)


def table_name(cache_tag: "str | None") -> "str | None":
    """Where this interpreter's table lies in the archive (None: an implementation without bytecode)."""
    return None if not cache_tag else TABLES + "/" + cache_tag + ".marshal"


def magic() -> bytes:
    """This interpreter's bytecode magic number, without importing importlib.util."""
    external = sys.modules.get("_frozen_importlib_external")
    found = getattr(external, "MAGIC_NUMBER", None)
    if isinstance(found, bytes):
        return found
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def read_table(data: bytes, expected_magic: bytes) -> "dict[str, tuple[bool, bytes]] | None":
    """The modules of a table: name -> (is a package, the marshalled code), or None when ``data`` was not
    compiled by an interpreter with ``expected_magic`` (then the sources serve).

    The outer layers are plain bytes, str and tuples, which every marshal version since 3.4 reads; only the
    inner code is minor-specific, and it is unmarshalled when its module is imported.
    """
    try:
        header, table_magic, modules = marshal.loads(data)
    except (ValueError, TypeError, EOFError):
        return None
    if header != FORMAT or table_magic != expected_magic or not isinstance(modules, dict):
        return None
    return modules


class CodeTable:
    """A finder and loader on ``sys.meta_path`` for the modules of one table.

    Modules keep the paths they would have had from zipimport (``__file__`` under the archive's
    ``site-packages/``), so code that finds files beside a module (validation.schema_dir) works the same;
    ``archive`` is the attribute zipimport's loader has for that.
    """

    def __init__(self, archive: str, modules: "dict[str, tuple[bool, bytes]]") -> None:
        self.archive = archive
        self.modules = modules
        self.spec_type = type(__spec__) if __spec__ is not None else _module_spec_type()  # type: Any

    def find_spec(self, name: str, path: "Sequence[str] | None" = None, target: "ModuleType | None" = None) -> "Any":
        entry = self.modules.get(name)
        if entry is None:
            return None
        package = entry[0]
        base = self.archive + "/" + SOURCES + "/" + name.replace(".", "/")
        origin = base + "/__init__.py" if package else base + ".py"
        spec = self.spec_type(name, self, origin=origin, is_package=package)
        spec.has_location = True  # so __file__ is set, as for a module from the archive's sources
        if package:
            spec.submodule_search_locations = [base]
        return spec

    def create_module(self, spec: object) -> None:
        return None  # the default module object

    def exec_module(self, module: "ModuleType") -> None:
        code = marshal.loads(self.modules[module.__name__][1])
        exec(code, module.__dict__)

    def is_package(self, name: str) -> bool:
        return self.modules[name][0]


def _module_spec_type() -> "Any":
    import importlib.machinery

    return importlib.machinery.ModuleSpec


def install(archive: str, reader: "object") -> bool:
    """Put ``archive``'s sources on sys.path and, when it holds this interpreter's table, ``CodeTable``
    before every other finder. ``reader`` reads a member by its path (the archive's zipimporter, already
    made for sys.path[0]); True when the table serves this call."""
    sys.path.insert(1, archive + "/" + SOURCES)
    name = table_name(getattr(sys.implementation, "cache_tag", None))
    if name is None:
        return False
    try:
        data = reader.get_data(name)  # type: ignore[attr-defined]
    except OSError:  # a minor the build did not cover (zipimport raises OSError for a missing member)
        return False
    modules = read_table(data, magic())
    if modules is None:
        return False
    sys.meta_path.insert(0, CodeTable(archive, modules))
    return True


# Whether this call imports from its interpreter's table (None until ``start`` ran): --version says so.
PRECOMPILED = None  # type: bool | None


def start(archive: str, prog: str, args: "list[str]") -> None:
    """Refuse an old interpreter, load the code, run the entry point.

    ``archive`` is spelled as sys.path[0] spells it, so its zipimporter (and zipimport's cache of the
    archive's directory, which the sources' importer shares) is the one the start was imported with.
    """
    global PRECOMPILED
    refuse_if_too_old(prog, args)
    reader = sys.path_importer_cache.get(archive)
    if reader is None or not hasattr(reader, "get_data"):
        import zipimport

        reader = zipimport.zipimporter(archive)
    PRECOMPILED = install(archive, reader)
    module_name, function = ENTRY
    try:
        __import__(module_name)
        entry = getattr(sys.modules[module_name], function)
    except Exception as exc:  # the plugin's own handling starts inside the entry point: no traceback before it
        sys.stderr.write(
            "%s%s: internal error while loading the plugin: %s: %s\n" % (prog, verb_of(args), type(exc).__name__, exc)
        )
        sys.stderr.flush()
        sys.exit(128)
    entry()


def run_from_shebang() -> None:
    """argv is [-c, archive, verb, ...] and sys.path[0] the archive (the shebang's code put it there)."""
    archive = sys.argv.pop(1)
    sys.argv[0] = archive
    start(archive, os.path.basename(archive), sys.argv[1:])


def run_as_zipapp() -> None:
    """The archive's __main__: argv is [archive, verb, ...] and sys.path[0] the archive."""
    archive = sys.path[0]
    start(archive, os.path.basename(sys.argv[0]), sys.argv[1:])


if __name__ == "_resource_extend_start" and sys.argv[:1] == ["-c"]:
    run_from_shebang()
