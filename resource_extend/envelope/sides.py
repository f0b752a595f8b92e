"""set-node-resource-capacity's and set-node-resource-usage's requests: the verbs that change one side
of a record."""

from __future__ import annotations

from resource_extend.envelope import nodename, workloads
from resource_extend.formats.decoding import flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.envelope import JSONObject, N, P, Payloads, W
else:
    from resource_extend.typeshim import Generic

    N = P = W = None


class SetCapacity(Generic[P, N]):
    """set-node-resource-capacity's request: ``request`` (``resource_request`` in the plugin's request form,
    which wins) or ``resource`` (its stored form)."""

    __slots__ = ("delta", "incr", "nodename", "request", "resource")

    def __init__(self, nodename: str, request: P, resource: N, delta: bool, incr: bool) -> None:
        self.nodename = nodename
        self.request = request
        self.resource = resource
        self.delta = delta
        self.incr = incr

    @classmethod
    def from_json(cls, doc: JSONObject, payloads: Payloads[Any, Any, N, P, Any, Any, Any]) -> SetCapacity[P, N]:
        # The flags never refuse a request, so reading them before the resources changes no error.
        name = nodename(doc)
        delta, incr = flag(doc, "delta"), flag(doc, "incr")
        request, resource = payloads.capacity(doc, delta, incr)
        return cls(name, request, resource, delta, incr)


class SetUsage(Generic[N, W]):
    """set-node-resource-usage's request: ``resource`` (the plugin reads ``resource_request``, else
    ``resource``) wins over the workloads."""

    __slots__ = ("delta", "incr", "nodename", "resource", "workloads")

    def __init__(self, nodename: str, resource: N, workloads: list[W], delta: bool, incr: bool) -> None:
        self.nodename = nodename
        self.resource = resource
        self.workloads = workloads
        self.delta = delta
        self.incr = incr

    @classmethod
    def from_json(cls, doc: JSONObject, payloads: Payloads[Any, W, N, Any, Any, Any, Any]) -> SetUsage[N, W]:
        # The flags never refuse a request, so reading them before the resources changes no error.
        name = nodename(doc)
        delta, incr = flag(doc, "delta"), flag(doc, "incr")
        resource = payloads.usage(doc)
        return cls(name, resource, workloads(doc, payloads.workload), delta, incr)
