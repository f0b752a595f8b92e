"""No import cycle among resource_extend/ and plugins/, in two senses.

At run time: imports at module level and inside functions count (a function-level import is a cycle that only
waits for its call), imports under ``if TYPE_CHECKING:`` do not (they never run). And as a reader follows the
arrows (issue 37): type-only imports count too, and so does a module named by a string (a ``LazyModule``, the
registry's table, ``__import__``), since a string is an import that waits. import-linter's contracts in
pyproject.toml state the intended arrows; this walk catches any cycle they do not name."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

PACKAGES = ("resource_extend", "plugins")


def module_files(root: Path) -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def imported(name: str, path: Path, known: set[str], every_arrow: bool = False) -> set[str]:
    """The project's modules ``name`` imports at run time, each as the longest known module it names; with
    ``every_arrow``, also those it imports for the type checker and those it names in a string."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if every_arrow else _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Constant) and every_arrow:
            # A whole string that is a module's dotted name: LazyModule("..."), plugins.SHIPPED, __import__.
            if isinstance(node.value, str) and node.value in known and node.value != name:
                targets.add(node.value)
            continue
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            candidates = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def graph_of(root: Path, every_arrow: bool = False) -> dict[str, set[str]]:
    files = module_files(root)
    return {name: imported(name, path, set(files), every_arrow) for name, path in files.items()}


def test_no_runtime_import_cycle_in_the_project() -> None:
    assert cycles(graph_of(ROOT)) == []


def test_no_cycle_even_through_type_only_imports_and_modules_named_by_strings() -> None:
    assert cycles(graph_of(ROOT, every_arrow=True)) == []


def test_a_cycle_through_a_lazy_module_string_or_a_type_only_import_counts_as_an_arrow(tmp_path: Path) -> None:
    package = tmp_path / "resource_extend"
    package.mkdir()
    (tmp_path / "plugins").mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text('from resource_extend import b\nlater = LazyModule("resource_extend.c")\n')
    (package / "b.py").write_text('"""resource_extend.a is named in prose here, which is no arrow."""\n')
    (package / "c.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from resource_extend import a\n")
    assert cycles(graph_of(tmp_path)) == []
    assert cycles(graph_of(tmp_path, every_arrow=True)) == [["resource_extend.a", "resource_extend.c"]]
    (package / "b.py").write_text('x = "resource_extend.a"\n')
    assert cycles(graph_of(tmp_path, every_arrow=True)) == [
        ["resource_extend.a", "resource_extend.b", "resource_extend.c"]
    ]


def test_a_cycle_through_a_function_level_import_is_found_and_a_type_checking_one_is_not(tmp_path: Path) -> None:
    package = tmp_path / "resource_extend"
    package.mkdir()
    (tmp_path / "plugins").mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from resource_extend import b\n")
    (package / "b.py").write_text("def later():\n    from resource_extend.a import x\n")
    (package / "c.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from resource_extend import a\n")
    (package / "d.py").write_text("from . import c\n")
    assert cycles(graph_of(tmp_path)) == [["resource_extend.a", "resource_extend.b"]]
    (package / "b.py").write_text("x = 1\n")
    assert cycles(graph_of(tmp_path)) == []
