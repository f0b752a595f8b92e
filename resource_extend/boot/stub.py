"""The archive's first code (member ``_start.py``): it gets the start (boot/start.py) running.

The shebang's ``-c`` (and the zipapp ``__main__``) read this member and ``exec`` it as text, in
``__main__``: zipimport would ``compile()`` it, and the first ``compile()`` of a process builds the ``ast``
module's ~120 classes. Compiling text still costs ~7 µs a line, so this is kept short: the start, compiled
by the build for this interpreter (``_code/<cache tag>.start``: its magic number and its code), or its
source for an interpreter the build did not cover (``_code/start.py``), does the rest. Any Python 3 must
parse this file.
"""

import sys

BOOT = "_resource_extend_boot"  # the start's module name


def boot(archive: str) -> None:
    import gc
    import marshal
    import zipimport

    # A call is one short process whose objects are freed by their reference counts: the cyclic collector
    # would only walk the imported modules' objects again and again (~3 M instructions a call).
    gc.disable()
    importer = zipimport.zipimporter(archive)  # its directory is cached from the shebang's read
    module = type(sys)(BOOT)
    module.__file__ = archive + "/" + BOOT + ".py"
    try:
        magic, code = marshal.loads(importer.get_data("_code/%s.start" % sys.implementation.cache_tag))
        start = marshal.loads(code) if magic == sys.modules["_frozen_importlib_external"].MAGIC_NUMBER else None
    except Exception:  # not compiled for this interpreter
        start = None
    try:
        start = start or compile(importer.get_data("_code/start.py"), module.__file__, "exec", dont_inherit=True)
    except OSError:
        sys.stderr.write("%s: the archive is damaged: no start in it; rebuild it\n" % archive)
        sys.exit(128)
    sys.modules[BOOT] = module
    exec(start, module.__dict__)
    module.main(archive, importer)


if __name__ == "__main__":  # exec'd by the shebang or the zipapp __main__, not when a test imports this file
    # The shebang's -c leaves argv as [-c, archive, verb, ...]; a zipapp run has the archive on sys.path[0].
    boot(sys.argv[1] if sys.argv[:1] == ["-c"] else sys.path[0])
