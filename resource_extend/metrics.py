"""What both plugins' metrics share: the nodes a get-metrics request names, a row's key and the shapes.

Pure: the get-metrics loop itself is in ``nodeverbs``; each plugin's rows and descriptions are in its
``metrics`` module.
"""

from __future__ import annotations

from resource_extend import params
from resource_extend.errors import PluginError
from resource_extend.params import JSONObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypedDict

    class MetricDescription(TypedDict):
        name: str
        help: str
        type: str
        labels: list[str]

    class MetricRow(TypedDict):
        name: str
        labels: list[str]
        key: str
        value: str


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


def metric_key(node: str, *rest: str) -> str:
    """Metric keys use the node name with dots replaced, so a name never adds key segments."""
    return ".".join(("core.node", node.replace(".", "_"), *rest))


def gauge(name: str, help: str, labels: list[str]) -> MetricDescription:
    """One entry of get-metrics-description: every metric of both plugins is a gauge."""
    return {"name": name, "help": help, "type": "gauge", "labels": labels}


def row(name: str, labels: list[str], key: str, value: int) -> MetricRow:
    """One get-metrics row; the value goes out as a decimal string, as the reference writes it."""
    return {"name": name, "labels": labels, "key": key, "value": str(value)}
