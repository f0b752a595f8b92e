"""The verbs' answers as the type checker reads them: the JSON objects the handlers return, before the
response schema checks them and jsonio writes them.

Types only, like protocols.py: nothing imports this module at run time (a call would otherwise unmarshal these
declarations for nothing), so everything here is under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic, TypedDict, TypeVar

    from resource_extend.store.record import RecordJSON

    S = TypeVar("S")
    E = TypeVar("E")
    W = TypeVar("W")

    class NodeInfo(TypedDict):
        """get-node-resource-info's and fix-node-resource's answer: the record's two sides and the diffs."""

        capacity: Any
        usage: Any
        diffs: list[str]

    class NodesInfo(TypedDict):
        node_resource_info_map: dict[str, RecordJSON]

    class Empty(TypedDict):
        pass

    class BeforeAfter(TypedDict, Generic[S]):
        """set-node-resource-capacity's and set-node-resource-usage's answer: the side before and after."""

        before: S
        after: S

    class MostIdle(TypedDict):
        nodename: str
        priority: int

    class Plans(TypedDict, Generic[E, W]):
        """calculate-deploy's answer: per new workload, its engine params and its workload resource."""

        engines_params: list[E]
        workloads_resource: list[W]

    class Replan(TypedDict, Generic[E, S, W]):
        """calculate-realloc's answer; ``S`` is the change to the node's usage."""

        engine_params: E
        delta_resource: S
        workload_resource: W

    class Remap(TypedDict):
        engine_params_map: dict[str, Any]
