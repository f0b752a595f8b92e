"""Big documents, checked against their schema on representatives: get-metrics answers (written as text,
``jsonio.Rendered``) and requests, and get-nodes-deploy-capacity answers, of both plugins.

Apart from ``validation`` so that no other verb unmarshals it: ``validation.check`` imports it for those
verbs only.
"""

from __future__ import annotations

from resource_extend.formats.decoding import INT64_MAX
from resource_extend.formats.jsonio import Rendered, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Big responses. get-metrics answers are written as JSON text while they are built (jsonio.Rendered), one
# template per metric name, so each template's first row, parsed back, stands for all of its rows.
# get-nodes-deploy-capacity entries and get-metrics request nodes are values: each is summarised by a
# signature that captures everything its schema checks, and the schema runs once per distinct signature.
# Two items with the same signature get the same verdict from the schema, so the answer is the full
# check's; only its cost changes. Below ROWS items the document is checked as it is.

ROWS = 64


_ABSENT = object()


def _metrics_node(node: Any) -> tuple[Any, ...]:
    """Schema ``metrics_node``: the node's type and, for an object, the types of podname and nodename (or
    that they are absent); other keys are not looked at."""
    if type(node) is not dict:
        return (type(node),)
    return (dict, type(node.get("podname", _ABSENT)), type(node.get("nodename", _ABSENT)))


def _capacity_entry(entry: Any) -> tuple[Any, ...]:
    """Schema ``deploy_capacity_entry``: keys, the type of each value, and capacity within 1..int64."""
    if type(entry) is not dict:
        return (type(entry),)
    capacity = entry.get("capacity")
    return (
        tuple(entry),
        type(capacity),
        type(capacity) is int and 0 < capacity <= INT64_MAX,
        type(entry.get("usage")),
        type(entry.get("rate")),
        type(entry.get("weight")),
    )


def representatives(verb: str, document: Any, direction: str = "response") -> Any:
    """The document cut down to one item of each template or signature, or None to check it whole.

    Covers the responses of get-metrics (written as text, see ``jsonio.Rendered``) and
    get-nodes-deploy-capacity (a map of node entries), and get-metrics requests (an array of nodes), of
    both plugins. Every other document is checked whole.
    """
    if direction == "request":
        nodes = document.get("nodes") if verb == "get-metrics" and type(document) is dict else None
        if type(nodes) is list and len(nodes) > ROWS:
            first: dict[tuple[Any, ...], Any] = {}
            for node in nodes:
                first.setdefault(_metrics_node(node), node)
            return {**document, "nodes": list(first.values())}
        return None
    if type(document) is Rendered:
        return [loads(sample) for sample in document.samples.values()]
    if verb == "get-nodes-deploy-capacity" and type(document) is dict:
        entries = document.get("nodes_deploy_capacity_map")
        if type(entries) is dict and len(entries) > ROWS:
            seen: dict[tuple[Any, ...], tuple[str, Any]] = {}
            for node, entry in entries.items():
                seen.setdefault(_capacity_entry(entry), (node, entry))
            return {**document, "nodes_deploy_capacity_map": dict(seen.values())}
    return None


def whole(document: Any) -> Any:
    """The document as JSON values: a rendered answer parsed back."""
    return loads(document.text()) if type(document) is Rendered else document
