"""What a plugin is to the command line: a name, a record class, a kind, its metrics and a table of verbs.

Adding a verb is one handler in the plugin's table plus its two schema files; the command line, the
schema checks and the store plumbing are shared by both plugins.

Every call imports this module, so it stays plain classes with ``__slots__``: ``dataclasses`` (and the
``inspect`` it pulls in) and ``typing`` cost more at start-up than the whole verb table. The classes are
generic for the type checker only.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Callable, Generic, TypeVar

    from resource_extend.config import Config
    from resource_extend.kind import Kind, Metrics
    from resource_extend.store import NodeStore, Record

    R = TypeVar("R", bound=Record)
    Handler = Callable[["Call[R]"], Any]
else:
    from resource_extend.typeshim import Generic

    R = None


class Call(Generic[R]):
    """Everything one verb invocation may use. The store is opened on first use."""

    __slots__ = ("_store", "config", "plugin", "request", "verb")

    def __init__(self, plugin: Plugin[R], verb: str, request: dict[str, Any], config: Config) -> None:
        self.plugin = plugin
        self.verb = verb
        self.request = request
        self.config = config
        self._store: NodeStore[R] | None = None

    def __repr__(self) -> str:
        return f"Call({self.plugin.name!r}, {self.verb!r}, {self.request!r})"

    @property
    def store(self) -> NodeStore[R]:
        if self._store is None:
            # Lazy: verbs without a store import neither, and etcd.open imports only the configured transport.
            from resource_extend import etcd
            from resource_extend.store import NodeStore

            kv = etcd.open(self.config.etcd)
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


class Plugin(Generic[R]):
    """A plugin as the command line sees it."""

    __slots__ = ("kind", "metrics", "name", "record", "summary", "verbs")

    def __init__(
        self,
        name: str,
        summary: str,
        record: type[R],
        kind: Kind[R, Any],
        metrics: Metrics[R],
        verbs: tuple[Verb[R], ...],
    ) -> None:
        self.name = name
        self.summary = summary
        self.record = record
        self.kind = kind
        self.metrics = metrics
        self.verbs = verbs

    def __repr__(self) -> str:
        return f"Plugin({self.name!r})"

    def verb(self, name: str) -> Verb[R] | None:
        for verb in self.verbs:
            if verb.name == name:
                return verb
        return None

    def advertised(self) -> list[str]:
        return [v.name for v in self.verbs if v.advertised]
