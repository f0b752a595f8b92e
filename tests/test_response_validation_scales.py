"""Big responses are checked against their schema once per distinct row signature; the verdict and the
message must be exactly those of checking every row (``full_check`` below, the check as it was)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.validation import ROWS, _shown, check, representatives, schema_dir, validator


def full_check(plugin: str, verb: str, document: Any) -> str | None:
    try:
        validator(plugin, verb, "response")(document)
    except ValueError as exc:
        message = getattr(exc, "message", None) or str(exc)
        shown = f", got {_shown(exc.value)}" if hasattr(exc, "value") else ""  # as every check's line ends
        return (
            "response does not match the schema: "
            + ("response" + message[4:] if message.startswith("data") else message)
            + shown
        )
    return None


def sampled_check(plugin: str, verb: str, document: Any) -> str | None:
    try:
        check(plugin, verb, "response", document)
    except PluginError as exc:
        return str(exc)
    return None


def metric_row(plugin: str, i: int) -> dict[str, Any]:
    if plugin == "storage":
        name, labels = ("storage_used", "storage_capacity")[i % 2], ["pod", f"node-{i // 2}"]
    else:
        name, labels = ("gpu_capacity", "gpu_used")[i % 2], ["pod", f"node-{i // 2}", "nvidia-3090"]
    return {"name": name, "labels": labels, "key": f"core.node.node_{i // 2}.x", "value": str(i * 1000)}


# Ways a row can break (or, for some, keep to) its schema: each changes one thing a signature must see.
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
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    st.sampled_from(["storage", "gpu"]),
    st.integers(0, 300),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(sorted(BREAKS))), max_size=3),
)
def test_metrics_verdict_equals_checking_every_row(plugin: str, count: int, breaks: list[tuple[int, str]]) -> None:
    rows: list[Any] = [metric_row(plugin, i) for i in range(count)]
    for position, how in breaks:
        if rows:
            index = position % len(rows)
            if isinstance(rows[index], dict):
                rows[index] = BREAKS[how](rows[index])
    assert sampled_check(plugin, "get-metrics", rows) == full_check(plugin, "get-metrics", rows)


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
    st.sampled_from(["storage", "gpu"]),
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


def test_a_bad_row_deep_in_a_big_response_is_named_by_its_index() -> None:
    rows = [metric_row("storage", i) for i in range(2000)]
    rows[1501] = {**rows[1501], "value": 7}
    message = sampled_check("storage", "get-metrics", rows)
    assert message is not None and "response[1501].value" in message


def test_a_big_metrics_response_is_checked_on_one_row_per_signature() -> None:
    rows = [metric_row("storage", i) for i in range(2000)]
    assert representatives("get-metrics", rows) == rows[:2]
    assert representatives("get-metrics", rows[:ROWS]) is None  # small ones are checked whole


@pytest.mark.parametrize("verb", ["get-node-resource-info", "calculate-deploy", "get-nodes-resource-info"])
def test_other_responses_are_checked_whole(verb: str) -> None:
    assert representatives(verb, [metric_row("storage", i) for i in range(200)]) is None


def _without_docs(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_docs(v) for k, v in schema.items() if k not in ("description", "examples", "title")}
    return schema


def test_the_signatures_cover_every_constraint_of_the_row_schemas() -> None:
    # The signatures in validation.py summarise exactly these constraints. A schema that gains one
    # (a key pattern, a label format, a bound) must extend the signature too, or the sampled check
    # would stop seeing it: this test fails first.
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
