"""A counted plugin's requests, one value per verb, each read and checked once where the call starts.

As the reference decodes a request into a struct before its logic runs, a handler reads its request here and
then works on the value; the fields are read in the order, and refused with the messages, they always were.
add-node's cards and get-node-resource-info's workloads are decoded later (``envelope.records.AddNode.record``,
``envelope.nodeinfo.NodeWorkloads.held``): the reference reads them only after the store has answered. The
verbs' shapes are ``envelope``'s, shared with the storage plugin; what is a counted plugin's own is how it reads
its count maps (``CountedPayloads``, which names the plugin in its refusals: ``invalid gpu map``), and
set-node-resource-capacity's cards, which follow rules of their own (``cards``).
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats import decoding, jsonio
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import CountedRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Generic, TypeVar

    from resource_extend.envelope import JSONObject

    C = TypeVar("C", bound=CountedRecord)
else:
    from resource_extend.typeshim import Generic

    C = None


def workload(doc: JSONObject) -> MaybeMap:
    """One entry of ``workloads_resource``: the cards a workload on the node holds."""
    return prodmap.parse(doc, "workloads_resource[]")


def _present(resource: JSONObject | None, where: str) -> MaybeMap:
    """A present object is a map (``{}`` without ``prod_count_map``); an absent one is ``None``."""
    if resource is None:
        return None
    return prodmap.parse(resource, where) or {}


def _cards(resource: JSONObject | None, where: str, name: str) -> ProdMap:
    """Cards a node has or a new workload wants: every count positive (``{}`` when none are named)."""
    cards = prodmap.parse(resource, where) or {}
    prodmap.validate(cards, name)
    return cards


def _reported(info: JSONObject, name: str) -> ProdMap:
    """The engine's own report of the plugin's resource (upstream core's ``Resources["gpu"]``), or none."""
    resources = info.get("Resources")
    entry = resources.get(name) if isinstance(resources, dict) else None
    if isinstance(entry, str):
        import base64  # only an add-node carrying the engine's report pays for these
        import binascii

        # Bytes from the engine, read as records are (as Go reads them): whatever does not read as a JSON
        # document (not base64, not UTF-8, nested too deeply for the decoder) is ignored, as decision 2 says.
        try:
            entry = jsonio.load_document(base64.b64decode(entry, validate=True))
        except (binascii.Error, PluginError):
            return {}
    if not isinstance(entry, dict):
        return {}
    reported = prodmap.parse(entry, f'info.Resources["{name}"]') or {}
    prodmap.validate(reported, name)
    return reported


def _request_and_resource(doc: JSONObject) -> tuple[MaybeMap, MaybeMap]:
    """set-node-resource-*'s ``resource_request`` and ``resource``: both are read, and either may refuse the
    call, even when the first wins, as the reference reads them."""
    request = _present(decoding.obj(doc, "resource_request"), "resource_request")
    return request, _present(decoding.obj(doc, "resource"), "resource")


class KeepStored:
    """set-node-resource-capacity's ``resource_request`` when it keeps the stored cards: absolute, without
    ``prod_count_map``."""

    __slots__ = ()


KEEP = KeepStored()


class CountedPayloads(Generic[C]):
    """How a counted plugin reads its own payloads, for the shared request values in ``envelope``: into records
    of its class ``record``, whose ``NAME`` its refusals give."""

    __slots__ = ("name", "record_type")

    # The work of a counted workload grows with the products it names (decision 18).
    ITEMS = "products"

    def __init__(self, record: type[C]) -> None:
        self.record_type = record
        self.name = record.NAME

    def added(self, resource: JSONObject | None, info: JSONObject) -> C:
        """The new node's record: the request's cards, else the engine's own report; nothing used."""
        return self.record_type(_cards(resource, "resource", self.name) or _reported(info, self.name), {})

    def record(self, capacity: JSONObject | None, usage: JSONObject | None) -> C:
        return self.record_type(prodmap.parse(capacity, "capacity"), prodmap.parse(usage, "usage"))

    def workload(self, doc: JSONObject) -> MaybeMap:
        return workload(doc)

    def usage(self, doc: JSONObject) -> MaybeMap:
        request, resource = _request_and_resource(doc)
        return request if request is not None else resource

    def capacity(self, doc: JSONObject, delta: bool, incr: bool) -> tuple[MaybeMap | KeepStored, MaybeMap]:
        """An absolute ``resource_request`` without ``prod_count_map`` keeps the stored cards (``KEEP``)."""
        request, resource = _request_and_resource(doc)
        raw = decoding.obj(doc, "resource_request")
        if not delta and raw is not None and "prod_count_map" not in raw:
            return KEEP, resource
        return request, resource

    def request(self, doc: JSONObject, key: str) -> ProdMap:
        return _cards(decoding.obj(doc, key), key, self.name)

    def change(self, value: JSONObject | None) -> MaybeMap:
        # A change may take cards away: its counts may be negative, only its products are checked.
        request = prodmap.parse(value, "workload_resource_request")
        prodmap.validate_products(request, self.name)
        return request

    def current(self, value: JSONObject | None) -> MaybeMap:
        current = prodmap.parse(value, "workload_resource")
        prodmap.validate(current, self.name)
        return current

    def items(self, request: ProdMap) -> int:
        return len(request)

    def change_items(self, change: MaybeMap) -> int:
        return len(change or ())

    def current_items(self, current: MaybeMap) -> int:
        return len(current or ())


def cards(request: MaybeMap | KeepStored, resource: MaybeMap, stored: MaybeMap) -> MaybeMap:
    """set-node-resource-capacity's cards to combine with the stored capacity ``stored``."""
    source = stored if isinstance(request, KeepStored) else request
    return source if source is not None else resource
