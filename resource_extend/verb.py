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

    from resource_extend.config import Config
    from resource_extend.etcd.protocol import KV
    from resource_extend.kind import CalculateVerbs, Checks, Kind, Metrics, Record
    from resource_extend.params import Payloads
    from resource_extend.store import NodeStore

    R = TypeVar("R", bound=Record)
    Handler = Callable[["Call[R]"], Any]
else:
    from resource_extend.typeshim import Generic

    R = None


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
            # Lazy: verbs without a store import neither, and etcd.open imports only the configured transport.
            from resource_extend import etcd
            from resource_extend.store import NodeStore

            kv = self._kv or etcd.open(self.config.etcd)
            self._store = NodeStore(kv, self.config.etcd.prefix, self.plugin.name, self.plugin.record)
        return self._store


# The verbs whose first store operation reads the record of the request's `nodename`: the call asks etcd for it
# as soon as the request is parsed (cli.parsed), before it loads the plugin's manifest and the verb's code, so
# etcd answers meanwhile. A name, not a flag of the verb: the executable decides before any manifest loads.
PREFETCHING = frozenset(
    (
        "get-node-resource-info",
        "set-node-resource-capacity",
        "set-node-resource-usage",
        "fix-node-resource",
        "add-node",
        "calculate-deploy",
        "calculate-realloc",
    )
)


# The verbs that read their nodes' records in bulk first (NodeStore.get_many or iter_many): the first request
# of that read (the count of the nodes' keys, or the point reads of a few) goes out as early.
BULK_PREFETCHING = frozenset(("get-metrics", "get-nodes-deploy-capacity", "get-nodes-resource-info"))


def prefetch(config: Config, plugin: str, verb: str, request: object) -> KV | None:
    """Send the first read the verb makes (``PREFETCHING``: its node's record; ``BULK_PREFETCHING``: the
    first request of its nodes' records), and return the etcd client it went out on; None when there is
    none to send: another verb, no node named, or the gRPC transport, whose import alone is most of a call.
    The request is not checked yet: this is a read, and any failure of it is silent (``KV.prefetch``); a
    request the verb reads its nodes from otherwise, or refuses, only sends a read nobody takes."""
    if config.etcd.transport == "grpc" or not isinstance(request, dict):
        return None
    if verb in BULK_PREFETCHING:
        from resource_extend import storemany  # a bulk verb's: it loads it anyway

        return storemany.prefetch_for(config, plugin, verb, request)
    node = request.get("nodename") if verb in PREFETCHING else None
    if not isinstance(node, str):
        return None
    from resource_extend import etcd
    from resource_extend.store import MAX_NODE_NAME, node_key

    if not 0 < len(node) <= MAX_NODE_NAME:  # a name no key may have: the verb refuses it
        return None

    kv = etcd.open(config.etcd)
    kv.prefetch(node_key(config.etcd.prefix, plugin, node))
    return kv


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
