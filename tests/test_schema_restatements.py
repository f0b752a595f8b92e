"""Schemas restated so that their compiled validators succeed without raising accept and refuse what they did.

fastjsonschema compiles an ``anyOf`` branch and an ``if`` as a try/except around the branch: a branch that fails
builds and raises an exception (formatting its message) to be caught. get-node-resource-info's answer listed
``null`` first and its request's ``workloads_resource`` was ``if array then ...``, so nearly every successful
call raised twice; the record is now the first branch and the workloads are checked with ``items`` alone (which
applies to arrays only). The schemas are the published contract: each restatement is run here against the form it
replaced, over generated documents, for the verdict (jsonschema) and the error text (fastjsonschema).
"""

from __future__ import annotations

from typing import Any, Callable

import fastjsonschema
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from referencing import Registry
from referencing.jsonschema import DRAFT7

from resource_extend.formats import schemafiles
from resource_extend.formats.schemafiles import BASE, handlers, verb_schema, without_annotations
from resource_extend.formats.validation import schema_dir
from tests.support import examples

DEFS = f"{BASE}storage/defs.json#/definitions/"

# The forms replaced, as they were in schemas/storage.
OLD_WORKLOADS = {
    "if": {"type": "array"},
    "then": {"type": "array", "items": {"if": {"type": "object"}, "then": {"$ref": DEFS + "workload_resource"}}},
}
OLD_RECORD_OR_NULL = {"anyOf": [{"type": "null"}, {"$ref": DEFS + "record_with_diffs"}]}
NEW_WORKLOADS = {"$ref": DEFS + "workloads_param"}
# And in schemas/gpu, where a stored side's prod_count_map listed null first too.
GPU = f"{BASE}gpu/defs.json#/definitions/"
OLD_GPU_WORKLOADS = {
    "if": {"type": "array"},
    "then": {"type": "array", "items": {"if": {"type": "object"}, "then": {"$ref": GPU + "resource"}}},
}
OLD_GPU_SIDE = {
    "type": "object",
    "required": ["prod_count_map"],
    "additionalProperties": False,
    "properties": {"prod_count_map": {"anyOf": [{"type": "null"}, {"$ref": GPU + "count_map_out"}]}},
}
OLD_GPU_RECORD_OR_NULL = {"anyOf": [{"type": "null"}, {"$ref": GPU + "record_with_diffs"}]}


def _registry() -> Registry[Any]:
    return Registry(retrieve=lambda uri: DRAFT7.create_resource(schemafiles.load(schema_dir(), uri)))  # type: ignore[call-arg]


def _verdict(schema: dict[str, Any]) -> Callable[[Any], bool]:
    return jsonschema.Draft7Validator(schema, registry=_registry()).is_valid


def _error(schema: dict[str, Any]) -> Callable[[Any], str | None]:
    """The compiled validator's error text for a document (None when it accepts it), as the build compiles it."""
    validate = fastjsonschema.compile(without_annotations(schema), handlers=handlers(schema_dir(), annotations=False))

    def error(document: Any) -> str | None:
        try:
            validate(document)
        except fastjsonschema.JsonSchemaException as refused:
            return str(refused)
        return None

    return error


def _response(verb: str, plugin: str = "storage") -> dict[str, Any]:
    return verb_schema(schema_dir(), plugin, verb, "response")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
int64s = st.integers(-(2**63), 2**63 - 1)
# Values of the shapes the schemas name, mixed with anything: most documents are near the accepted set.
disk = st.fixed_dictionaries(
    {"device": st.text(max_size=4), "mounts": st.none() | st.lists(st.text(max_size=4), max_size=2)}
    | {name: int64s for name in ("read_IOPS", "write_IOPS", "read_bps", "write_bps")},
    optional={"extra": json_values},
)
disks = st.none() | st.lists(disk | json_values, max_size=2)
volumes = st.none() | st.dictionaries(st.text(max_size=4), int64s | json_values, max_size=2)
binding_strings = st.none() | st.lists(st.none() | st.text(max_size=8) | json_values, max_size=2)
plan = st.none() | st.dictionaries(st.text(max_size=6), st.none() | volumes, max_size=2)
workload = st.fixed_dictionaries(
    {},
    optional={
        "volumes_request": binding_strings,
        "volumes_limit": binding_strings,
        "volume_plan_request": plan,
        "volume_plan_limit": plan,
        "storage_request": st.none() | int64s | json_values,
        "storage_limit": st.none() | int64s,
        "disks_request": disks,
        "disks_limit": disks,
    },
)
workloads = json_values | st.lists(workload | json_values, max_size=3)
side = st.fixed_dictionaries(
    {"volumes": volumes, "disks": disks, "storage": int64s | json_values}, optional={"extra": json_values}
)
record_or_null = (
    st.none()
    | json_values
    | st.fixed_dictionaries(
        {"capacity": side | json_values, "usage": side},
        optional={"diffs": st.lists(st.text(max_size=6) | json_values, max_size=2) | json_values},
    )
)


count_map = st.none() | json_values | st.dictionaries(st.text(max_size=6), int64s | json_values, max_size=3)
gpu_side = st.fixed_dictionaries({"prod_count_map": count_map}, optional={"extra": json_values}) | json_values
gpu_workloads = json_values | st.lists(gpu_side, max_size=3)
gpu_record_or_null = (
    st.none()
    | json_values
    | st.fixed_dictionaries(
        {"capacity": gpu_side, "usage": gpu_side},
        optional={"diffs": st.lists(st.text(max_size=6) | json_values, max_size=2) | json_values},
    )
)


@settings(max_examples=examples(600), deadline=None)
@given(gpu_workloads)
def test_gpu_workloads_resource_is_checked_as_it_was(document: Any) -> None:
    assert _VERDICTS["gpu workloads"][0](document) == _VERDICTS["gpu workloads"][1](document)
    assert _ERRORS["gpu workloads"][0](document) == _ERRORS["gpu workloads"][1](document)


@settings(max_examples=examples(600), deadline=None)
@given(gpu_side)
def test_a_gpu_stored_side_is_checked_as_it_was(document: Any) -> None:
    assert _VERDICTS["gpu side"][0](document) == _VERDICTS["gpu side"][1](document)
    assert _ERRORS["gpu side"][0](document) == _ERRORS["gpu side"][1](document)


@pytest.mark.parametrize("verb", ["gpu get-node-resource-info", "gpu fix-node-resource"])
@settings(max_examples=examples(600), deadline=None)
@given(document=gpu_record_or_null)
def test_a_gpu_record_or_null_answer_is_checked_as_it_was(verb: str, document: Any) -> None:
    # Both forms reach today's record_with_diffs (the stored side's own restatement is compared above).
    old_verdict, new_verdict = _VERDICTS[verb]
    assert old_verdict(document) == new_verdict(document)
    old_error, new_error = _ERRORS[verb]
    assert old_error(document) == new_error(document)


@settings(max_examples=examples(600), deadline=None)
@given(workloads)
def test_workloads_resource_is_checked_as_it_was(document: Any) -> None:
    assert _VERDICTS["workloads"][0](document) == _VERDICTS["workloads"][1](document)
    assert _ERRORS["workloads"][0](document) == _ERRORS["workloads"][1](document)


@pytest.mark.parametrize("verb", ["get-node-resource-info", "fix-node-resource"])
@settings(max_examples=examples(600), deadline=None)
@given(document=record_or_null)
def test_a_record_or_null_answer_is_checked_as_it_was(verb: str, document: Any) -> None:
    old_verdict, new_verdict = _VERDICTS[verb]
    old_error, new_error = _ERRORS[verb]
    assert old_verdict(document) == new_verdict(document)
    assert old_error(document) == new_error(document)


_VERDICTS = {
    "gpu workloads": (_verdict(OLD_GPU_WORKLOADS), _verdict({"$ref": GPU + "workloads_param"})),
    "gpu side": (_verdict(OLD_GPU_SIDE), _verdict({"$ref": GPU + "stored_resource_out"})),
    **{
        f"gpu {verb}": (_verdict(OLD_GPU_RECORD_OR_NULL), _verdict(_response(verb, "gpu")))
        for verb in ("get-node-resource-info", "fix-node-resource")
    },
    "workloads": (_verdict(OLD_WORKLOADS), _verdict(NEW_WORKLOADS)),
    **{
        verb: (_verdict(OLD_RECORD_OR_NULL), _verdict(_response(verb)))
        for verb in ("get-node-resource-info", "fix-node-resource")
    },
}
_ERRORS = {
    "gpu workloads": (_error(OLD_GPU_WORKLOADS), _error({"$ref": GPU + "workloads_param"})),
    "gpu side": (_error(OLD_GPU_SIDE), _error({"$ref": GPU + "stored_resource_out"})),
    **{
        f"gpu {verb}": (_error(OLD_GPU_RECORD_OR_NULL), _error(_response(verb, "gpu")))
        for verb in ("get-node-resource-info", "fix-node-resource")
    },
    "workloads": (_error(OLD_WORKLOADS), _error(NEW_WORKLOADS)),
    **{
        verb: (_error(OLD_RECORD_OR_NULL), _error(_response(verb)))
        for verb in ("get-node-resource-info", "fix-node-resource")
    },
}


def test_the_generated_documents_reach_both_verdicts() -> None:
    # Without this the properties above could pass on documents all of one kind.
    accepted = {"capacity": {"volumes": {}, "disks": [], "storage": 1}, "usage": {"volumes": None, "disks": None,
                "storage": 0}, "diffs": []}  # fmt: skip
    for verb in ("get-node-resource-info", "fix-node-resource"):
        assert _VERDICTS[verb][1](accepted) and _VERDICTS[verb][1](None) and not _VERDICTS[verb][1]({})
    assert _VERDICTS["workloads"][1]([{"storage_request": 1}, 3]) and not _VERDICTS["workloads"][1](
        [{"disks_limit": 1}]
    )


def _raises_counted(schema: dict[str, Any]) -> tuple[Callable[[Any], Any], list[str]]:
    """The compiled validator (build.py's code), and a list each exception it creates appends its message to."""
    code = fastjsonschema.compile_to_code(
        without_annotations(schema), handlers=handlers(schema_dir(), annotations=False)
    )
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    made: list[str] = []

    class Counted(fastjsonschema.JsonSchemaValueException):
        def __init__(self, message: str, *args: Any, **kwargs: Any) -> None:
            made.append(message)
            super().__init__(message, *args, **kwargs)

    namespace["JsonSchemaValueException"] = Counted
    entry = next(name for name in namespace if name.startswith("validate_"))
    return namespace[entry], made


@pytest.mark.parametrize("workloads_resource", [None, [], [{"storage_request": 1, "disks_request": None}]])
def test_a_successful_get_node_resource_info_raises_nothing_in_its_validators(workloads_resource: Any) -> None:
    record = {"volumes": {"/data0": 1 << 40}, "disks": [{"device": "/dev/vdb", "mounts": ["/data0"], "read_IOPS": 1,
              "write_IOPS": 1, "read_bps": 1, "write_bps": 1}], "storage": 1 << 41}  # fmt: skip
    request, made_by_request = _raises_counted(
        verb_schema(schema_dir(), "storage", "get-node-resource-info", "request")
    )
    response, made_by_response = _raises_counted(_response("get-node-resource-info"))
    request({"nodename": "n1", "workloads_resource": workloads_resource})
    response({"capacity": record, "usage": record, "diffs": ["node.Storage != sum(workload.Storage): 1 != 0"]})
    assert made_by_request == made_by_response == []
    # A node the plugin has no record of answers null: the record branch fails first, and the null one accepts.
    response(None)
    assert made_by_response


@pytest.mark.parametrize("workloads_resource", [None, [], [{"prod_count_map": {"nvidia-3070": 1}}]])
def test_a_successful_gpu_get_node_resource_info_raises_nothing_in_its_validators(workloads_resource: Any) -> None:
    request, made_by_request = _raises_counted(verb_schema(schema_dir(), "gpu", "get-node-resource-info", "request"))
    response, made_by_response = _raises_counted(_response("get-node-resource-info", "gpu"))
    request({"nodename": "n1", "workloads_resource": workloads_resource})
    response({"capacity": {"prod_count_map": {"nvidia-3070": 2}}, "usage": {"prod_count_map": {}}, "diffs": []})
    assert made_by_request == made_by_response == []
    response({"capacity": {"prod_count_map": None}, "usage": {"prod_count_map": {}}, "diffs": []})
    assert made_by_response  # a side stored without a map: the map branch fails first, and null accepts


def test_the_generated_gpu_documents_reach_both_verdicts() -> None:
    side = _VERDICTS["gpu side"][1]
    assert side({"prod_count_map": {"a": 1}}) and side({"prod_count_map": None}) and not side({"prod_count_map": 1.5})
    assert _VERDICTS["gpu workloads"][1]([{"prod_count_map": {}}, 3])
    assert not _VERDICTS["gpu workloads"][1]([{"prod_count_map": 1.5}])
