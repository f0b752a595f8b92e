"""What a plugin is: its manifest (``Plugin``), which the command line, doctor, explain, build.py, the dev tools
and the tests read, and the calls and verbs it serves.

A manifest names the plugin's record class, payload readers, kind, metrics, checks and calculate verbs, and
the summaries of the verbs it answers its own way; its verb table is built from them by the function the
manifest names (``nodeverbs.verb_table``), so a plugin that lacks a part is a type error (mypy checks each
part against its protocol), never a failure at run time. ``plugins/__init__.py`` is the registry of the
manifests, by name.

Every call imports this module, so it stays plain classes with ``__slots__``: ``dataclasses`` (and the
``inspect`` it pulls in) and ``typing`` cost more at start-up than the whole verb table. The classes are
generic for the type checker only.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Callable, Generic, TypeVar

    from resource_extend.command.protocols import CalculateVerbs, Checks, Kind, Metrics
    from resource_extend.config import Config
    from resource_extend.requests import Payloads
    from resource_extend.store.etcd.protocol import KV
    from resource_extend.store.nodes import NodeStore
    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)
    Handler = Callable[["Call[R]"], Any]
else:
    from resource_extend.typeshim import Generic

    R = None


LOG_ENV = "ERU_RESOURCE_LOG"
# Operator's commands beside the verbs: core never calls them and `verbs` does not list them.
DOCTOR = "doctor"
EXPLAIN = "explain"


def prog(plugin: Plugin[Any]) -> str:
    """The executable's name, as every line it prints names it: core names a resource after its file."""
    return f"resource-{plugin.name}"


def all_verbs(plugin: Plugin[Any]) -> list[str]:
    """Every verb the command line serves, ``name`` and ``verbs`` first."""
    return ["name", "verbs", *(v.name for v in plugin.verbs)]


class Call(Generic[R]):
    """Everything one verb invocation may use. The store is opened on first use."""

    __slots__ = ("_kv", "_store", "config", "plugin", "request", "verb")

    def __init__(
        self, plugin: Plugin[R], verb: str, request: dict[str, Any], config: Config, kv: KV | None = None
    ) -> None:
        self.plugin = plugin
        self.verb = verb
        self.request = request
        self.config = config
        self._kv = kv  # the etcd client the verb's first read went out on (cli.parsed), if it did
        self._store: NodeStore[R] | None = None

    def __repr__(self) -> str:
        return f"Call({self.plugin.name!r}, {self.verb!r}, {self.request!r})"

    @property
    def store(self) -> NodeStore[R]:
        if self._store is None:
            # Lazy: verbs without a store import neither, and transport.open imports only the configured transport.
            from resource_extend.store.etcd import transport
            from resource_extend.store.nodes import NodeStore

            kv = self._kv or transport.open(self.config.etcd)
            self._store = NodeStore(kv, self.config.etcd.prefix, self.plugin.name, self.plugin.record)
        return self._store


class Verb(Generic[R]):
    """One entry of a plugin's verb table."""

    __slots__ = ("advertised", "name", "run", "summary")

    def __init__(self, name: str, summary: str, run: Handler[R], advertised: bool = True) -> None:
        self.name = name
        self.summary = summary
        self.run = run
        # calculate-remap answers upstream core but is left out of `verbs` (spec decision 1).
        self.advertised = advertised

    def __repr__(self) -> str:
        return f"Verb({self.name!r})"


class LazyModule:
    """A module imported when one of its names is first used, so a call loads the code of its own verb only
    (a node verb never loads the storage scheduler). A verb table names it under ``if TYPE_CHECKING:`` as
    the module itself, so the type checker and go-to-definition follow every handler.
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

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
    declared outside the package, such as the tests' own)."""

    __slots__ = (
        "_table",
        "_verbs",
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
        table: Callable[[Plugin[R]], tuple[Verb[R], ...]],
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
        self._table = table
        self._verbs: tuple[Verb[R], ...] | None = None

    def __repr__(self) -> str:
        return f"Plugin({self.name!r})"

    @property
    def verbs(self) -> tuple[Verb[R], ...]:
        """Every verb core calls, in the reference's order: the shared ones and the kind's own."""
        if self._verbs is None:
            # Built by the manifest's ``table`` (nodeverbs.verb_table) on first use: nodeverbs builds on this
            # module, so this module never imports it.
            self._verbs = self._table(self)
        return self._verbs

    def verb(self, name: str) -> Verb[R] | None:
        for verb in self.verbs:
            if verb.name == name:
                return verb
        return None

    def advertised(self) -> list[str]:
        return [v.name for v in self.verbs if v.advertised]
