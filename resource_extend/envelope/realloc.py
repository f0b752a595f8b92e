"""calculate-realloc's request."""

from __future__ import annotations

from resource_extend.envelope import nodename
from resource_extend.formats.decoding import obj

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.bounds import Bounds
    from resource_extend.envelope import D, H, JSONObject, Payloads
else:
    from resource_extend.typeshim import Generic

    D = H = None


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
