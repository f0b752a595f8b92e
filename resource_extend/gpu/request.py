"""The GPU plugin's requests, one value per verb, each read and checked once where the call starts.

As the reference decodes a request into a struct before its logic runs, a handler reads its request here
and then works on the value; the fields are read in the order, and refused with the messages, they always
were. add-node's cards and get-node-resource-info's workloads are decoded later (``AddNode.record``,
``NodeWorkloads.held``): the reference reads them only after the store has answered.
"""

from __future__ import annotations

from resource_extend import params
from resource_extend.gpu import prodmap
from resource_extend.gpu.record import GpuRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.gpu.prodmap import MaybeMap, ProdMap
    from resource_extend.params import DeployLimits, JSONObject


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
        import json

        try:
            entry = json.loads(base64.b64decode(entry, validate=True))
        except (binascii.Error, ValueError):
            return {}
    if not isinstance(entry, dict):
        return {}
    reported = prodmap.parse(entry, 'info.Resources["gpu"]') or {}
    prodmap.validate(reported)
    return reported


class SetInfo:
    """set-node-resource-info's request: the record to store, from ``capacity`` and ``usage``."""

    __slots__ = ("nodename", "record")

    def __init__(self, nodename: str, record: GpuRecord) -> None:
        self.nodename = nodename
        self.record = record

    @classmethod
    def from_json(cls, doc: JSONObject) -> SetInfo:
        nodename = params.nodename(doc)
        capacity = prodmap.parse(params.obj(doc, "capacity"), "capacity")
        return cls(nodename, GpuRecord(capacity, prodmap.parse(params.obj(doc, "usage"), "usage")))


class NodeWorkloads(params.NodeWorkloads):
    __slots__ = ()

    def held(self) -> list[MaybeMap]:
        return [workload(doc) for doc in self.workloads]


class SetCapacity:
    """set-node-resource-capacity's request. ``resource`` is ``resource_request`` when present, else
    ``resource``; ``keep_cards``: an absolute ``resource_request`` without ``prod_count_map`` leaves the
    stored cards as they are."""

    __slots__ = ("delta", "incr", "keep_cards", "nodename", "request", "resource")

    def __init__(
        self, nodename: str, request: MaybeMap, keep_cards: bool, resource: MaybeMap, delta: bool, incr: bool
    ) -> None:
        self.nodename = nodename
        self.request = request
        self.keep_cards = keep_cards
        self.resource = resource
        self.delta = delta
        self.incr = incr

    @classmethod
    def from_json(cls, doc: JSONObject) -> SetCapacity:
        nodename = params.nodename(doc)
        raw = params.obj(doc, "resource_request")
        request = _present(raw, "resource_request")
        resource = _present(params.obj(doc, "resource"), "resource")
        delta, incr = params.flag(doc, "delta"), params.flag(doc, "incr")
        keep_cards = not delta and raw is not None and "prod_count_map" not in raw
        return cls(nodename, request, keep_cards, resource, delta, incr)

    def cards(self, stored: MaybeMap) -> MaybeMap:
        """The cards to combine with the stored capacity ``stored``."""
        source = stored if self.keep_cards else self.request
        return source if source is not None else self.resource


class SetUsage:
    """set-node-resource-usage's request: ``resource_request`` (else ``resource``) wins over the workloads."""

    __slots__ = ("delta", "incr", "nodename", "resource", "workloads")

    def __init__(self, nodename: str, resource: MaybeMap, workloads: list[MaybeMap], delta: bool, incr: bool) -> None:
        self.nodename = nodename
        self.resource = resource
        self.workloads = workloads
        self.delta = delta
        self.incr = incr

    @classmethod
    def from_json(cls, doc: JSONObject) -> SetUsage:
        nodename = params.nodename(doc)
        request = _present(params.obj(doc, "resource_request"), "resource_request")
        resource = _present(params.obj(doc, "resource"), "resource")
        held = params.workloads(doc, workload)
        delta, incr = params.flag(doc, "delta"), params.flag(doc, "incr")
        return cls(nodename, request if request is not None else resource, held, delta, incr)


class DeployCapacity:
    """get-nodes-deploy-capacity's request: the nodes (decision 13: ``[]`` is none) and one workload's cards."""

    __slots__ = ("nodenames", "wanted")

    def __init__(self, nodenames: list[str], wanted: ProdMap) -> None:
        self.nodenames = nodenames
        self.wanted = wanted

    @classmethod
    def from_json(cls, doc: JSONObject) -> DeployCapacity:
        nodenames = params.bulk_nodenames(doc)
        return cls(nodenames, _cards(params.obj(doc, "workload_resource"), "workload_resource"))


class Deploy:
    """calculate-deploy's request: ``count`` workloads of ``wanted`` cards on one node."""

    __slots__ = ("count", "nodename", "wanted")

    def __init__(self, nodename: str, count: int, wanted: ProdMap) -> None:
        self.nodename = nodename
        self.count = count
        self.wanted = wanted

    @classmethod
    def from_json(cls, doc: JSONObject, limits: DeployLimits) -> Deploy:
        nodename = params.nodename(doc)
        count = params.deploy_count(doc, limits)
        wanted = _cards(params.obj(doc, "workload_resource_request"), "workload_resource_request")
        return cls(nodename, count, wanted)


class Realloc:
    """calculate-realloc's request: the change (``request``, whose counts may be negative) to the cards a
    workload holds (``current``)."""

    __slots__ = ("current", "nodename", "request")

    def __init__(self, nodename: str, request: MaybeMap, current: MaybeMap) -> None:
        self.nodename = nodename
        self.request = request
        self.current = current

    @classmethod
    def from_json(cls, doc: JSONObject) -> Realloc:
        nodename = params.nodename(doc)
        request = prodmap.parse(params.obj(doc, "workload_resource_request"), "workload_resource_request")
        prodmap.validate_products(request)
        current = prodmap.parse(params.obj(doc, "workload_resource"), "workload_resource")
        prodmap.validate(current)
        return cls(nodename, request, current)
