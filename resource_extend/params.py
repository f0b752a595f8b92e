"""Reading request fields the way the reference's field helpers do, and the request parts both plugins share.

Core and the reference agree on lenient readers for scalar fields (``nodename`` that is not a string is
"empty", any present non-false value of a flag is true) and on strict decoding for resource objects.
These helpers keep those rules in one place so every verb reads its request the same way. Each plugin's
``request`` module builds its verbs' request values from them; the envelopes both plugins' add-node,
get-node-resource-info and fix-node-resource share are here.
"""

from __future__ import annotations

from resource_extend.decoding import decimal_int64, strict_int
from resource_extend.errors import PluginError

# Not imported on the call path: typing exists for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Generic, Self, TypeVar

    from resource_extend.bounds import Bounds

    JSONObject = dict[str, Any]
    W = TypeVar("W")
    # What each plugin reads its own payloads into: a record, a node resource, a workload's request and
    # what a workload holds.
    R = TypeVar("R")
    N = TypeVar("N")
    Q = TypeVar("Q")
    H = TypeVar("H")
else:
    from resource_extend.typeshim import Generic

    JSONObject = dict
    W = R = N = Q = H = None

# The key core passes the workloads on a node under, to the verbs that reconcile or set usage from them.
WORKLOADS = "workloads_resource"


def string(req: JSONObject, key: str) -> str:
    """The value when it is a JSON string, else ``""`` (numbers are not converted)."""
    value = req.get(key)
    return value if isinstance(value, str) else ""


def string_list(req: JSONObject, key: str) -> list[str]:
    """The string elements of an array, in order; anything else reads as an empty list."""
    value = req.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def flag(req: JSONObject, key: str) -> bool:
    """Absent is false, ``false`` is false, any other present value (even ``null`` or ``0``) is true."""
    if key not in req:
        return False
    return req[key] is not False


def integer(req: JSONObject, key: str) -> int:
    """A number rounded half to even, a decimal string parsed, anything else 0."""
    value = req.get(key)
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value) if value - value == 0 else 0  # finite: inf - inf and nan - nan are nan (no math import)
    parsed = decimal_int64(value) if isinstance(value, str) else None
    return 0 if parsed is None else parsed


def obj(req: JSONObject, key: str) -> JSONObject | None:
    """A shallow copy of the value when it is an object, else ``None`` (absent)."""
    value = req.get(key)
    return dict(value) if isinstance(value, dict) else None


def obj_list(req: JSONObject, key: str) -> list[JSONObject] | None:
    """The object elements of an array; ``None`` when the value is not an array."""
    value = req.get(key)
    if not isinstance(value, list):
        return None
    return [dict(item) for item in value if isinstance(item, dict)]


def nodename(req: JSONObject) -> str:
    """The single-node verbs' ``nodename``: a non-empty string or the reference's error."""
    name = string(req, "nodename")
    if not name:
        raise PluginError("node name is empty")
    return name


def nodenames(req: JSONObject) -> list[str]:
    """The multi-node verbs' ``nodenames``: at least one string or the reference's error."""
    names = string_list(req, "nodenames")
    if not names:
        raise PluginError("node name is empty")
    return names


def bulk_nodenames(req: JSONObject) -> list[str]:
    """``nodenames`` of the verbs core asks in bulk (decision 13): ``[]`` or ``null`` is no nodes, an
    answer; a missing key, or names none of which is a string, is still ``node name is empty``."""
    if "nodenames" in req and req["nodenames"] in (None, []):
        return []
    return nodenames(req)


# core's enginetypes.Info fields that the reference decodes with a Go type; unknown keys are ignored.
_INFO_FIELDS = {"Type": str, "ID": str, "NCPU": int, "MemTotal": int, "StorageTotal": int}


def engine_info(req: JSONObject) -> JSONObject:
    """add-node's ``info`` (the engine report), its typed fields checked as the reference's strict decoding
    does; anything that is not an object reads as no report (``{}``)."""
    info = obj(req, "info")
    if info is None:
        return {}
    for name, kind in _INFO_FIELDS.items():
        value = info.get(name)
        if value is None:
            continue
        if kind is int:
            strict_int(value, f"info.{name}")
        elif not isinstance(value, str):
            raise PluginError(f"json: cannot unmarshal info.{name}: want a string")
    return info


def workloads(req: JSONObject, parse: Callable[[JSONObject], W]) -> list[W]:
    """``workloads_resource``, each object parsed by the plugin's ``parse``; a non-object entry is skipped."""
    return [parse(item) for item in obj_list(req, WORKLOADS) or []]


def deploy_count(req: JSONObject, bounds: Bounds) -> int:
    """calculate-deploy's ``deploy_count`` (its shape already checked by the request schema: decision 14),
    bounded by the config's ``scheduler.max_deploy_count`` (and, with the workload, ``max_deploy_work``).

    A call plans every workload in memory and answers them all at once, so the count is bounded where the
    answer still fits core's 30 s call timeout comfortably (docs/protocol.md "Huge counts").
    """
    value = req.get("deploy_count")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PluginError(f"deploy_count {value!r}: want a non-negative integer")
    count = int(value)
    if count < 0:
        raise PluginError(f"deploy_count {count}: want a non-negative integer")
    if count > bounds.max_deploy_count:
        raise bounds.deploy_count_error(count)
    return count


class AddNode:
    """add-node's request: the node, the engine's report (``engine_info``) and the plugin's ``resource``
    object, which the plugin decodes only after the store has said the node is new: the reference
    checks for an existing record before it reads the resources, so that check must answer first."""

    __slots__ = ("info", "nodename", "resource")

    def __init__(self, nodename: str, info: JSONObject, resource: JSONObject | None) -> None:
        self.nodename = nodename
        self.info = info
        self.resource = resource

    @classmethod
    def from_json(cls, doc: JSONObject) -> Self:
        return cls(nodename(doc), engine_info(doc), obj(doc, "resource"))


class NodeWorkloads(Generic[W]):
    """get-node-resource-info's and fix-node-resource's request: the node and the objects of its
    ``workloads_resource``, which the plugin parses (``held``) when the verb needs them: get-node-resource-info
    reads the record first, as the reference does, so an unknown node answers null whatever they hold."""

    __slots__ = ("nodename", "workloads")

    def __init__(self, nodename: str, workloads: list[JSONObject]) -> None:
        self.nodename = nodename
        self.workloads = workloads

    @classmethod
    def from_json(cls, doc: JSONObject) -> Self:
        return cls(nodename(doc), obj_list(doc, WORKLOADS) or [])

    @classmethod
    def read_workload(cls, doc: JSONObject) -> W:
        """The plugin's reading of one entry of ``workloads_resource``: what a workload on the node holds."""
        raise NotImplementedError

    def held(self) -> list[W]:
        return [self.read_workload(doc) for doc in self.workloads]


# The shapes below are each verb's request with the plugin's own payloads left to a hook (``read_*``) that
# the plugin's subclass overrides: the envelope, and the order its fields are read and refused in, is one.


class SetInfo(Generic[R]):
    """set-node-resource-info's request: the record to store, from ``capacity`` and ``usage``."""

    __slots__ = ("nodename", "record")

    def __init__(self, nodename: str, record: R) -> None:
        self.nodename = nodename
        self.record = record

    @classmethod
    def from_json(cls, doc: JSONObject) -> Self:
        name = nodename(doc)
        return cls(name, cls.read_record(obj(doc, "capacity"), obj(doc, "usage")))

    @classmethod
    def read_record(cls, capacity: JSONObject | None, usage: JSONObject | None) -> R:
        """The record from its two sides, capacity read (and refused) first."""
        raise NotImplementedError


class SetCapacity(Generic[Q, N]):
    """set-node-resource-capacity's request: ``request`` (``resource_request`` in the plugin's request form,
    which wins) or ``resource`` (its stored form)."""

    __slots__ = ("delta", "incr", "nodename", "request", "resource")

    def __init__(self, nodename: str, request: Q, resource: N, delta: bool, incr: bool) -> None:
        self.nodename = nodename
        self.request = request
        self.resource = resource
        self.delta = delta
        self.incr = incr

    @classmethod
    def from_json(cls, doc: JSONObject) -> Self:
        # The flags never refuse a request, so reading them before the resources changes no error.
        name = nodename(doc)
        delta, incr = flag(doc, "delta"), flag(doc, "incr")
        request, resource = cls.read_capacity(doc, delta, incr)
        return cls(name, request, resource, delta, incr)

    @classmethod
    def read_capacity(cls, doc: JSONObject, delta: bool, incr: bool) -> tuple[Q, N]:
        """``request`` and ``resource``, in the plugin's order; the flags may change how they are read."""
        raise NotImplementedError


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
    def from_json(cls, doc: JSONObject) -> Self:
        # The flags never refuse a request, so reading them before the resources changes no error.
        name = nodename(doc)
        delta, incr = flag(doc, "delta"), flag(doc, "incr")
        resource = cls.read_resource(doc)
        return cls(name, resource, workloads(doc, cls.read_workload), delta, incr)

    @classmethod
    def read_resource(cls, doc: JSONObject) -> N:
        """The usage the request sets: ``resource_request`` when present, else ``resource``."""
        raise NotImplementedError

    @classmethod
    def read_workload(cls, doc: JSONObject) -> W:
        """One entry of ``workloads_resource``, as ``NodeWorkloads.read_workload`` reads it."""
        raise NotImplementedError


class DeployCapacity(Generic[Q]):
    """get-nodes-deploy-capacity's request: the nodes (decision 13: ``[]`` is none) and one workload's request."""

    __slots__ = ("nodenames", "request")

    def __init__(self, nodenames: list[str], request: Q) -> None:
        self.nodenames = nodenames
        self.request = request

    @classmethod
    def from_json(cls, doc: JSONObject, bounds: Bounds) -> Self:
        names = bulk_nodenames(doc)
        request = cls.read_request(doc, "workload_resource")
        # Every node is counted for this workload (decision 18): nodes x its bindings or products.
        bounds.check_work(cls.items(request), cls.ITEMS, len(names), "nodes")
        return cls(names, request)

    @classmethod
    def read_request(cls, doc: JSONObject, key: str) -> Q:
        """A new workload's request under ``key``, checked as a new workload's."""
        raise NotImplementedError

    # What the work of a workload is counted in (decision 18), named in a refusal: the plugin's own.
    ITEMS = "items"

    @classmethod
    def items(cls, request: Q) -> int:
        """How many bindings or products ``request`` names: what the plugin's work grows with."""
        raise NotImplementedError


class Deploy(Generic[Q]):
    """calculate-deploy's request: ``count`` workloads of ``request`` on one node."""

    __slots__ = ("count", "nodename", "request")

    def __init__(self, nodename: str, count: int, request: Q) -> None:
        self.nodename = nodename
        self.count = count
        self.request = request

    @classmethod
    def from_json(cls, doc: JSONObject, bounds: Bounds) -> Self:
        name = nodename(doc)
        count = deploy_count(doc, bounds)
        request = cls.read_request(doc, "workload_resource_request")
        bounds.check_work(cls.items(request), cls.ITEMS, count, "deploy_count")
        return cls(name, count, request)

    @classmethod
    def read_request(cls, doc: JSONObject, key: str) -> Q:
        """As ``DeployCapacity.read_request``."""
        raise NotImplementedError

    ITEMS = "items"

    @classmethod
    def items(cls, request: Q) -> int:
        """As ``DeployCapacity.items``."""
        raise NotImplementedError


class Realloc(Generic[Q, H]):
    """calculate-realloc's request: the change (``request``, from ``workload_resource_request``) to what the
    workload holds (``current``, from ``workload_resource``)."""

    __slots__ = ("current", "nodename", "request")

    def __init__(self, nodename: str, request: Q, current: H) -> None:
        self.nodename = nodename
        self.request = request
        self.current = current

    @classmethod
    def from_json(cls, doc: JSONObject, bounds: Bounds) -> Self:
        name = nodename(doc)
        request = cls.read_change(obj(doc, "workload_resource_request"))
        current = cls.read_current(obj(doc, "workload_resource"))
        # One workload, planned once: the change and the holdings are each a workload's worth (decision 18).
        bounds.check_items(cls.change_items(request), cls.ITEMS)
        bounds.check_items(cls.current_items(current), cls.ITEMS)
        return cls(name, request, current)

    @classmethod
    def read_change(cls, value: JSONObject | None) -> Q:
        raise NotImplementedError

    @classmethod
    def read_current(cls, value: JSONObject | None) -> H:
        raise NotImplementedError

    ITEMS = "items"

    @classmethod
    def change_items(cls, request: Q) -> int:
        raise NotImplementedError

    @classmethod
    def current_items(cls, current: H) -> int:
        raise NotImplementedError
