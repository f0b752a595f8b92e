"""The default build's start, in-process: the refusal line, the code table's format and its finder.

What depends on the interpreter (does 3.6 parse it, does each minor load its table) is tested through the
built executables under real interpreters in tests/test_interpreters.py.
"""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

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


def test_each_interpreter_looks_for_its_own_table_and_one_without_bytecode_for_none() -> None:
    assert start.table_name("cpython-312") == "_code/cpython-312.marshal"
    assert start.table_name(None) is None
    assert start.table_name("") is None


def site_tree(root: Path) -> Path:
    site = root / "site"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("VALUE = 'package'\n")
    (site / "pkg" / "sub" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "leaf.py").write_text("from pkg import VALUE\nLEAF = VALUE + ' leaf'\n")
    (site / "pkg" / "not-a-module.py").write_text("this is not Python\n")
    (site / "pkg" / "data.json").write_text("{}")
    return site


def test_a_table_holds_every_importable_module_once_with_its_package_flag(tmp_path: Path) -> None:
    data = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    modules = start.read_table(data, start.magic())
    assert modules is not None
    assert {name: package for name, (package, _) in modules.items()} == {
        "pkg": True,
        "pkg.sub": True,
        "pkg.sub.leaf": False,
    }


def test_a_table_from_another_interpreter_or_another_format_is_not_used(tmp_path: Path) -> None:
    data = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    assert start.read_table(data, b"\x00\x00\r\n") is None  # another minor's magic number
    other = codetable.compile_table(str(site_tree(tmp_path / "b")), b"resource-extend code table 0")
    assert start.read_table(other, start.magic()) is None
    assert start.read_table(b"not marshal", start.magic()) is None
    assert start.read_table(marshal.dumps(("a", "b")), start.magic()) is None


def test_a_module_the_interpreter_cannot_compile_fails_the_build_naming_it(tmp_path: Path) -> None:
    site = site_tree(tmp_path)
    (site / "pkg" / "broken.py").write_text("def (:\n")
    with pytest.raises(SystemExit, match=r"cannot compile pkg/broken\.py"):
        codetable.compile_table(str(site), start.FORMAT)


def test_modules_from_the_table_import_with_the_paths_they_have_in_the_archive(tmp_path: Path) -> None:
    data = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    modules = start.read_table(data, start.magic())
    assert modules is not None
    table = start.CodeTable("/opt/plugins/resource-x", modules)
    sys.meta_path.insert(0, table)
    try:
        import pkg.sub.leaf  # type: ignore[import-not-found]

        assert pkg.sub.leaf.LEAF == "package leaf"
        assert pkg.sub.leaf.__file__ == "/opt/plugins/resource-x/site-packages/pkg/sub/leaf.py"
        assert pkg.__path__ == ["/opt/plugins/resource-x/site-packages/pkg"]
        assert pkg.sub.leaf.__loader__ is table and table.archive == "/opt/plugins/resource-x"
        assert table.find_spec("json") is None  # anything else is left to the other finders
    finally:
        sys.meta_path.remove(table)
        for name in ("pkg", "pkg.sub", "pkg.sub.leaf"):
            sys.modules.pop(name, None)


class Members:
    """A zipimporter's get_data over a dict: the one call install makes of it."""

    def __init__(self, members: dict[str, bytes]) -> None:
        self.members = members

    def get_data(self, name: str) -> bytes:
        if name not in self.members:
            raise OSError(0, "", name)
        return self.members[name]


@pytest.fixture
def clean_paths() -> object:
    path, meta = list(sys.path), list(sys.meta_path)
    yield
    sys.path[:], sys.meta_path[:] = path, meta


@pytest.mark.usefixtures("clean_paths")
def test_install_serves_from_the_table_when_it_matches_and_else_leaves_the_sources(tmp_path: Path) -> None:
    name = start.table_name(sys.implementation.cache_tag)
    assert name is not None
    data = codetable.compile_table(str(site_tree(tmp_path)), start.FORMAT)
    finders = len(sys.meta_path)
    assert start.install("/a/resource-x", Members({name: data})) is True
    assert isinstance(sys.meta_path[0], start.CodeTable) and len(sys.meta_path) == finders + 1
    assert "/a/resource-x/site-packages" in sys.path
    sys.meta_path.pop(0)
    assert start.install("/a/resource-x", Members({})) is False  # a minor the build did not cover
    assert start.install("/a/resource-x", Members({name: b"spoiled"})) is False
    assert len(sys.meta_path) == finders
