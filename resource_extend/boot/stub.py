"""The archive's member ``_start.py``: it gets the start (boot/start.py) running where the text in front of
the zip (boot/prefix.py) does not — the zipapp ``__main__`` (``python3 ./resource-gpu``, or a shebang with an
absolute interpreter) execs it, and so does that text on an interpreter the build did not compile for (3.6 to
3.8 included) or in an archive repacked since the build. It reads members through zipimport.

Text, not bytecode: any Python 3 must parse it (3.6 to 3.8 so get the start's one-line refusal), and it is
never ``compile()``d, whose first call in a process builds the ``ast`` module's ~120 classes. The start,
compiled by the build for this interpreter's bytecode (member ``_code/<magic number in hex>.start``), or its
source for an interpreter the build did not cover (``_code/start.py``), does the rest.
"""

import sys


def boot(archive):  # type: (str) -> None
    import gc
    import marshal
    import zipimport

    # A call is one short process whose objects are freed by their reference counts: the cyclic collector
    # would only walk the imported modules' objects again and again (~3 M instructions a call).
    gc.disable()
    importer = zipimport.zipimporter(archive)
    module = type(sys)("_resource_extend_boot")
    module.__file__ = archive + "/_resource_extend_boot.py"
    try:  # named by the magic number: only the bytecode it was compiled to is ever unmarshalled
        start = marshal.loads(
            importer.get_data("_code/%s.start" % sys.modules["_frozen_importlib_external"].MAGIC_NUMBER.hex())
        )
    except Exception:  # no start compiled for this interpreter
        try:
            start = compile(importer.get_data("_code/start.py"), module.__file__, "exec", dont_inherit=True)
        except OSError:
            sys.stderr.write("%s: the archive is damaged: no start in it; rebuild it\n" % archive)
            sys.exit(128)
    sys.modules[module.__name__] = module
    exec(start, module.__dict__)
    module.main(archive, importer.get_data)


if __name__ == "__main__":  # exec'd by the zipapp __main__ or the prefix, not when a test imports this file
    # The shebang's -c leaves argv as [-c, archive, verb, ...]; a zipapp run has the archive on sys.path[0].
    boot(sys.argv[1] if sys.argv[:1] == ["-c"] else sys.path[0])
