"""calculate-deploy's request. get-nodes-deploy-capacity's and calculate-realloc's are in ``envelope.capacity``
and ``envelope.realloc``: a call creates no other verb's request classes."""

from __future__ import annotations

from resource_extend.envelope import deploy_count, nodename

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.bounds import Bounds
    from resource_extend.envelope import JSONObject, Payloads, Q
else:
    from resource_extend.typeshim import Generic

    Q = None


class Deploy(Generic[Q]):
    """calculate-deploy's request: ``count`` workloads of ``request`` on one node."""

    __slots__ = ("count", "nodename", "request")

    def __init__(self, nodename: str, count: int, request: Q) -> None:
        self.nodename = nodename
        self.count = count
        self.request = request

    @classmethod
    def from_json(
        cls, doc: JSONObject, bounds: Bounds, payloads: Payloads[Any, Any, Any, Any, Q, Any, Any]
    ) -> Deploy[Q]:
        name = nodename(doc)
        count = deploy_count(doc, bounds)
        request = payloads.request(doc, "workload_resource_request")
        bounds.check_work(payloads.items(request), payloads.ITEMS, count, "deploy_count")
        return cls(name, count, request)
