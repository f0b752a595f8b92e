"""What a plugin is: its manifest (``Plugin``), the parts it names, and how those parts load (``LazyModule``).

A plugin is data and pure functions: its record class, its payload readers, its kind (``node_verbs``: record
changes and the answer's sides), its plans (``calculate_verbs``), metrics and checks. The command tree
(``command/``) serves a manifest: it builds the verb table from it, reads and writes the store, and calls the
plugin's functions in between; nothing here or in a plugin's package imports the command tree, so control
goes one way. ``plugins/__init__.py`` is the registry of the manifests, by name.

Every call imports this module, so it stays plain classes with ``__slots__``: ``dataclasses`` (and the
``inspect`` it pulls in) and ``typing`` cost more at start-up than the whole verb table. The classes are
generic for the type checker only.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    from resource_extend.envelope import Payloads
    from resource_extend.plugin.protocols import CalculateVerbs, Checks, Kind, Metrics
    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)
else:
    from resource_extend.typeshim import Generic

    R = None


class LazyModule:
    """A module imported when one of its names is first used, so a call loads the code of its own verb only
    (a node verb never loads the storage scheduler). A manifest names it under ``if TYPE_CHECKING:`` as the
    module itself, so the type checker checks the module against its protocol and go-to-definition follows.
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"

    def __getattr__(self, attribute: str) -> Any:
        import sys

        # __import__ rather than importlib.import_module: the default build's start does not load importlib.
        __import__(self._name)
        return getattr(sys.modules[self._name], attribute)


class Summaries:
    """What ``--help`` says of the verbs each plugin answers its own way (the shared ones say the same)."""

    __slots__ = ("add_node", "deploy", "most_idle", "realloc", "set_capacity")

    def __init__(self, *, add_node: str, set_capacity: str, most_idle: str, deploy: str, realloc: str) -> None:
        self.add_node = add_node
        self.set_capacity = set_capacity
        self.most_idle = most_idle
        self.deploy = deploy
        self.realloc = realloc


class Plugin(Generic[R]):
    """One plugin's manifest: its name (``resource-<name>``, ``schemas/<name>/``, ``<name>.yaml``, its etcd
    directory), a one-line summary, and its parts. ``metrics``, ``checks`` and ``calculate`` are
    ``LazyModule``s, so a call imports them only when it runs a verb that uses them. ``schemas`` is the
    directory holding ``<name>/`` and ``common.json`` when it is not the project's ``schemas/`` (a plugin
    declared outside the package, such as the tests' own). A plugin that lacks a part is a type error (mypy
    checks each part against its protocol), never a failure at run time."""

    __slots__ = (
        "calculate",
        "checks",
        "kind",
        "metrics",
        "name",
        "payloads",
        "record",
        "schemas",
        "summaries",
        "summary",
    )

    def __init__(
        self,
        name: str,
        summary: str,
        *,
        record: type[R],
        payloads: Payloads[R, Any, Any, Any, Any, Any, Any],
        kind: Kind[R, Any],
        metrics: Metrics[R],
        checks: Checks[R],
        calculate: CalculateVerbs[R],
        summaries: Summaries,
        schemas: str | None = None,
    ) -> None:
        self.name = name
        self.summary = summary
        self.record = record
        self.payloads = payloads
        self.kind = kind
        self.metrics = metrics
        self.checks = checks
        self.calculate = calculate
        self.summaries = summaries
        self.schemas = schemas

    def __repr__(self) -> str:
        return f"Plugin({self.name!r})"


def prog(plugin: Plugin[Any]) -> str:
    """The executable's name, as every line it prints names it: core names a resource after its file."""
    return f"resource-{plugin.name}"
