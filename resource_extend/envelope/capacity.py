"""get-nodes-deploy-capacity's request (``explain`` reads it too)."""

from __future__ import annotations

from resource_extend.envelope import bulk_nodenames

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.bounds import Bounds
    from resource_extend.envelope import JSONObject, Payloads, Q
else:
    from resource_extend.typeshim import Generic

    Q = None


class DeployCapacity(Generic[Q]):
    """get-nodes-deploy-capacity's request: the nodes (decision 13: ``[]`` is none) and one workload's request."""

    __slots__ = ("nodenames", "request")

    def __init__(self, nodenames: list[str], request: Q) -> None:
        self.nodenames = nodenames
        self.request = request

    @classmethod
    def from_json(
        cls, doc: JSONObject, bounds: Bounds, payloads: Payloads[Any, Any, Any, Any, Q, Any, Any]
    ) -> DeployCapacity[Q]:
        names = bulk_nodenames(doc)
        request = payloads.request(doc, "workload_resource")
        # Every node is counted for this workload (decision 18): nodes x its bindings or products.
        bounds.check_work(payloads.items(request), payloads.ITEMS, len(names), "nodes")
        return cls(names, request)
