"""The request envelope: the parts of a request both plugins read alike, around each plugin's own payloads.

The envelope's fields (``nodename``, ``nodenames``, ``deploy_count``, ``info``, the workloads) are read here
with the lenient field readers of ``formats.decoding``, as the reference's field helpers read them, so every
verb reads its request the same way. Each verb's
request value is in a module of this package by verb family (``records``: add-node and
set-node-resource-info; ``nodeinfo``: get-node-resource-info and fix-node-resource; ``sides``:
set-node-resource-capacity and -usage; ``plans``: calculate-deploy; ``capacity``: get-nodes-deploy-capacity;
``realloc``: calculate-realloc), the envelope read once for every
plugin; the plugin's own payloads are read by the ``Payloads`` object its manifest gives (its ``payloads``
module's), so a plugin never subclasses these. A handler imports its family's module where it reads its
request, so a call creates the classes of its own verb's family only (a class costs a call as much as
~4 KB of code to load, whatever its size).
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats.decoding import obj, obj_list, strict_int, string, string_list

# Not imported on the call path: typing exists for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    from resource_extend.bounds import Bounds
    from resource_extend.envelope.protocol import Payloads as Payloads

    JSONObject = dict[str, Any]
    # The types of a plugin's payloads, as ``Payloads`` (envelope/protocol.py) names them.
    R = TypeVar("R")
    W = TypeVar("W")
    N = TypeVar("N")
    P = TypeVar("P")
    Q = TypeVar("Q")
    D = TypeVar("D")
    H = TypeVar("H")
else:
    JSONObject = dict

# The key core passes the workloads on a node under, to the verbs that reconcile or set usage from them.
WORKLOADS = "workloads_resource"


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
