"""What both plugins' metrics share: the nodes a get-metrics request names, the start of a node's rows
and the shapes.

A row is ``{"name": ..., "labels": [pod, node, ...], "key": "core.node.<node>. ...", "value": "<int>"}``,
the node's dots in the key replaced by ``_`` so a name never adds key segments. Rows are written straight
as JSON text into a ``jsonio.Rendered`` answer, one template per metric name: building 4000 dicts, then
checking and encoding them, cost a 1000-node call ~9 ms of its ~25.

Pure: the get-metrics loop itself is in ``nodeverbs``; each plugin's rows and descriptions are in its
``metrics`` module.
"""

from __future__ import annotations

from _json import encode_basestring

from resource_extend.errors import PluginError
from resource_extend.formats import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypedDict

    from resource_extend.envelope import JSONObject

    class MetricDescription(TypedDict):
        name: str
        help: str
        type: str
        labels: list[str]


def metrics_nodes(req: JSONObject) -> list[tuple[str, str]]:
    """(podname, nodename) pairs from ``{"nodes": [...]}`` or upstream core's one-node request."""
    if "nodes" not in req and isinstance(req.get("nodename"), str):
        return [(decoding.string(req, "podname"), req["nodename"])]
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


def node_head(pod: str, node: str) -> tuple[str, str]:
    """The JSON text every row of a node starts its labels and its key with, both left open for the plugin:
    ``"labels":["<pod>","<node>"`` and ``"key":"core.node.<node, dots as _>.``."""
    name = encode_basestring(node)
    # Replacing the dots after escaping is the same text: escaping leaves dots alone and writes none.
    return f'"labels":[{encode_basestring(pod)},{name}', f'"key":"core.node.{name[1:-1].replace(".", "_")}.'


def json_string(text: str) -> str:
    """``text`` as a JSON string, quotes included (escaped as a row's other strings are)."""
    return encode_basestring(text)


def gauge(name: str, help: str, labels: list[str]) -> MetricDescription:
    """One entry of get-metrics-description: every metric of both plugins is a gauge."""
    return {"name": name, "help": help, "type": "gauge", "labels": labels}
