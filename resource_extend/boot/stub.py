"""The archive's first code: it gets the start (boot/start.py) running.

The default build writes it twice. In front of the zip, after the shebang line, as text the shebang's
``-c`` reads from the file it opened and ``exec``s (``exec(posix.read(fd, N))``: the shebang line is a
comment to Python), with ``MEMBERS`` saying where in that file each member it reads lies; and as the
member ``_start.py`` with ``MEMBERS`` empty, which the zipapp ``__main__`` (``python3 ./resource-gpu``, or a
shebang with an absolute interpreter) execs and which reads members through zipimport.

Text, not bytecode: any Python 3 must parse it (3.6 to 3.8 so get the start's one-line refusal), and it is
never ``compile()``d, whose first call in a process builds the ``ast`` module's ~120 classes. Compiling
text still costs ~7 µs a line, so this is kept short: the start, compiled by the build for this
interpreter's bytecode (member ``_code/<magic number in hex>.start``), or its source for an interpreter the
build did not cover (``_code/start.py``), does the rest.
"""

import sys

# Member -> (offset of its local header in the file, the data's length): written into the copy in front of the
# zip once the archive is laid out. Reading them by offset spares a call zipimport's reading of the directory
# (~2.6 M instructions, a tenth of the bare interpreter). Empty in the member _start.py.
MEMBERS = {}  # type: dict[str, tuple[int, int]]


def boot(archive, fd):  # type: (str, int | None) -> None
    import gc
    import marshal
    import posix

    # A call is one short process whose objects are freed by their reference counts: the cyclic collector
    # would only walk the imported modules' objects again and again (~3 M instructions a call).
    gc.disable()
    zipped = []  # type: list[object]

    def read(name):  # type: (str) -> bytes
        where = MEMBERS.get(name)
        if where is not None and fd is not None:
            named = name.encode()
            header = 30 + len(named)
            data = posix.pread(fd, header + where[1], where[0])
            # The member's own local header, with no extra field: else the archive was repacked since the build.
            expected = bytes((len(named), 0, 0, 0)) + named
            if len(data) == header + where[1] and data[:4] == b"PK\x03\x04" and data[26:header] == expected:
                return data[header:]
        if not zipped:  # a zipapp run, or a repacked archive: read the zip's own directory
            import zipimport

            zipped.append(zipimport.zipimporter(archive))
        return zipped[0].get_data(name)  # type: ignore[attr-defined, no-any-return]

    module = type(sys)("_resource_extend_boot")
    module.__file__ = archive + "/_resource_extend_boot.py"
    try:  # named by the magic number: only the bytecode it was compiled to is ever unmarshalled
        start = marshal.loads(read("_code/%s.start" % sys.modules["_frozen_importlib_external"].MAGIC_NUMBER.hex()))
    except Exception:  # no start compiled for this interpreter
        try:
            start = compile(read("_code/start.py"), module.__file__, "exec", dont_inherit=True)
        except OSError:
            sys.stderr.write("%s: the archive is damaged: no start in it; rebuild it\n" % archive)
            sys.exit(128)
    sys.modules[module.__name__] = module
    exec(start, module.__dict__)
    module.main(archive, read, fd)


if __name__ == "__main__":  # exec'd by the shebang or the zipapp __main__, not when a test imports this file
    # The shebang's -c leaves argv as [-c, archive, verb, ...] and the archive open as fd; a zipapp run has
    # the archive on sys.path[0].
    boot(sys.argv[1] if sys.argv[:1] == ["-c"] else sys.path[0], globals().get("fd"))
