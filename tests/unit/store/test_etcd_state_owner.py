"""One owner per piece of state in the etcd client (issue 37): a module of ``resource_extend/store/etcd/`` (h2/
included) reads and writes an underscore attribute only of ``self`` or ``cls``, never of another object or
module. ``GatewayKV``'s connection, token, prefetched request and revision seen are its own: gatewaybulk.py,
greeting.py and failing.py get what they need as arguments (the policy, the config, a connection, the token, a
callable that sends a request) and return what the client then keeps.

Dunders (``x.__class__``) are the language's, not a module's state, and are allowed; so is a module's own
``_name`` used bare. ``getattr``/``setattr``/``delattr``/``hasattr`` with a constant underscore name count as
the attribute itself.

Helpers that reached into the client named its type, under ``TYPE_CHECKING``, and so imported upwards: the
etcd package's layers contract (pyproject.toml) is held here to every import, type-only ones included, which
import-linter skips.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import ROOT

ETCD = ROOT / "resource_extend" / "store" / "etcd"
PACKAGE = "resource_extend.store.etcd"
LAYERS_CONTRACT = "Arrows in the etcd client point one way"
OWNERS = ("self", "cls")
REFLECTION = ("getattr", "setattr", "delattr", "hasattr")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _owner(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in OWNERS


def _anothers_private(node: ast.Attribute | ast.Call) -> bool:
    """Whether ``node`` is another object's underscore attribute: ``kv._conn``, ``getattr(kv, "_conn")``."""
    if isinstance(node, ast.Attribute):
        return _private(node.attr) and not _owner(node.value)
    if not (isinstance(node.func, ast.Name) and node.func.id in REFLECTION):
        return False
    if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
        return False
    name = node.args[1].value
    return isinstance(name, str) and _private(name) and not _owner(node.args[0])


def reaches(source: str) -> list[tuple[int, str]]:
    """Each place ``source`` reads or writes an underscore attribute of something other than ``self``/``cls``:
    (line, the expression)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Attribute, ast.Call)) and _anothers_private(node):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def reaches_in(package: Path) -> list[str]:
    return [
        f"{path.relative_to(package.parent)}:{line}: {expression}"
        for path in sorted(package.rglob("*.py"))
        for line, expression in reaches(path.read_text(encoding="utf-8"))
    ]


def test_no_etcd_module_reads_or_writes_another_objects_underscore_attribute() -> None:
    assert list(ETCD.rglob("*.py")), ETCD
    offenders = reaches_in(ETCD)
    assert not offenders, (
        "pass what a helper needs as an argument and return what it makes; expose a public name when another "
        f"module must read it: {offenders}"
    )


def test_the_rule_finds_the_shapes_it_forbids_and_allows_an_objects_own() -> None:
    # The shapes gateway.py's helpers had before issue 37 (greeting.py wrote the client's connection and token,
    # gatewaybulk.py and failing.py read its policy, config and request, retry.py the policy's config).
    forbidden = """
def connect(kv, conn, token):
    kv._conn, kv._token = conn, token
    kv._call("/v3/kv/range", {}, None)
    total = kv._policy._config.total_timeout
    setattr(kv, "_token", None)
    return gatewaybulk._aligned, getattr(kv, "_seen")
"""
    assert [expression for _, expression in reaches(forbidden)] == [
        "kv._conn",
        "kv._token",
        "kv._call",
        "kv._policy",
        "kv._policy._config",
        "setattr(kv, '_token', None)",
        "gatewaybulk._aligned",
        "getattr(kv, '_seen')",
    ]
    allowed = """
class Client:
    def __init__(self, conn):
        self._conn, self._seen = conn, 0
        getattr(self, "_conn")

    @classmethod
    def make(cls):
        return cls._build()

def _helper(doc, reply):
    return doc.__class__, reply.endpoint.url, _helper
"""
    assert reaches(allowed) == []


def etcd_layers() -> list[set[str]]:
    """The etcd layers contract's layers, top first, each the set of its modules (``gateway : grpc``)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"].startswith(LAYERS_CONTRACT)]
    assert contract["containers"] == [PACKAGE]
    return [{name.strip() for name in layer.split(":")} for layer in contract["layers"]]


def etcd_imports(source: str) -> set[str]:
    """The modules of the etcd package ``source`` imports, as the contract names them (``h2`` for its
    modules), at module level, in functions and under ``TYPE_CHECKING`` alike."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "the etcd package imports by absolute names"
            module = node.module or ""
            names = [f"{module}.{alias.name}" for alias in node.names] if module == PACKAGE else [module]
        else:
            continue
        found.update(name[len(PACKAGE) + 1 :].split(".")[0] for name in names if name.startswith(f"{PACKAGE}."))
    return found


def test_the_etcd_layers_hold_for_type_only_imports_too_and_name_every_module() -> None:
    layers = etcd_layers()
    layer_of = {module: at for at, layer in enumerate(layers) for module in layer}
    modules = {path.stem for path in ETCD.glob("*.py") if path.stem != "__init__"}
    modules |= {path.name for path in ETCD.iterdir() if (path / "__init__.py").is_file()}
    assert sorted(modules - set(layer_of)) == [], "name each etcd module in the layers contract"
    upward = []
    for path in sorted(ETCD.rglob("*.py")):
        parts = path.relative_to(ETCD).parts
        if parts == ("__init__.py",):
            continue  # the package's own __init__ imports nothing (every call loads it)
        source = parts[0] if len(parts) > 1 else path.stem  # h2/client.py is the h2 layer's
        for target in sorted(etcd_imports(path.read_text(encoding="utf-8")) - {source}):
            if layer_of[target] <= layer_of[source]:
                upward.append(f"{'/'.join(parts)} -> {target}")
    assert upward == [], "an import up the layers, or between modules of one layer (types count)"


def test_the_layer_check_sees_a_type_only_import() -> None:
    helper = """
TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.store.etcd.gateway import GatewayKV

def later():
    from resource_extend.store.etcd import failing, retry
    from resource_extend.store.etcd.h2 import client
"""
    assert etcd_imports(helper) == {"gateway", "failing", "retry", "h2"}
