"""The calculate verbs' requests: get-nodes-deploy-capacity, calculate-deploy and calculate-realloc."""

from __future__ import annotations

from resource_extend.params import bulk_nodenames, deploy_count, nodename, obj

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.bounds import Bounds
    from resource_extend.params import D, H, JSONObject, Payloads, Q
else:
    from resource_extend.typeshim import Generic

    D = H = Q = None


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


class Realloc(Generic[D, H]):
    """calculate-realloc's request: the change (``request``, from ``workload_resource_request``) to what the
    workload holds (``current``, from ``workload_resource``)."""

    __slots__ = ("current", "nodename", "request")

    def __init__(self, nodename: str, request: D, current: H) -> None:
        self.nodename = nodename
        self.request = request
        self.current = current

    @classmethod
    def from_json(
        cls, doc: JSONObject, bounds: Bounds, payloads: Payloads[Any, Any, Any, Any, Any, D, H]
    ) -> Realloc[D, H]:
        name = nodename(doc)
        request = payloads.change(obj(doc, "workload_resource_request"))
        current = payloads.current(obj(doc, "workload_resource"))
        # One workload, planned once: the change and the holdings are each a workload's worth (decision 18).
        bounds.check_items(payloads.change_items(request), payloads.ITEMS)
        bounds.check_items(payloads.current_items(current), payloads.ITEMS)
        return cls(name, request, current)
