"""get-node-resource-info's and fix-node-resource's request: a node and its workloads."""

from __future__ import annotations

from resource_extend.envelope import WORKLOADS, nodename
from resource_extend.formats.decoding import obj_list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.envelope import JSONObject, Payloads, W
else:
    from resource_extend.typeshim import Generic

    W = None


class NodeWorkloads(Generic[W]):
    """get-node-resource-info's and fix-node-resource's request: the node and the objects of its
    ``workloads_resource``, which the plugin parses (``held``) when the verb needs them: get-node-resource-info
    reads the record first, as the reference does, so an unknown node answers null whatever they hold."""

    __slots__ = ("nodename", "payloads", "workloads")

    def __init__(
        self, nodename: str, workloads: list[JSONObject], payloads: Payloads[Any, W, Any, Any, Any, Any, Any]
    ) -> None:
        self.nodename = nodename
        self.workloads = workloads
        self.payloads = payloads

    @classmethod
    def from_json(cls, doc: JSONObject, payloads: Payloads[Any, W, Any, Any, Any, Any, Any]) -> NodeWorkloads[W]:
        return cls(nodename(doc), obj_list(doc, WORKLOADS) or [], payloads)

    def held(self) -> list[W]:
        return [self.payloads.workload(doc) for doc in self.workloads]
