"""Every module, file and test that the docs, docstrings and comments name exists (issue 37): a re-layout
or a rename leaves no pointer to code that is gone.

Read: README.md and docs/*.md whole, and the docstrings and comments of every .py file of the library, the
plugins, the dev tools, build.py and the tests. Checked: paths of the checkout's files (``store/etcd/gateway.py``,
``tests/test_chaos.py``; a path may start below ``resource_extend/``), a bare file name of ours
(``gatewaybulk.py``), a dotted ``resource_extend.…`` name (a module, or a name a module defines), and a test
named as ``tests/<file>.py::<test>`` (that file defines that test). Names of other projects' files are not
ours to check: a bare ``.py`` name no file of ours has, that is no module of ours either, is left alone
only when the list below says whose it is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.support import ROOT

PACKAGES = ("resource_extend", "resource_extend_dev", "plugins", "tests")
# Bare file names in our text that are other projects' files (Go sources of the reference, etcd's, a
# tool's), or names that stand for a kind of file rather than one: not looked for here.
FOREIGN = {
    "alloc.go", "node.go", "nodestore.go", "setup.py", "conftest.py", "__init__.py", "__main__.py",
    "_build_info.py", "site.py", "sitecustomize.py", "usercustomize.py", "shiv.py", "gateway.go", "main.go",
    "types.go", "resolver.py",  # PyYAML's
    "a-b.py", "VECTOR.json", "VECTOR.jsonl", "request.json", "response.json",  # placeholders in examples
    "_start.py", "start.py",  # the starts' names inside the archive (boot/stub.py writes them)
    "common.json",  # a schema's relative $ref
}  # fmt: skip
# The shared specification, beside the checkout (../shared/spec/), which docstrings cite by section.
SPEC = {"README.md", "protocol-and-gpu.md", "storage-types.md", "storage-scheduler.md"}
# Modules that exist only in what the build or the wheel makes: the wheel's copy of plugins/, and the
# validators build.py compiles from the schemas.
MADE = {"resource_extend._plugins", "resource_extend._validators_"}

PATH = re.compile(r"(?<![\w/.<-])((?:[\w.-]+/)*[\w<>-]+\.(?:py|jsonl|json|md|yaml\.sample))(?![\w])(?:::(\w+))?")
DOTTED = re.compile(r"(?<![\w.])(resource_extend(?:\.\w+)+)")


def files() -> dict[str, Path]:
    """Every file of the checkout that may be named, by its path from the root."""
    found = {}
    for top in (*PACKAGES, "docs", "schemas"):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                found[path.relative_to(ROOT).as_posix()] = path
    for path in ROOT.iterdir():
        if path.is_file():
            found[path.name] = path
    return found


FILES = files()


def texts() -> list[tuple[str, str]]:
    """(where, text) of every doc page and of every docstring and comment of our Python."""
    found = [(name, path.read_text()) for name, path in FILES.items() if name.endswith(".md")]
    for name, path in FILES.items():
        if not name.endswith(".py"):
            continue
        source = path.read_text()
        parts = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                 if tok.type == tokenize.COMMENT]  # fmt: skip
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    parts.append(doc)
        found.append((name, "\n".join(parts)))
    return found


def resolve(name: str, where: str) -> Path | None:
    """The file a path in ``where`` names: from the root, beside ``where`` itself, or the one file of ours
    whose path ends so (``etcd/gateway.py``, ``scheduler/count.py``, a bare ``gatewaybulk.py``)."""
    for candidate in (name, (Path(where).parent / name).as_posix()):
        if candidate in FILES:
            return FILES[candidate]
    ending = [path for key, path in FILES.items() if key == name or key.endswith("/" + name)]
    return ending[0] if ending else None


def defined(path: Path) -> set[str]:
    """The names a module defines at its top level and in its classes (functions, classes, assignments)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def module_file(dotted: str) -> tuple[Path | None, list[str]]:
    """The longest prefix of ``dotted`` that is a module of ours, and the names after it."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = "/".join(parts[:end])
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in FILES:
                return FILES[candidate], parts[end:]
    return None, parts


def stale() -> list[str]:
    problems = []
    for where, text in texts():
        for match in PATH.finditer(text):
            name, test = match.group(1), match.group(2)
            if Path(name).name in FOREIGN or "<" in name or text[max(match.start() - 1, 0)] in "$":
                continue
            if Path(name).name in SPEC and (name.startswith("spec/") or "/" not in name) and name not in FILES:
                continue
            path = resolve(name, where)
            if path is None:
                problems.append(f"{where}: {name} is no file of the checkout")
            elif test and test not in defined(path):
                problems.append(f"{where}: {name}::{test} names no test of that file")
        for match in DOTTED.finditer(text):
            dotted = match.group(1).rstrip(".")
            if any(dotted == made or dotted.startswith(made + ".") for made in MADE):
                continue
            path, rest = module_file(dotted)
            if path is None:
                problems.append(f"{where}: {dotted} is no module of ours")
            elif rest and rest[0] not in defined(path) and rest[0] not in ("py",):
                problems.append(f"{where}: {dotted}: {path.relative_to(ROOT)} defines no {rest[0]}")
    return sorted(set(problems))


def test_every_file_module_and_test_the_text_names_exists() -> None:
    found = stale()
    assert not found, f"{len(found)} stale references:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("see store/etcd/nothere.py", "store/etcd/nothere.py is no file"),
        ("tests/test_chaos.py::test_that_never_was", "names no test"),
        ("resource_extend.store.nodes.NoSuchThing", "defines no NoSuchThing"),
        ("resource_extend.params.bounds", "defines no params"),
    ],
)
def test_the_check_finds_a_stale_reference(text: str, expect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.texts", lambda: [("docs/x.md", text)])
    assert any(expect in problem for problem in stale()), stale()


def test_the_check_takes_what_exists() -> None:
    text = "store/etcd/gateway.py, tests/test_chaos.py, resource_extend.store.nodes.NodeStore, README.md"
    found = [p for p in stale_of(text)]
    assert found == [], found


def stale_of(text: str) -> list[str]:
    problems = []
    for match in PATH.finditer(text):
        if resolve(match.group(1), "docs/x.md") is None:
            problems.append(match.group(1))
    for match in DOTTED.finditer(text):
        path, rest = module_file(match.group(1))
        if path is None or (rest and rest[0] not in defined(path)):
            problems.append(match.group(1))
    return problems
