"""Big responses are checked against their schema on one row per template (get-metrics, written as text) or
per distinct entry signature (get-nodes-deploy-capacity); the verdict and the message must be exactly those
of checking every row (``full_check`` below, the check as it was). get-metrics requests (an array of nodes)
are checked once per distinct node signature in the same way."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats.bigdocs import ROWS, representatives
from resource_extend.formats.jsonio import Rendered, compact
from resource_extend.formats.validation import check, describe, schema_dir, validator
from resource_extend.storage.metrics import render_rows
from resource_extend.storage.record import NodeResource, StorageRecord
from tests.support import PLUGINS, examples


def full_check(plugin: str, verb: str, document: Any, direction: str = "response") -> str | None:
    try:
        validator(plugin, verb, direction)(document)
    except ValueError as exc:
        return describe(direction, exc)
    return None


def sampled_check(plugin: str, verb: str, document: Any, direction: str = "response") -> str | None:
    try:
        check(plugin, verb, direction, document)
    except PluginError as exc:
        return str(exc)
    return None


def metric_row(plugin: str, i: int) -> dict[str, Any]:
    if plugin == "storage":
        name, labels = ("storage_used", "storage_capacity")[i % 2], ["pod", f"node-{i // 2}"]
    else:
        name, labels = ("gpu_capacity", "gpu_used")[i % 2], ["pod", f"node-{i // 2}", "nvidia-3090"]
    return {"name": name, "labels": labels, "key": f"core.node.node_{i // 2}.x", "value": str(i * 1000)}


def rendered(rows: list[Any], template: Callable[[int], str]) -> Rendered:
    """``rows`` as a written answer: each row's text, the first row of each template its sample."""
    answer = Rendered()
    for i, row in enumerate(rows):
        text = compact(row)
        answer.items.append(text)
        answer.samples.setdefault(template(i), text)
    return answer


# Ways a row can break (or, for some, keep to) its schema: a template written wrongly breaks every row it
# writes the same way.
Break = Callable[[dict[str, Any]], Any]
BREAKS: dict[str, Break] = {
    "value as int": lambda row: {**row, "value": 5},
    "value not decimal": lambda row: {**row, "value": "12a"},
    "value negative": lambda row: {**row, "value": "-12"},
    "value unicode digits": lambda row: {**row, "value": "١٢"},
    "value empty": lambda row: {**row, "value": ""},
    "value lone minus": lambda row: {**row, "value": "-"},
    "name unknown": lambda row: {**row, "name": "disk_used"},
    "name not a string": lambda row: {**row, "name": None},
    "label missing": lambda row: {**row, "labels": row["labels"][:-1]},
    "label extra": lambda row: {**row, "labels": [*row["labels"], "x"]},
    "label not a string": lambda row: {**row, "labels": [1, *row["labels"][1:]]},
    "labels not a list": lambda row: {**row, "labels": "pod"},
    "key missing": lambda row: {k: v for k, v in row.items() if k != "key"},
    "key extra": lambda row: {**row, "extra": 1},
    "key reordered": lambda row: dict(reversed(list(row.items()))),
    "key not a string": lambda row: {**row, "key": 1.5},
    "row null": lambda row: None,
    "row a list": lambda row: [row],
}
SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    st.sampled_from(sorted(PLUGINS, reverse=True)),
    st.integers(1, 300),
    st.integers(0, 1),
    st.none() | st.sampled_from(sorted(BREAKS)),
)
def test_a_written_answer_gets_the_verdict_of_checking_every_row(
    plugin: str, count: int, broken: int, how: str | None
) -> None:
    rows: list[Any] = [metric_row(plugin, i) for i in range(count)]
    if how is not None:
        rows = [BREAKS[how](row) if i % 2 == broken else row for i, row in enumerate(rows)]
    answer = rendered(rows, lambda i: str(i % 2))
    assert sampled_check(plugin, "get-metrics", answer) == full_check(plugin, "get-metrics", rows)


ENTRY_BREAKS: dict[str, Break] = {
    "capacity zero": lambda e: {**e, "capacity": 0},
    "capacity beyond int64": lambda e: {**e, "capacity": 1 << 63},
    "capacity float": lambda e: {**e, "capacity": 2.0},
    "capacity bool": lambda e: {**e, "capacity": True},
    "usage string": lambda e: {**e, "usage": "0.5"},
    "rate null": lambda e: {**e, "rate": None},
    "weight bool": lambda e: {**e, "weight": False},
    "weight int": lambda e: {**e, "weight": 1},
    "key missing": lambda e: {k: v for k, v in e.items() if k != "rate"},
    "key extra": lambda e: {**e, "Capacity": 1},
    "entry null": lambda e: None,
}


@SETTINGS
@given(
    st.sampled_from(sorted(PLUGINS, reverse=True)),
    st.integers(0, 300),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(sorted(ENTRY_BREAKS))), max_size=3),
    st.sampled_from([0, 5, -1, "x"]),
)
def test_deploy_capacity_verdict_equals_checking_every_entry(
    plugin: str, count: int, breaks: list[tuple[int, str]], total: Any
) -> None:
    entries: dict[str, Any] = {
        f"node-{i}": {"capacity": 1 + i, "usage": i / 7, "rate": 0.25, "weight": 1} for i in range(count)
    }
    names = list(entries)
    for position, how in breaks:
        if names:
            name = names[position % len(names)]
            if isinstance(entries[name], dict):
                entries[name] = ENTRY_BREAKS[how](entries[name])
    document = {"nodes_deploy_capacity_map": entries, "total": total}
    verb = "get-nodes-deploy-capacity"
    assert sampled_check(plugin, verb, document) == full_check(plugin, verb, document)


NODE_BREAKS: dict[str, Break] = {
    "podname a number": lambda node: {**node, "podname": 5},
    "nodename a list": lambda node: {**node, "nodename": ["n"]},
    "nodename a bool": lambda node: {**node, "nodename": True},
    "nodename null": lambda node: {**node, "nodename": None},
    "podname absent": lambda node: {k: v for k, v in node.items() if k != "podname"},
    "other key": lambda node: {**node, "weight": [1]},
    "node null": lambda node: None,
    "node a string": lambda node: "n1",
    "node a list": lambda node: [node],
}


@SETTINGS
@given(
    st.sampled_from(sorted(PLUGINS, reverse=True)),
    st.integers(0, 300),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(sorted(NODE_BREAKS))), max_size=3),
)
def test_a_metrics_request_gets_the_verdict_of_checking_every_node(
    plugin: str, count: int, breaks: list[tuple[int, str]]
) -> None:
    nodes: list[Any] = [{"podname": "p", "nodename": f"node-{i}"} for i in range(count)]
    for position, how in breaks:
        if nodes and isinstance(nodes[position % len(nodes)], dict):
            nodes[position % len(nodes)] = NODE_BREAKS[how](nodes[position % len(nodes)])
    request = {"nodes": nodes}
    assert sampled_check(plugin, "get-metrics", request, "request") == full_check(
        plugin, "get-metrics", request, "request"
    )


def test_a_big_metrics_request_is_checked_on_one_node_per_signature() -> None:
    nodes = [{"podname": "p", "nodename": f"node-{i}"} for i in range(1000)]
    nodes[700] = {"nodename": "n"}
    assert representatives("get-metrics", {"nodes": nodes}, "request") == {"nodes": [nodes[0], nodes[700]]}
    assert representatives("get-metrics", {"nodes": nodes[:ROWS]}, "request") is None


def test_a_bad_sample_is_named_by_its_index_in_the_whole_answer() -> None:
    rows = [metric_row("storage", i) for i in range(2000)]
    rows[1501] = {**rows[1501], "value": 7}
    answer = rendered(rows, lambda i: "bad" if i == 1501 else str(i % 2))
    message = sampled_check("storage", "get-metrics", answer)
    assert message is not None and "response[1501].value" in message


def test_a_written_metrics_answer_is_checked_on_one_row_per_template() -> None:
    answer = Rendered()
    for i in range(1000):
        render_rows(answer, "pod", f"node-{i}", StorageRecord(NodeResource(storage=i), NodeResource()))
    assert len(json.loads(answer.text())) == 2000  # an item may hold a node's rows joined
    assert representatives("get-metrics", answer) == [
        {"name": "storage_used", "labels": ["pod", "node-0"], "key": "core.node.node-0.storage.used", "value": "0"},
        {"name": "storage_capacity", "labels": ["pod", "node-0"], "key": "core.node.node-0.storage.capacity",
         "value": "0"},
    ]  # fmt: skip


@pytest.mark.parametrize("verb", ["get-node-resource-info", "calculate-deploy", "get-nodes-resource-info"])
def test_other_responses_are_checked_whole(verb: str) -> None:
    assert representatives(verb, [metric_row("storage", i) for i in range(200)]) is None


def _without_docs(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_docs(v) for k, v in schema.items() if k not in ("description", "examples", "title")}
    return schema


def test_the_samples_and_signatures_cover_every_constraint_of_the_row_schemas() -> None:
    # A metrics row's sample stands for the rows its template writes because the schema constrains only
    # what a template fixes (keys, name, label count) and the types of what it fills in (strings, an
    # int's decimal); the capacity signatures in validation.py summarise exactly the entry constraints.
    # A schema that gains one (a key pattern, a label format, a bound) must be covered too, or the
    # sampled check would stop seeing it: this test fails first.
    common = json.loads((schema_dir() / "common.json").read_text())["definitions"]
    assert _without_docs(common["metric_row"]) == {
        "type": "object",
        "required": ["name", "labels", "key", "value"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "key": {"type": "string"},
            "value": {"type": "string", "pattern": "^-?[0-9]+$"},
        },
    }
    assert _without_docs(common["metrics_node"]) == {
        "type": ["object", "null"],
        "properties": {
            "podname": {"$ref": "#/definitions/nullable_string"},
            "nodename": {"$ref": "#/definitions/nullable_string"},
        },
    }
    assert _without_docs(common["nullable_string"]) == {"type": ["string", "null"]}
    assert _without_docs(common["metrics_nodes"]) == {
        "type": ["array", "null"],
        "items": {"$ref": "#/definitions/metrics_node"},
    }
    assert _without_docs(common["deploy_capacity_entry"]) == {
        "type": "object",
        "required": ["capacity", "usage", "rate", "weight"],
        "additionalProperties": False,
        "properties": {
            "capacity": {"type": "integer", "minimum": 1, "maximum": 9223372036854775807},
            "usage": {"type": "number"},
            "rate": {"type": "number"},
            "weight": {"type": "number"},
        },
    }
    for plugin, names, labels in (("storage", ["storage_used", "storage_capacity"], 2),
                                  ("gpu", ["gpu_capacity", "gpu_used"], 3)):  # fmt: skip
        metrics = _without_docs(json.loads((schema_dir() / plugin / "get-metrics.response.json").read_text()))
        assert metrics["type"] == "array" and set(metrics) == {"$schema", "$id", "type", "items"}
        assert metrics["items"] == {
            "allOf": [
                {"$ref": "../common.json#/definitions/metric_row"},
                {"properties": {"name": {"enum": names}, "labels": {"minItems": labels, "maxItems": labels}}},
            ]
        }
        capacity = _without_docs(
            json.loads((schema_dir() / plugin / "get-nodes-deploy-capacity.response.json").read_text())
        )
        assert capacity["allOf"] == [{"$ref": "../common.json#/definitions/deploy_capacity_response"}]
    assert _without_docs(common["deploy_capacity_response"])["properties"]["nodes_deploy_capacity_map"] == {
        "type": "object",
        "additionalProperties": {"$ref": "#/definitions/deploy_capacity_entry"},
    }
