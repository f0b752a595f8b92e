"""The default build's start, module ``_resource_extend_boot``: refuses an old interpreter, puts the
plugin's code on ``sys.meta_path`` and runs the entry point.

The archive's first code (boot/stub.py) runs it: compiled by the build for the running CPython minor
(``_code/<cache tag>.start``), or from its source (``_code/start.py``) for any other interpreter. Whatever
python3 the host has must parse this file: it is written for any Python 3 (no ``from __future__ import
annotations``, annotations quoted), so 3.6 to 3.8 get the plugin's one failure line instead of a traceback.

The plugin's modules are in the archive as tables, each one member read in one go: a code table per CPython
minor the build found (``_code/<cache tag>.marshal``, code objects compiled by that interpreter) and one of
sources (``_code/sources.marshal``), which any other interpreter compiles module by module as it imports
them. ``CodeTable`` on ``sys.meta_path`` serves either; nothing is written on the host, and no module is
looked up file by file in the archive.
"""

import marshal
import posix  # os's C half, loaded by every interpreter at start-up (os itself is not)
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any

ENTRY = ("", "main")  # build.py writes the executable's entry module here (a checkout names none: no arrow)
# The modules every call imports, in the order their imports complete (build.py finds it): loaded in that
# order before the entry runs, each finds what it imports already loaded, which spares importlib's
# machinery in Python (~10 µs a module) for ~35 modules. Any order is correct; this one is the fast one.
PRELOAD = ()  # type: tuple[str, ...]
# What the plugin's manifest imports beyond PRELOAD (its record, payloads, node verbs), in the order their
# imports complete (build.py finds it): loaded the same way when the call imports the manifest
# (load_manifest), which a verb call does once it has sent its first read to etcd (cli.serve_named).
MANIFEST_PRELOAD = ()  # type: tuple[str, ...]
# What each verb imports whenever it runs, beyond PRELOAD and MANIFEST_PRELOAD (its validators, a calculate
# verb's scheduler), in the order their imports complete (build.py finds it): loaded the same way when the call
# asks (load_verb).
VERB_PRELOAD = {}  # type: dict[str, tuple[str, ...]]
# Where module paths point inside the archive (``__file__``): the staged site-packages, whose data files
# (the schemas) are members under it.
SOURCES = "site-packages"
OLDEST = (3, 9)
FORMAT = b"resource-extend code table 3"  # the first item of every table (boot/codetable.py writes it)


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


def code_table(
    read: "Callable[[str], bytes]", archive: str, name: str, magic: "object", fd: "int | None" = None
) -> "CodeTable | None":
    """This interpreter's code table: its index (member ``name``, from ``read``) read whole, its code read from
    the archive (``fd`` when the shebang opened it, else opened here) module by module as they are imported;
    None when it is missing, spoiled or another interpreter's.

    The blob of code is a member of its own, stored; the index names where each module lies in the file.
    A call so reads the code it imports (~290 KB for a GPU store verb) instead of every module's (~0.9 MB):
    the modules every call imports (``PRELOAD``) as one piece, and those each set of verbs imports as one
    piece each, which shares the names they have in common (each loaded name is hashed and interned: ~15 % of
    unmarshalling them one by one); the others one by one.
    """
    try:
        header, table_magic, at, digest, modules, groups = marshal.loads(read(name))
    except Exception:  # missing (OSError), or not a table of this format
        return None
    if header != FORMAT or table_magic != magic or not isinstance(modules, dict) or not isinstance(groups, list):
        return None
    try:
        if fd is None:
            fd = posix.open(archive, posix.O_RDONLY | posix.O_CLOEXEC)
        found = posix.pread(fd, len(digest), at)
    except OSError as exc:  # the index was just read from it: only a file gone bad under us (EIO, say) gets here
        sys.stderr.write("%s: cannot read the archive: %s\n" % (archive, exc.strerror or exc))
        sys.stderr.flush()
        sys.exit(128)
    if found != digest:
        # The archive was repacked, which moves the members; or, in a zipapp run, zipimport read the index from
        # another file (this path was replaced by an upgrade since). The shebang's reads all use one fd.
        sys.stderr.write(
            "%s: the code is not where the archive's index says: run the call again if an upgrade replaced the"
            " file, else rebuild it (an archive must not be repacked)\n" % archive
        )
        sys.stderr.flush()
        sys.exit(128)
    return CodeTable(archive, modules, fd, groups)


def source_table(read: "Callable[[str], bytes]", archive: str) -> "CodeTable | None":
    """The table of sources, for an interpreter the build did not compile for; None when it is missing."""
    try:
        header, kind, modules = marshal.loads(read("_code/sources.marshal"))
    except Exception:
        return None
    if header != FORMAT or kind != b"source" or not isinstance(modules, dict):
        return None
    return CodeTable(archive, modules)


class CodeTable:
    """A finder and loader on ``sys.meta_path`` for the modules of one table.

    ``modules`` maps a name to (is a package, where its marshalled code lies in the archive file ``fd``:
    offset, length), or to (is a package, None, (a group, its place in it)), a group being a tuple of code
    marshalled as one piece at (offset, length) of ``fd`` (``groups``), or, without ``fd``, to (is a package,
    its source), which is compiled as it is imported.

    Modules keep the paths they would have had from zipimport (``__file__`` under the archive's
    ``site-packages/``), so code that finds files beside a module (validation.schema_dir) works the same;
    ``archive`` is the attribute zipimport's loader has for that.
    """

    def __init__(self, archive: str, modules: "dict[str, Any]", fd: "int | None" = None, groups: "Any" = ()) -> None:
        self.archive = archive
        self.modules = modules
        self.fd = fd
        self.compiled = fd is not None
        self.groups = groups
        self.codes = {}  # type: dict[int, tuple[Any, ...]]  # each group's, unmarshalled when first needed
        self.spec_type = _module_spec_type()  # type: Any

    def find_spec(self, name: str, path: "Sequence[str] | None" = None, target: "ModuleType | None" = None) -> "Any":
        entry = self.modules.get(name)
        if entry is None:
            return _extension(name, self.spec_type) if name in EXTENSIONS and path is None else None
        package = entry[0]
        spec = self.spec_type(name, self, is_package=package)
        if package:
            spec.submodule_search_locations = [self.archive + "/" + SOURCES + "/" + name.replace(".", "/")]
        # No origin on the spec: importlib would derive __cached__ from it, path by path, for every module
        # (string work in Python on each import). exec_module sets __file__ itself.
        return spec

    def create_module(self, spec: object) -> None:
        return None  # the default module object

    def preload(self, names: "Sequence[str]") -> None:
        """Load ``names`` in order without importlib, as it would: a module object with the attributes
        importlib sets, in ``sys.modules`` while it runs (and removed if it fails), then bound in its parent
        package. A name already loaded, not in the table or whose parent is not loaded is left to import."""
        modules = sys.modules
        for name in names:
            if name in modules or name not in self.modules:
                continue
            parent, _, child = name.rpartition(".")
            if parent and parent not in modules:
                continue
            spec = self.find_spec(name)
            module = type(sys)(name)
            module.__spec__ = spec
            module.__loader__ = self  # type: ignore[assignment]
            if self.modules[name][0]:
                module.__path__ = spec.submodule_search_locations
                module.__package__ = name
            else:
                module.__package__ = parent
            modules[name] = module
            try:
                self.exec_module(module)
            except BaseException:
                del modules[name]
                raise
            if parent:
                setattr(modules[parent], child, modules[name])

    def exec_module(self, module: "ModuleType") -> None:
        name = module.__name__
        entry = self.modules[name]
        base = self.archive + "/" + SOURCES + "/" + name.replace(".", "/")
        path = base + "/__init__.py" if entry[0] else base + ".py"
        module.__file__ = path
        if self.fd is None:
            code = compile(entry[1], path, "exec", dont_inherit=True)
        elif entry[1] is None:
            group, place = entry[2]
            codes = self.codes.get(group)
            if codes is None:
                codes = self.codes[group] = marshal.loads(self.read(self.groups[group][0], self.groups[group][1], name))
            code = codes[place]
        else:
            code = marshal.loads(self.read(entry[1], entry[2], name))
        exec(code, module.__dict__)

    def read(self, offset: int, length: int, name: str) -> bytes:
        assert self.fd is not None
        data = posix.pread(self.fd, length, offset)
        if len(data) != length:
            raise ImportError("%s: the archive is cut short at %s; rebuild it" % (self.archive, name), name=name)
        return data

    def is_package(self, name: str) -> bool:
        return bool(self.modules[name][0])


# The C halves a call imports (jsonio's _json, the etcd client's _socket and binascii). Where the interpreter
# keeps them as shared objects in lib-dynload, the finder names the file itself: importlib's path search lists
# that directory and builds its cache in Python first (~0.15 M instructions a module). Anywhere else (built
# in, another layout) it leaves them to importlib.
EXTENSIONS = ("_json", "_socket", "binascii")


def _extension(name: str, spec_type: "Any") -> "Any":
    if name in sys.builtin_module_names:
        return None
    import _imp

    external = sys.modules["_frozen_importlib_external"]
    for directory in sys.path:
        if directory.endswith("/lib-dynload"):
            for suffix in _imp.extension_suffixes():
                path = directory + "/" + name + suffix
                try:
                    posix.stat(path)
                except OSError:
                    continue
                spec = spec_type(name, external.ExtensionFileLoader(name, path), origin=path)
                spec.has_location = True  # __file__ is the shared object, as importlib's own spec says
                return spec
    return None


def _module_spec_type() -> "Any":
    """importlib's ModuleSpec from the import system already loaded: importing importlib.machinery would
    cost a call importlib and warnings."""
    bootstrap = sys.modules.get("_frozen_importlib")
    found = getattr(bootstrap, "ModuleSpec", None)
    if found is None:
        import importlib.machinery

        found = importlib.machinery.ModuleSpec
    return found


# Whether this call imports from its interpreter's code table (None until ``main`` ran): --version says so.
PRECOMPILED = None  # type: bool | None


def install(archive: str, read: "Callable[[str], bytes]", fd: "int | None" = None) -> CodeTable:
    """``CodeTable`` first on sys.meta_path, over this interpreter's code table when the archive has it (then
    ``compiled``), else over the sources table."""
    tag = getattr(sys.implementation, "cache_tag", None)
    magic = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", None)
    table = code_table(read, archive, "_code/%s.marshal" % tag, magic, fd) if tag and magic else None
    if table is None:
        table = source_table(read, archive)
    if table is None:
        sys.stderr.write("%s: the archive is damaged: it has no code table; rebuild it\n" % archive)
        sys.stderr.flush()
        sys.exit(128)
    sys.meta_path.insert(0, table)
    return table


def boot(fd: int, found: "list[str]") -> None:
    """Run by the text in front of the zip (boot/prefix.py), which opened the archive as ``fd`` and found this
    start at ``found[0]`` (its header) and this minor's code table index at ``found[2]`` (``found[3]`` bytes)."""
    where = [int(number) for number in found]
    import gc

    gc.disable()  # as the stub does: see boot/stub.py
    archive = sys.argv[1]
    globals()["__file__"] = archive + "/_resource_extend_boot.py"
    index = "_code/%s.marshal" % getattr(sys.implementation, "cache_tag", None)
    zipped = []  # type: list[Any]

    def read(name: str) -> bytes:
        if name == index:
            named = name.encode()
            header = 30 + len(named)
            data = posix.pread(fd, header + where[3], where[2])
            # The member's own local header, with no extra field: else the archive was repacked since the build.
            expected = bytes((len(named), 0, 0, 0)) + named
            if len(data) == header + where[3] and data[:4] == b"PK\x03\x04" and data[26:header] == expected:
                return data[header:]
        if not zipped:
            import zipimport

            zipped.append(zipimport.zipimporter(archive))
        return zipped[0].get_data(name)  # type: ignore[no-any-return]

    main(archive, read, fd)


INSTALLED = None  # type: CodeTable | None


def load_manifest() -> None:
    """Load the manifest's modules (``MANIFEST_PRELOAD``) as ``PRELOAD`` was loaded (plugins.plugin asks)."""
    if INSTALLED is not None:
        INSTALLED.preload(MANIFEST_PRELOAD)


def load_verb(verb: str) -> None:
    """Load what ``verb`` imports (``VERB_PRELOAD``) as ``PRELOAD`` was loaded. The call asks for it once it has
    sent the verb's first read to etcd (cli.answer), so this code loads while etcd answers; a module it does
    not load is imported when first used, as any other."""
    if INSTALLED is not None:
        INSTALLED.preload(VERB_PRELOAD.get(verb, ()))


def main(archive: str, read: "Callable[[str], bytes]", fd: "int | None" = None) -> None:
    """Run by the stub with the archive, how to read one of its members, and the file when the shebang opened it."""
    global PRECOMPILED, INSTALLED
    if sys.argv[:1] == ["-c"]:  # the shebang's -c: argv is [-c, archive, verb, ...]
        sys.argv.pop(1)
        sys.argv[0] = archive
    prog, args = sys.argv[0].rpartition("/")[2], sys.argv[1:]  # no os: ~6 M instructions to import
    refuse_if_too_old(prog, args)
    table = INSTALLED = install(archive, read, fd)
    PRECOMPILED = table.compiled
    module_name, function = ENTRY
    try:
        table.preload(PRELOAD)
        __import__(module_name)
        entry = getattr(sys.modules[module_name], function)
    except Exception as exc:  # the plugin's own handling starts inside the entry point: no traceback before it
        sys.stderr.write(
            "%s%s: internal error while loading the plugin: %s: %s\n" % (prog, verb_of(args), type(exc).__name__, exc)
        )
        sys.stderr.flush()
        sys.exit(128)
    entry()
