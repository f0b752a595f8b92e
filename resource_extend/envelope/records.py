"""add-node's and set-node-resource-info's requests: the verbs that write a whole record."""

from __future__ import annotations

from resource_extend.envelope import engine_info, nodename
from resource_extend.formats.decoding import obj

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic

    from resource_extend.envelope import JSONObject, Payloads, R
else:
    from resource_extend.typeshim import Generic

    R = None


class AddNode(Generic[R]):
    """add-node's request: the node, the engine's report (``engine_info``) and the plugin's ``resource``
    object, which the plugin decodes only after the store has said the node is new (``record``): the
    reference checks for an existing record before it reads the resources, so that check must answer first."""

    __slots__ = ("info", "nodename", "payloads", "resource")

    def __init__(
        self,
        nodename: str,
        info: JSONObject,
        resource: JSONObject | None,
        payloads: Payloads[R, Any, Any, Any, Any, Any, Any],
    ) -> None:
        self.nodename = nodename
        self.info = info
        self.resource = resource
        self.payloads = payloads

    @classmethod
    def from_json(cls, doc: JSONObject, payloads: Payloads[R, Any, Any, Any, Any, Any, Any]) -> AddNode[R]:
        return cls(nodename(doc), engine_info(doc), obj(doc, "resource"), payloads)

    def record(self) -> R:
        """The record add-node creates: the request's resource, else the engine's report; nothing used."""
        return self.payloads.added(self.resource, self.info)


class SetInfo(Generic[R]):
    """set-node-resource-info's request: the record to store, from ``capacity`` and ``usage``."""

    __slots__ = ("nodename", "record")

    def __init__(self, nodename: str, record: R) -> None:
        self.nodename = nodename
        self.record = record

    @classmethod
    def from_json(cls, doc: JSONObject, payloads: Payloads[R, Any, Any, Any, Any, Any, Any]) -> SetInfo[R]:
        name = nodename(doc)
        return cls(name, payloads.record(obj(doc, "capacity"), obj(doc, "usage")))
