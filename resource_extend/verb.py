"""What a plugin is to the command line: a name, a record type and a table of verbs.

Adding a verb is one handler in the plugin's table plus its two schema files; the command line, the
schema checks and the store plumbing are shared by both plugins.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from resource_extend.config import Config
from resource_extend.store import NodeStore, RecordType

if TYPE_CHECKING:
    from resource_extend.kv import KV

R = TypeVar("R")


@dataclass
class Call(Generic[R]):
    """Everything one verb invocation may use. The store is opened on first use."""

    plugin: Plugin[R]
    verb: str
    request: dict[str, Any]
    config: Config
    _store: NodeStore[R] | None = field(default=None, repr=False)

    @property
    def store(self) -> NodeStore[R]:
        if self._store is None:
            kv: KV
            # Lazy imports: verbs without a store skip both, and only a grpc call pays for grpc.
            if self.config.etcd.transport == "grpc":
                from resource_extend.grpckv import GrpcKV

                kv = GrpcKV(self.config.etcd)
            else:
                from resource_extend.kv import GatewayKV

                kv = GatewayKV(self.config.etcd)
            self._store = NodeStore(kv, self.config.etcd.prefix, self.plugin.name, self.plugin.records)
        return self._store


Handler = Callable[[Call[R]], Any]


@dataclass(frozen=True)
class Verb(Generic[R]):
    name: str
    summary: str
    # The handler, or "module:function" to import it only when this verb runs: a call imports the code
    # of its own verb, not the scheduler for a node verb.
    run: Handler[R] | str
    # calculate-remap answers upstream core but is left out of `verbs` (spec decision 1).
    advertised: bool = True

    def handler(self) -> Handler[R]:
        if isinstance(self.run, str):
            module, _, function = self.run.partition(":")
            found: Handler[R] = getattr(importlib.import_module(module), function)
            return found
        return self.run


@dataclass(frozen=True)
class Plugin(Generic[R]):
    name: str
    summary: str
    records: RecordType[R]
    verbs: tuple[Verb[R], ...]

    def verb(self, name: str) -> Verb[R] | None:
        for verb in self.verbs:
            if verb.name == name:
                return verb
        return None

    def advertised(self) -> list[str]:
        return [v.name for v in self.verbs if v.advertised]


def metric_key(node: str, *rest: str) -> str:
    """Metric keys use the node name with dots replaced, so a name never adds key segments."""
    return ".".join(("core.node", node.replace(".", "_"), *rest))
