"""The archive's root module ``_resource_extend_start``: the smallest code that gets the start running.

zipimport compiles a module it finds as source twice (once to name its file, once to run it), so this
module is kept to a few lines: it reads the code table of this interpreter (``_code/<cache tag>.marshal``)
and runs the start (boot/start.py, module ``_resource_extend_boot``) compiled from it, or, for an
interpreter the build did not cover (or one too old to run the plugin, which the start refuses), the
start's source from the sources table. Written for any Python 3.
"""

import marshal
import sys

FORMAT = b"resource-extend code table 1"  # the first item of every table (boot/codetable.py writes it)
BOOT = "_resource_extend_boot"


def table(importer: "object", name: str, magic: "object") -> "dict[str, tuple[bool, bytes]] | None":
    """The modules of a table, or None when it is missing, spoiled or another interpreter's."""
    try:
        header, table_magic, modules = marshal.loads(importer.get_data(name))  # type: ignore[attr-defined]
    except Exception:  # missing (OSError), or not a table of this format
        return None
    return modules if header == FORMAT and table_magic == magic and isinstance(modules, dict) else None


def boot() -> None:
    archive = sys.path[0]  # the shebang's code and a zipapp start both put the archive there
    importer = sys.path_importer_cache.get(archive)
    if importer is None:
        import zipimport

        importer = zipimport.zipimporter(archive)
    tag = getattr(sys.implementation, "cache_tag", None)
    magic = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", None)
    code = table(importer, "_code/%s.marshal" % tag, magic) if tag and magic else None
    sources = None
    if code is not None and BOOT in code:
        start = marshal.loads(code[BOOT][1])
    else:
        code = None
        sources = table(importer, "_code/sources.marshal", b"source")
        if sources is None or BOOT not in sources:
            sys.stderr.write("%s: the archive is damaged: no start in it; rebuild it\n" % archive)
            sys.exit(128)
        start = compile(sources[BOOT][1], archive + "/" + BOOT + ".py", "exec", dont_inherit=True)
    module = type(sys)(BOOT)
    module.__file__ = archive + "/" + BOOT + ".py"
    sys.modules[BOOT] = module
    exec(start, module.__dict__)
    module.main(archive, code, sources)


if __name__ == "_resource_extend_start":  # as the archive's root module, not when a test imports this file
    boot()
