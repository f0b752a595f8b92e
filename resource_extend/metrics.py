"""What both plugins share when they report on nodes: the nodes a metrics request names, and the ratios
a deploy-capacity answer carries (with Go's integer division for the counts)."""

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
        if not isinstance(item, dict):
            raise PluginError("json: cannot unmarshal nodes[]: want an object {podname, nodename}")
        pod, name = item.get("podname"), item.get("nodename")
        if not isinstance(pod, (str, type(None))) or not isinstance(name, (str, type(None))):
            raise PluginError("json: cannot unmarshal nodes[]: podname and nodename must be strings")
        pairs.append((pod or "", name or ""))
    return pairs
