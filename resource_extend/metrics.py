"""The nodes a get-metrics request names, read the same way by both plugins."""

from __future__ import annotations

from resource_extend import params
from resource_extend.errors import PluginError
from resource_extend.params import JSONObject


def metrics_nodes(req: JSONObject) -> list[tuple[str, str]]:
    """(podname, nodename) pairs from ``{"nodes": [...]}`` or upstream core's one-node request."""
    if "nodes" not in req and isinstance(req.get("nodename"), str):
        return [(params.string(req, "podname"), req["nodename"])]
    raw = req.get("nodes")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PluginError("json: cannot unmarshal nodes: want an array of {podname, nodename}")
    pairs = []
    for item in raw:
        if item is None:  # Go decodes a null element into an empty {podname, nodename}
            pairs.append(("", ""))
            continue
        if not isinstance(item, dict):
            raise PluginError("json: cannot unmarshal nodes[]: want an object {podname, nodename}")
        pod, name = item.get("podname"), item.get("nodename")
        if not isinstance(pod, (str, type(None))) or not isinstance(name, (str, type(None))):
            raise PluginError("json: cannot unmarshal nodes[]: podname and nodename must be strings")
        pairs.append((pod or "", name or ""))
    return pairs
