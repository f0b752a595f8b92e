"""The GPU plugin's requests, one value per verb, each read and checked once where the call starts.

As the reference decodes a request into a struct before its logic runs, a handler reads its request here
and then works on the value; the fields are read in the order, and refused with the messages, they always
were. add-node's cards and get-node-resource-info's workloads are decoded later (``AddNode.record``,
``NodeWorkloads.held``): the reference reads them only after the store has answered. The verbs' shapes
are ``params``'s, shared with the storage plugin; what is the GPU plugin's own is how it reads its card
maps (``_Payloads``) and set-node-resource-capacity, whose cards follow rules of their own.
"""

from __future__ import annotations

from resource_extend import jsonio, params
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import GpuRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.params import JSONObject


def workload(doc: JSONObject) -> MaybeMap:
    """One entry of ``workloads_resource``: the cards a workload on the node holds."""
    return prodmap.parse(doc, "workloads_resource[]")


def _present(resource: JSONObject | None, where: str) -> MaybeMap:
    """A present object is a map (``{}`` without ``prod_count_map``); an absent one is ``None``."""
    if resource is None:
        return None
    return prodmap.parse(resource, where) or {}


def _cards(resource: JSONObject | None, where: str) -> ProdMap:
    """Cards a node has or a new workload wants: every count positive (``{}`` when none are named)."""
    cards = prodmap.parse(resource, where) or {}
    prodmap.validate(cards)
    return cards


class AddNode(params.AddNode):
    __slots__ = ()

    def record(self) -> GpuRecord:
        """The new node's record: the request's cards, else the engine's own report; nothing used."""
        return GpuRecord(_cards(self.resource, "resource") or _reported_gpus(self.info), {})


def _reported_gpus(info: JSONObject) -> ProdMap:
    """The engine's own GPU report (upstream core's ``Resources["gpu"]``), or no cards."""
    resources = info.get("Resources")
    entry = resources.get("gpu") if isinstance(resources, dict) else None
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
    reported = prodmap.parse(entry, 'info.Resources["gpu"]') or {}
    prodmap.validate(reported)
    return reported


def _request_and_resource(doc: JSONObject) -> tuple[MaybeMap, MaybeMap]:
    """set-node-resource-*'s ``resource_request`` and ``resource``: both are read, and either may refuse the
    call, even when the first wins, as the reference reads them."""
    request = _present(params.obj(doc, "resource_request"), "resource_request")
    return request, _present(params.obj(doc, "resource"), "resource")


class _Payloads:
    """How the GPU plugin reads its own payloads: the hooks of the shared request shapes in ``params``."""

    __slots__ = ()

    @classmethod
    def read_record(cls, capacity: JSONObject | None, usage: JSONObject | None) -> GpuRecord:
        return GpuRecord(prodmap.parse(capacity, "capacity"), prodmap.parse(usage, "usage"))

    @classmethod
    def read_workload(cls, doc: JSONObject) -> MaybeMap:
        return workload(doc)

    @classmethod
    def read_resource(cls, doc: JSONObject) -> MaybeMap:
        request, resource = _request_and_resource(doc)
        return request if request is not None else resource

    @classmethod
    def read_request(cls, doc: JSONObject, key: str) -> ProdMap:
        return _cards(params.obj(doc, key), key)

    @classmethod
    def read_change(cls, value: JSONObject | None) -> MaybeMap:
        # A change may take cards away: its counts may be negative, only its products are checked.
        request = prodmap.parse(value, "workload_resource_request")
        prodmap.validate_products(request)
        return request

    @classmethod
    def read_current(cls, value: JSONObject | None) -> MaybeMap:
        current = prodmap.parse(value, "workload_resource")
        prodmap.validate(current)
        return current

    # The work of a GPU workload grows with the products it names (decision 18).
    ITEMS = "products"

    @classmethod
    def items(cls, request: ProdMap) -> int:
        return len(request)

    @classmethod
    def change_items(cls, request: MaybeMap) -> int:
        return len(request or ())

    @classmethod
    def current_items(cls, current: MaybeMap) -> int:
        return len(current or ())


class SetInfo(_Payloads, params.SetInfo[GpuRecord]):
    __slots__ = ()


class NodeWorkloads(_Payloads, params.NodeWorkloads[MaybeMap]):
    __slots__ = ()


class SetCapacity(_Payloads, params.SetCapacity[MaybeMap, MaybeMap]):
    """``keep_cards``: an absolute ``resource_request`` without ``prod_count_map`` leaves the stored cards as
    they are."""

    __slots__ = ("keep_cards",)
    keep_cards: bool

    @classmethod
    def from_json(cls, doc: JSONObject) -> SetCapacity:
        value = super().from_json(doc)
        raw = params.obj(doc, "resource_request")
        value.keep_cards = not value.delta and raw is not None and "prod_count_map" not in raw
        return value

    @classmethod
    def read_capacity(cls, doc: JSONObject, delta: bool, incr: bool) -> tuple[MaybeMap, MaybeMap]:
        return _request_and_resource(doc)

    def cards(self, stored: MaybeMap) -> MaybeMap:
        """The cards to combine with the stored capacity ``stored``."""
        source = stored if self.keep_cards else self.request
        return source if source is not None else self.resource


class SetUsage(_Payloads, params.SetUsage[MaybeMap, MaybeMap]):
    __slots__ = ()


class DeployCapacity(_Payloads, params.DeployCapacity[ProdMap]):
    __slots__ = ()


class Deploy(_Payloads, params.Deploy[ProdMap]):
    __slots__ = ()


class Realloc(_Payloads, params.Realloc[MaybeMap, MaybeMap]):
    __slots__ = ()
