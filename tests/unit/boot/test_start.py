"""The default build's start, in-process: the refusal line, the tables and the finder over them.

What depends on the interpreter (does 3.6 parse it, does each minor load its table) is tested through the
built executables under real interpreters in tests/test_interpreters.py.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend.boot import codetable, start


@pytest.mark.parametrize(
    ("args", "verb"),
    [
        (["get-node-resource-info"], " get-node-resource-info"),
        (["--config", "gpu.yaml", "add-node"], " add-node"),
        (["-v"], ""),
        (["--config"], ""),
        ([], ""),
    ],
)
def test_the_verb_named_in_a_refusal_skips_options_and_the_config_path(args: list[str], verb: str) -> None:
    assert start.verb_of(args) == verb


def test_interpreters_before_3_9_get_one_line_naming_both_versions() -> None:
    assert start.too_old("resource-gpu", ["add-node"], (3, 8, 10)) == (
        "resource-gpu add-node: python3 here is 3.8; the plugin needs Python 3.9 or newer (see docs/python.md)\n"
    )
    assert start.too_old("resource-gpu", [], (3, 6)) is not None
    assert start.too_old("resource-gpu", ["add-node"], (3, 9, 0)) is None
    assert start.too_old("resource-gpu", ["add-node"], (4, 0)) is None


def site_tree(root: Path) -> Path:
    site = root / "site"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("VALUE = 'package'\n")
    (site / "pkg" / "sub" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "leaf.py").write_text("from pkg import VALUE\nLEAF = VALUE + ' leaf'\n")
    (site / "pkg" / "not-a-module.py").write_text("this is not Python\n")
    (site / "pkg" / "data.json").write_text("{}")
    return site


def magic() -> bytes:
    return sys.modules["_frozen_importlib_external"].MAGIC_NUMBER  # type: ignore[no-any-return]


class Members:
    """The stub's reading of a member, over a dict: missing members raise OSError, as zipimport's do."""

    def __init__(self, members: dict[str, bytes]) -> None:
        self.members = members

    def __call__(self, name: str) -> bytes:
        if name not in self.members:
            raise OSError(0, "", name)
        return self.members[name]


def placed(tmp_path: Path, table: bytes, header: bytes = start.FORMAT) -> tuple[str, Members]:
    """An archive file holding the code table's blob after some other bytes, and its index member."""
    magic_number, blob, index, group = codetable.layout(table)
    tmp_path.mkdir(parents=True, exist_ok=True)
    archive = tmp_path / "resource-x"
    archive.write_bytes(b"#!shebang and other members\n" + blob)
    at = archive.stat().st_size - len(blob)
    member = codetable.index_member(header, magic_number, blob, index, at, group)
    return str(archive), Members(
        {"t": member, "_code/sources.marshal": codetable.source_table(str(tmp_path / "no-site"), header)}
    )


def read(tmp_path: Path, table: bytes, expected: object) -> start.CodeTable | None:
    archive, members = placed(tmp_path, table)
    return start.code_table(members, archive, "t", expected)


def test_a_table_holds_every_importable_module_once_with_its_package_flag(tmp_path: Path) -> None:
    table = read(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT), magic())
    assert table is not None and table.compiled
    assert {name: entry[0] for name, entry in table.modules.items()} == {
        "pkg": True,
        "pkg.sub": True,
        "pkg.sub.leaf": False,
    }
    sources = start.source_table(
        Members({"_code/sources.marshal": codetable.source_table(str(site_tree(tmp_path / "b")), start.FORMAT)}), "/a"
    )
    assert sources is not None and not sources.compiled and sources.modules.keys() == table.modules.keys()
    assert sources.modules["pkg"] == (True, b"VALUE = 'package'\n")


def test_the_blob_holds_each_modules_code_where_the_index_says(tmp_path: Path) -> None:
    code = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    _, blob, index, _ = codetable.layout(code)
    expected = marshal.loads(code)[2]
    assert index.keys() == expected.keys()
    for name, (package, offset, length) in index.items():
        assert offset is not None  # no group asked for
        assert (package, blob[offset : offset + length]) == expected[name]


def test_a_table_from_another_interpreter_or_another_format_is_not_used(tmp_path: Path) -> None:
    data = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    assert read(tmp_path / "a", data, b"\x00\x00\r\n") is None  # another minor's magic number
    archive, members = placed(tmp_path / "b", data, b"resource-extend code table 0")
    assert start.code_table(members, archive, "t", magic()) is None
    assert start.code_table(Members({"t": b"not marshal"}), archive, "t", magic()) is None
    assert start.code_table(Members({"t": marshal.dumps(("a", "b"))}), archive, "t", magic()) is None
    assert start.code_table(Members({}), archive, "missing", magic()) is None


def test_an_archive_replaced_after_its_index_was_read_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # zipimport read the directory (and so the index) of the old file; the start then opens the new one.
    archive, members = placed(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT))
    Path(archive).write_bytes(b"an upgraded build" * 100)
    with pytest.raises(SystemExit) as exit_:
        start.code_table(members, archive, "t", magic())
    assert exit_.value.code == 128
    assert capsys.readouterr().err == (
        f"{archive}: the code is not where the archive's index says: run the call again if an upgrade replaced"
        " the file, else rebuild it (an archive must not be repacked)\n"
    )


def test_a_module_the_interpreter_cannot_compile_fails_the_build_naming_it(tmp_path: Path) -> None:
    site = site_tree(tmp_path)
    (site / "pkg" / "broken.py").write_text("def (:\n")
    with pytest.raises(SystemExit, match=r"cannot compile pkg/broken\.py"):
        codetable.compile_table(str(site), start.FORMAT)


@pytest.fixture
def clean_imports() -> Iterator[None]:
    meta = list(sys.meta_path)
    yield
    sys.meta_path[:] = meta
    for name in ("pkg", "pkg.sub", "pkg.sub.leaf"):
        sys.modules.pop(name, None)


@pytest.mark.usefixtures("clean_imports")
@pytest.mark.parametrize("compiled", [True, False])
def test_modules_import_from_either_table_with_the_paths_they_have_in_the_archive(
    compiled: bool, tmp_path: Path
) -> None:
    if compiled:
        table = read(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT), magic())
    else:
        sources = codetable.source_table(str(site_tree(tmp_path)), start.FORMAT)
        table = start.source_table(Members({"_code/sources.marshal": sources}), str(tmp_path / "resource-x"))
    assert table is not None
    sys.meta_path.insert(0, table)
    import pkg.sub.leaf  # type: ignore[import-not-found]

    archive = str(tmp_path / "resource-x")
    assert pkg.sub.leaf.LEAF == "package leaf"
    assert pkg.sub.leaf.__file__ == f"{archive}/site-packages/pkg/sub/leaf.py"
    assert pkg.__file__ == f"{archive}/site-packages/pkg/__init__.py"
    assert pkg.__path__ == [f"{archive}/site-packages/pkg"]
    assert pkg.sub.leaf.__loader__ is table and table.archive == archive
    assert table.find_spec("json") is None  # anything else is left to the other finders


@pytest.mark.usefixtures("clean_imports")
def test_install_serves_this_interpreters_code_table_and_else_the_sources(tmp_path: Path) -> None:
    archive, members = placed(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT))
    sources = codetable.source_table(str(site_tree(tmp_path / "b")), start.FORMAT)
    tag = sys.implementation.cache_tag
    both = Members({f"_code/{tag}.marshal": members.members["t"], "_code/sources.marshal": sources})
    assert start.install(archive, both) is sys.meta_path[0]
    assert isinstance(sys.meta_path[0], start.CodeTable) and sys.meta_path[0].compiled
    sys.meta_path.pop(0)
    other_minor = Members({"_code/cpython-30.marshal": members.members["t"], "_code/sources.marshal": sources})
    assert start.install(archive, other_minor) is sys.meta_path[0]
    assert isinstance(sys.meta_path[0], start.CodeTable) and not sys.meta_path[0].compiled


def test_an_archive_without_any_table_fails_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        start.install("/a/resource-x", Members({}))
    assert exit_.value.code == 128
    assert capsys.readouterr().err == "/a/resource-x: the archive is damaged: it has no code table; rebuild it\n"


def test_the_start_member_is_the_starts_code_compiled_by_this_interpreter() -> None:
    namespace: dict[str, object] = {}
    exec(marshal.loads(codetable.start_member(b"VALUE = 1\n", "start.py")), namespace)
    assert namespace["VALUE"] == 1


def test_annotations_future_import_becomes_a_flag_and_no_import(tmp_path: Path) -> None:
    # The statement would import __future__ on every call; the flag keeps annotations unevaluated all the same.
    source = b'"""Doc."""\nfrom __future__ import annotations\n\ndef f(x: Undefined) -> None:\n    pass\n'
    code = codetable.compiled(source, "m.py")
    assert "__future__" not in code.co_names
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert "__doc__" not in namespace  # docstrings are left out of the tables, as -OO does
    function: Any = namespace["f"]
    assert function.__annotations__ == {"x": "Undefined", "return": "None"}


@pytest.mark.usefixtures("clean_imports")
def test_preload_loads_modules_as_import_would_and_leaves_the_rest_to_import(tmp_path: Path) -> None:
    table = read(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT), magic())
    assert table is not None
    sys.meta_path.insert(0, table)
    # A module whose parent is not loaded yet ("pkg.sub" before "pkg") and one not in the table are skipped.
    table.preload(["pkg.sub", "pkg", "json"])
    assert "pkg" in sys.modules and "pkg.sub" not in sys.modules
    table.preload(["pkg.sub", "pkg.sub.leaf"])
    leaf: Any = sys.modules["pkg.sub.leaf"]
    assert leaf.LEAF == "package leaf"
    assert leaf.__loader__ is table and leaf.__package__ == "pkg.sub" and leaf.__spec__.name == "pkg.sub.leaf"
    assert leaf.__file__ == f"{tmp_path}/resource-x/site-packages/pkg/sub/leaf.py"
    assert sys.modules["pkg"].__path__ == [f"{tmp_path}/resource-x/site-packages/pkg"]
    assert sys.modules["pkg"].__package__ == "pkg"
    assert sys.modules["pkg.sub"].leaf is leaf  # bound in its parent, as importlib binds it
    import pkg.sub.leaf  # noqa: F401  (already loaded: the same module)

    assert sys.modules["pkg.sub.leaf"] is leaf


@pytest.mark.usefixtures("clean_imports")
def test_a_preloaded_module_that_fails_is_not_left_half_loaded(tmp_path: Path) -> None:
    site = site_tree(tmp_path)
    (site / "pkg" / "broken.py").write_text("raise RuntimeError('no')\n")
    table = read(tmp_path, codetable.compile_table(str(site), start.FORMAT), magic())
    assert table is not None
    sys.meta_path.insert(0, table)
    with pytest.raises(RuntimeError, match="no"):
        table.preload(["pkg", "pkg.broken"])
    assert "pkg.broken" not in sys.modules and not hasattr(sys.modules["pkg"], "broken")
    sys.modules.pop("pkg.broken", None)


def test_the_tables_leave_docstrings_out_and_keep_asserts() -> None:
    source = (
        b'"""Module."""\n\nclass C:\n    """Class."""\n\n\ndef f(x):\n    """Only a docstring."""\n\n\n'
        b'def g(x):\n    assert x, "kept"\n    return x\n'
    )
    namespace: dict[str, Any] = {}
    exec(codetable.compiled(source, "m.py"), namespace)
    assert "__doc__" not in namespace and namespace["C"].__doc__ is None and namespace["f"].__doc__ is None
    assert namespace["f"](1) is None
    with pytest.raises(AssertionError, match="kept"):
        namespace["g"](0)


def test_an_archive_that_cannot_be_opened_for_its_code_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive, members = placed(tmp_path, codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT))
    Path(archive).unlink()  # the index was read (zipimport caches the directory); the file is gone since
    with pytest.raises(SystemExit) as exit_:
        start.code_table(members, archive, "t", magic())
    assert exit_.value.code == 128
    assert capsys.readouterr().err == f"{archive}: cannot read the archive: No such file or directory\n"


@pytest.mark.usefixtures("clean_imports")
def test_modules_imported_together_are_one_piece_of_the_blob_and_load_as_the_others_do(tmp_path: Path) -> None:
    # A name the build's lists have that the site lacks is left out; each group keeps its list's order.
    groups = [("pkg.sub.leaf", "pkg", "absent"), ("pkg.sub",)]
    grouped = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT, groups)
    _, blob, index, pieces = codetable.layout(grouped)
    assert index == {
        "pkg.sub.leaf": (False, None, (0, 0)),
        "pkg": (True, None, (0, 1)),
        "pkg.sub": (True, None, (1, 0)),
    }
    (offset, length), _ = pieces
    assert [code.co_filename for code in marshal.loads(blob[offset : offset + length])] == [
        "site-packages/pkg/sub/leaf.py",
        "site-packages/pkg/__init__.py",
    ]
    table = read(tmp_path, grouped, magic())
    assert table is not None and table.codes == {}  # a group is unmarshalled once a module of it is loaded
    sys.meta_path.insert(0, table)
    table.preload(["pkg"])
    assert table.codes.keys() == {0}
    import pkg.sub.leaf

    assert pkg.sub.leaf.LEAF == "package leaf"
    assert pkg.sub.leaf.__file__ == f"{tmp_path}/resource-x/site-packages/pkg/sub/leaf.py"
    assert table.codes.keys() == {0, 1} and len(table.codes[0]) == 2


def test_a_grouped_table_and_an_ungrouped_one_hold_the_same_code(tmp_path: Path) -> None:
    site = str(site_tree(tmp_path))
    _, plain, plain_index, _ = codetable.layout(codetable.compile_table(site, start.FORMAT))
    _, blob, index, pieces = codetable.layout(codetable.compile_table(site, start.FORMAT, [("pkg", "pkg.sub.leaf")]))
    codes = [marshal.loads(blob[offset : offset + length]) for offset, length in pieces]
    for name, (_, offset, length) in plain_index.items():
        assert offset is not None
        _, at, where = index[name]
        other = codes[where[0]][where[1]] if at is None else marshal.loads(blob[at : at + where])
        assert marshal.loads(plain[offset : offset + length]) == other, name


def test_the_start_reads_its_index_at_the_offset_it_was_given_and_checks_the_members_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The text in front of the zip hands the start where this minor's index is; the start uses those bytes
    # only when the member's own header names it, and reads through zipimport otherwise.
    import zipfile

    index = f"_code/{sys.implementation.cache_tag}.marshal"
    archive = tmp_path / "resource-x"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("first", b"x" * 7)
        zipped.writestr(index, b"the index")
    info = zipfile.ZipFile(archive).getinfo(index)
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(start, "main", lambda archive, read, fd: calls.append((archive, read)))
    monkeypatch.setattr(sys, "argv", ["-c", str(archive), "get-node-resource-info"])
    import zipimport

    directories: list[str] = []
    zipimporter = zipimport.zipimporter

    def counted(path: str) -> zipimport.zipimporter:
        directories.append(path)
        return zipimporter(path)

    monkeypatch.setattr(zipimport, "zipimporter", counted)
    fd = os.open(archive, os.O_RDONLY)
    try:
        start.boot(fd, [str(n) for n in (0, 0, info.header_offset, info.file_size)])
        (_, read), *_ = calls
        assert read(index) == b"the index" and directories == []  # no directory read for it
        start.boot(fd, [str(n) for n in (0, 0, 0, info.file_size)])  # where "first" is: not the index's header
        assert calls[1][1](index) == b"the index" and directories == [str(archive)]  # read through zipimport
        assert calls[1][1]("first") == b"x" * 7
    finally:
        os.close(fd)


def test_the_finder_names_the_c_halves_a_call_imports_where_importlib_would_find_them() -> None:
    import importlib.machinery

    for name in start.EXTENSIONS:
        ours = start._extension(name, importlib.machinery.ModuleSpec)
        theirs = importlib.machinery.PathFinder.find_spec(name)
        if name in sys.builtin_module_names or theirs is None:
            assert ours is None, name  # built in: the builtin importer's
        else:
            assert (ours.origin, type(ours.loader), ours.has_location) == (theirs.origin, type(theirs.loader), True)
    table = start.CodeTable("/a/resource-x", {})
    assert table.find_spec("_json", ["/somewhere"]) is None  # only top-level names
    assert table.find_spec("json") is None  # and only those three
