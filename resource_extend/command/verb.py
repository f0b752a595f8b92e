"""What the command line serves of a plugin: one invocation (``Call``), one verb (``Verb``) and the plugin's
verb table (``Table``, built from its manifest by ``nodeverbs.verb_table``). The manifest itself is
``resource_extend.plugin.Plugin``.

Every call imports this module, so it stays plain classes with ``__slots__``: ``dataclasses`` (and the
``inspect`` it pulls in) and ``typing`` cost more at start-up than the whole verb table. The classes are
generic for the type checker only.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Callable, Generic, TypeVar

    from resource_extend.config import Config
    from resource_extend.plugin import Plugin
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


class Table(Generic[R]):
    """A plugin's verbs as the command line serves them: built from its manifest by ``nodeverbs.verb_table``,
    in the reference's order (what ``verbs`` lists and ``--help`` shows)."""

    __slots__ = ("plugin", "verbs")

    def __init__(self, plugin: Plugin[R], verbs: tuple[Verb[R], ...]) -> None:
        self.plugin = plugin
        self.verbs = verbs

    def __repr__(self) -> str:
        return f"Table({self.plugin.name!r})"

    def verb(self, name: str) -> Verb[R] | None:
        for verb in self.verbs:
            if verb.name == name:
                return verb
        return None

    def advertised(self) -> list[str]:
        return [v.name for v in self.verbs if v.advertised]

    def names(self) -> list[str]:
        """Every verb the command line serves, ``name`` and ``verbs`` first."""
        return ["name", "verbs", *(v.name for v in self.verbs)]
