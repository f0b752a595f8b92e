"""What the shebang's ``-c`` execs: the default build writes this text between the shebang line and the zip,
and the line reads the file up to the zip (``exec(posix.read(fd, N))``; the shebang line is a comment to
Python) from ``fd``, the archive it opened.

Text is parsed on every call, ~50 K instructions a line, so this is a few lines and one string: where, for
each minor the build compiled for, its start and its code table's index lie in the file (``TABLE``, written in
by build.py once the zip is laid out). It runs the start compiled for this interpreter, checked by the name in
the member's own header; any other case (another minor, 3.6 to 3.8, a repacked archive) execs the stub member
(boot/stub.py), which reads everything through zipimport. Any Python 3 must parse this file.
"""

import marshal
import posix
import sys

# "<magic number in hex> <start's header offset> <its length> <index's header offset> <its length> ..."
TABLE = ""

magic = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER.hex()
where = (TABLE.partition(magic)[2] or " 0 0 0 0").split()[:4]
data = posix.pread(fd, int(where[1]) + 50, int(where[0]))  # type: ignore[name-defined]  # noqa: F821
# The member's own header names it (and has no extra field): else the archive was repacked since the build.
if len(data) == int(where[1]) + 50 and data[26:50] == b"\x14\0\0\0_code/%s.start" % magic.encode():
    start = type(sys)("_resource_extend_boot")
    sys.modules[start.__name__] = start
    exec(marshal.loads(data[50:]), start.__dict__)
    start.boot(fd, where)  # type: ignore[name-defined]  # noqa: F821
else:
    import zipimport

    exec(zipimport.zipimporter(sys.argv[1]).get_data("_start.py"))
