"""Compile a staged site-packages tree into one code table, and the start into its member, for the
interpreter that runs this file.

build.py runs it once per CPython minor it found (``python3.X -I -S codetable.py SITE OUT HEADER START``),
so each table holds code objects of that minor; start.py reads the table back (``table``), the stub the
start (``OUT.start``). Written for any Python 3, like start.py, since any interpreter may be handed it.
"""

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Sequence
    from types import CodeType
    from typing import Any

    # name -> (is a package, offset in the blob, length) or (is a package, None, (group, place in it))
    Index = dict[str, tuple[bool, "int | None", Any]]
    Pieces = list[tuple[int, int]]


def module_name(relative: str) -> "tuple[str, bool] | None":
    """``resource_extend/command/cli.py`` -> (``resource_extend.command.cli``, False); a package's
    ``__init__.py`` -> its name and True; None for a file no import statement can name (``a-b.py``, a ``.py``
    in a data folder)."""
    parts = relative.split("/")
    if not parts[-1].endswith(".py"):
        return None
    parts[-1] = parts[-1][: -len(".py")]
    package = parts[-1] == "__init__"
    if package:
        parts.pop()
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts), package


def modules_of(site: str) -> "list[tuple[str, bool, str, bytes]]":
    """Every module under ``site``: (name, is a package, path relative to ``site``, source), in path order."""
    found = []
    for directory, subdirectories, files in os.walk(site):
        subdirectories.sort()
        for file in sorted(files):
            path = os.path.join(directory, file)
            relative = os.path.relpath(path, site).replace(os.sep, "/")
            named = module_name(relative)
            if named is not None:
                with open(path, "rb") as handle:
                    found.append((named[0], named[1], relative, handle.read()))
    return found


def compiled(source: bytes, filename: str) -> "CodeType":
    """``source`` compiled by this interpreter, with ``from __future__ import annotations`` turned into the
    compiler flag it stands for: the statement would import ``__future__`` on every call (~0.6 M
    instructions) only to tell the compiler what the flag tells it here."""
    import __future__

    import ast

    tree = ast.parse(source, filename)
    flags = 0
    kept = []
    for statement in tree.body:
        if (
            isinstance(statement, ast.ImportFrom)
            and statement.module == "__future__"
            and [alias.name for alias in statement.names] == ["annotations"]
            and statement.names[0].asname is None
        ):
            flags |= __future__.annotations.compiler_flag
        else:
            kept.append(statement)
    tree.body = kept
    _drop_docstrings(tree, ast)
    code = compile(tree, filename, "exec", flags=flags, dont_inherit=True, optimize=0)  # type: CodeType
    return code


def _drop_docstrings(tree: "ast.Module", ast: "Any") -> None:
    """Leave out the docstrings, as ``python -OO`` does, but keep the asserts (``-OO`` drops both): nothing
    reads ``__doc__`` at run time, and the text is a sixth of the code a call unmarshals."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0].value if body and isinstance(body[0], ast.Expr) else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                node.body = body[1:] or [ast.copy_location(ast.Pass(), body[0])]


def compile_table(site: str, header: bytes, groups: "Sequence[Sequence[str]]" = ()) -> bytes:
    """Every module under ``site`` compiled by this interpreter, as the stub reads a code table, and the
    modules of each of ``groups`` (modules imported together: those every call imports, those a verb
    imports) marshalled together, in that order: one piece shares what they have in common (names,
    constants), which each would otherwise load, hash and intern again. No module is in two groups.

    A module this interpreter cannot compile fails the build, naming it: the code must parse on the
    oldest supported minor.
    """
    modules = {}
    codes = {}
    for name, package, relative, source in modules_of(site):
        try:
            code = compiled(source, "site-packages/" + relative)
        except SyntaxError as exc:
            raise SystemExit(  # noqa: B904  (the message carries the error; 3.6 must parse this file too)
                "codetable: Python %d.%d cannot compile %s: %s" % (*sys.version_info[:2], relative, exc)
            )
        modules[name] = (package, marshal.dumps(code))
        codes[name] = code
    grouped = []
    for group in groups:
        names = tuple(name for name in group if name in codes)
        grouped.append((names, marshal.dumps(tuple(codes.pop(name) for name in names))))
    external = sys.modules["_frozen_importlib_external"]
    return marshal.dumps((header, external.MAGIC_NUMBER, modules, tuple(grouped)))


DIGEST = 16  # bytes of sha256 that open a code table's blob


def layout(table: bytes) -> "tuple[bytes, bytes, Index, Pieces]":
    """A code table (``compile_table``) as the archive holds it: (magic number, blob, index, groups).

    The blob is a digest of the code (``DIGEST`` bytes), each group's code as one piece, then every other
    module's marshalled code back to back. The index gives each module its package flag and either its
    offset in the blob and length, or None and (its group, its place in it); ``groups`` says where each
    group is (offset, length). A call reads the index whole and, from the blob, the groups and the other
    modules it imports (start.py). The digest lets it check that the file it reads is the one whose index
    it read.
    """
    import hashlib

    _, magic, modules, grouped = marshal.loads(table)
    parts, index, pieces, offset = [], {}, [], DIGEST  # type: list[bytes], Any, Pieces, int
    for number, (names, together) in enumerate(grouped):
        for place, name in enumerate(names):
            index[name] = (modules[name][0], None, (number, place))
        pieces.append((offset, len(together)))
        parts.append(together)
        offset += len(together)
    for name in sorted(modules):
        if name not in index:
            package, code = modules[name]
            index[name] = (package, offset, len(code))
            parts.append(code)
            offset += len(code)
    body = b"".join(parts)
    return magic, hashlib.sha256(body).digest()[:DIGEST] + body, index, pieces


def index_member(header: bytes, magic: bytes, blob: bytes, index: "Index", at: int, groups: "Pieces") -> bytes:
    """The index member of a code table whose blob starts at byte ``at`` of the archive file, as start.py reads
    it: (format, magic number, where the digest is, the digest, name -> (package, offset in the file, length)
    or (package, None, (group, place)), where each group is in the file)."""
    placed = {
        name: (package, offset if offset is None else at + offset, length)
        for name, (package, offset, length) in index.items()
    }
    return marshal.dumps((header, magic, at, blob[:DIGEST], placed, [(at + o, n) for o, n in groups]))


def start_member(source: bytes, filename: str) -> bytes:
    """The start compiled by this interpreter, as the stub reads it from ``_code/<magic number in hex>.start``:
    the member's name, not its content, says which bytecode it holds, so the stub unmarshals only code of
    its own (a pre-release of a minor shares the cache tag, not the bytecode)."""
    return marshal.dumps(compiled(source, filename))


def source_table(site: str, header: bytes) -> bytes:
    """Every module under ``site`` as its source, for interpreters without a code table: the same layout,
    with ``b"source"`` where a code table has its interpreter's magic number."""
    modules = {name: (package, source) for name, package, _, source in modules_of(site)}
    return marshal.dumps((header, b"source", modules))


def main(args: "list[str]") -> None:
    site, out, header, start = args[:4]
    with open(start, "rb") as handle:
        source = handle.read()
    for path, data in (
        (out, compile_table(site, header.encode("ascii"), [group.split(",") for group in args[4:] if group])),
        (out + ".start", start_member(source, "_resource_extend_boot.py")),
    ):
        with open(path, "wb") as handle:
            handle.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
