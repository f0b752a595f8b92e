"""The JSON Schemas under schemas/: well-formed, complete, true to the vectors, and compiled faithfully.

README decision 8: a request that breaks its schema fails before the verb runs, so a request schema must
accept every request the reference accepts (the vectors' requests above all) and leave value checks the
reference words itself (`invalid gpu map`, `invalid storage`, ...) to the handler. Response schemas pin what
the plugins emit. Executables validate with fastjsonschema code compiled from the files, the references
between them followed by fastjsonschema (``schemafiles.handlers``); these tests check that it means the same
as the files read by the jsonschema package.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, Callable

import fastjsonschema
import jsonschema
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT7

import plugins
from resource_extend.formats import schemafiles
from resource_extend.formats.schemafiles import verbs_with_schemas
from tests.support import ROOT

SCHEMAS = ROOT / "schemas"
VECTORS = ROOT / "tests" / "vectors"
ID_BASE = "https://projecteru2.github.io/resource-extend/schemas/"
DRAFT7_URI = "http://json-schema.org/draft-07/schema#"

PLUGINS = tuple(plugins.SHIPPED)
DIRECTIONS = ("request", "response")
VERBS = (
    "name",
    "verbs",
    "get-metrics-description",
    "get-metrics",
    "add-node",
    "remove-node",
    "get-nodes-deploy-capacity",
    "set-node-resource-capacity",
    "get-node-resource-info",
    "get-nodes-resource-info",
    "set-node-resource-info",
    "set-node-resource-usage",
    "get-most-idle-node",
    "fix-node-resource",
    "calculate-deploy",
    "calculate-realloc",
    "calculate-remap",
)

# Vector requests a request schema is allowed to reject, with the reason. Every other request in the
# vectors is one the reference accepts, or one whose failure the handler must word (README decision 7);
# the entries below fail in the reference too, with a decoder message that is not contract.
REQUEST_REJECTION_ALLOWLIST: dict[str, str] = {
    # The reference fails these too: its strict JSON round trip (spec 1.9, 4.1 step 2) refuses them.
    "gpu/add-node/float-count-rejected": "1.5 is not an integer count (spec 1.9)",
    "gpu/add-node/string-count-rejected": "a string count fails strict decoding (spec 1.9)",
    "gpu/add-node/non-object-map-rejected": "prod_count_map must be an object (spec 1.9)",
    "gpu/add-node/info-strict-decoding": "info.NCPU must be a number (spec 4.1 step 2)",
    "gpu/get-node-resource-info/strict-workload-decoding": "a workload count must be an integer (spec 1.9)",
    "storage/set-node-resource-info/string-storage-rejected": (
        "parsed-form storage must be an integer (storage-types.md 9)"
    ),
    # Decision 14: requests core could not have meant are refused by the schema, naming the field.
    "gpu/add-node/keys-case-sensitive": "a node resource holds prod_count_map only (decision 14)",
    "gpu/add-node/unknown-keys-ignored": "a node resource holds prod_count_map only (decision 14)",
    "gpu/set-node-resource-capacity/request-without-map-beats-resource": "a capacity request holds prod_count_map only",
    "gpu/calculate-deploy/deploy-count-half-rounds-to-even-down": "deploy_count 2.5 (decision 14)",
    "gpu/calculate-deploy/deploy-count-half-rounds-to-even-up": "deploy_count 3.5 (decision 14)",
    "gpu/calculate-deploy/deploy-count-bad-string-is-zero": 'deploy_count "three" (decision 14)',
    "gpu/calculate-deploy/deploy-count-bool-is-zero": "deploy_count true (decision 14)",
    "storage/calculate-deploy/deploy-count-half-even": "deploy_count 2.5 (decision 14)",
    # Decision 19: a value of the wrong type in what a person writes is refused, naming the key.
    "gpu/add-node/non-object-resource-is-refused": "a node resource is an object or null (decision 19)",
    "storage/add-node/non-string-volume-elements-refused": "volumes is a list of strings (decision 19)",
    "storage/set-node-resource-capacity/rm-disks-non-string-refused": "rm-disks is a string (decision 19)",
    "storage/calculate-deploy/non-list-volumes-refused": "a binding list is a list (decision 19)",
}

SCHEMA_FILES = sorted(p.relative_to(SCHEMAS).as_posix() for p in SCHEMAS.rglob("*.json"))
VERB_SCHEMAS = [(plugin, verb, direction) for plugin in PLUGINS for verb in VERBS for direction in DIRECTIONS]


def _load_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(VECTORS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                cases.append(json.loads(line))
    return cases


CASES = _load_cases()


def stdin_document(case: dict[str, Any]) -> dict[str, Any] | None:
    """The request object the plugin decodes from the case's stdin, or None when stdin holds no object."""
    if "stdin_raw" not in case:
        request: dict[str, Any] = case["request"]
        return request
    text = case["stdin_raw"].lstrip(" \t\r\n")
    try:
        # like the plugin, read the first JSON value and ignore what follows it
        value, _ = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


REQUEST_CASES = [case for case in CASES if stdin_document(case) is not None]
RESPONSE_CASES = [case for case in CASES if case["expect"]["exit"] == 0]
FULL_RESPONSE_CASES = [case for case in RESPONSE_CASES if case.get("match") != "subset"]


def case_id(case: dict[str, Any]) -> str:
    return str(case["id"])


def load(relative: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((SCHEMAS / relative).read_text(encoding="utf-8"))
    return document


@cache
def registry() -> Registry[Any]:
    """Every schema file, addressable by its $id, as the references expect."""
    resources = [(load(rel)["$id"], DRAFT7.create_resource(load(rel))) for rel in SCHEMA_FILES]
    return Registry().with_resources(resources)


@cache
def file_validator(relative: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(load(relative), registry=registry())


def compiled_code(plugin: str, verb: str, direction: str) -> str:
    schema = schemafiles.verb_schema(SCHEMAS, plugin, verb, direction)
    return fastjsonschema.compile_to_code(schema, handlers=schemafiles.handlers(SCHEMAS))


@cache
def compiled_validator(plugin: str, verb: str, direction: str) -> Callable[[Any], Any]:
    """The file compiled to source with fastjsonschema and loaded, as the build does for executables."""
    code = compiled_code(plugin, verb, direction)
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    # the generator writes the root schema's function first (its name comes from the $id)
    entry = re.search(r"^def (\w+)\(", code, re.MULTILINE)
    assert entry is not None
    validate: Callable[[Any], Any] = namespace[entry.group(1)]
    return validate


def fast_accepts(plugin: str, verb: str, direction: str, document: Any) -> bool:
    try:
        compiled_validator(plugin, verb, direction)(document)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def verb_file(plugin: str, verb: str, direction: str) -> str:
    return f"{plugin}/{verb}.{direction}.json"


def first_error(validator: jsonschema.Draft7Validator, document: Any) -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return None
    return f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message[:300]}"


# --- 1. every file is a draft-07 schema and its examples hold ----------------------------------------------


@pytest.mark.parametrize("relative", SCHEMA_FILES)
def test_every_schema_file_is_a_valid_draft07_schema_with_id_title_description_and_examples(relative: str) -> None:
    document = load(relative)
    jsonschema.Draft7Validator.check_schema(document)
    assert document["$schema"] == DRAFT7_URI
    assert document["$id"] == ID_BASE + relative
    assert isinstance(document.get("title"), str) and document["title"]
    assert isinstance(document.get("description"), str) and document["description"]
    assert isinstance(document.get("examples"), list) and document["examples"]
    # draft-07 ignores every keyword beside a $ref, $id included, so no file may have one at its root
    assert "$ref" not in document


@pytest.mark.parametrize("relative", SCHEMA_FILES)
def test_every_example_validates_against_its_own_schema(relative: str) -> None:
    for index, example in enumerate(load(relative)["examples"]):
        assert first_error(file_validator(relative), example) is None, f"example {index}"


@pytest.mark.parametrize("relative", [r for r in SCHEMA_FILES if r.endswith(("common.json", "defs.json"))])
def test_definition_files_catalogue_every_definition_so_their_example_covers_each(relative: str) -> None:
    document = load(relative)
    names = set(document["definitions"])
    assert set(document["properties"]) == names
    assert document["additionalProperties"] is False
    for example in document["examples"]:
        assert set(example) == names


# --- 2. exactly the verb files ---------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_each_plugin_has_request_and_response_schemas_for_exactly_the_verb_list(plugin: str) -> None:
    expected = {f"{verb}.{direction}.json" for verb in VERBS for direction in DIRECTIONS} | {"defs.json"}
    present = {p.name for p in (SCHEMAS / plugin).iterdir()}
    assert present - expected == set(), "stray files"
    assert expected - present == set(), "missing files"
    assert verbs_with_schemas(SCHEMAS, plugin) == sorted(VERBS)


def test_schema_directory_holds_only_common_json_and_the_plugin_directories() -> None:
    assert {p.name for p in SCHEMAS.iterdir()} == {"common.json", *PLUGINS}


# --- 3. the vectors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", REQUEST_CASES, ids=case_id)
def test_every_vector_request_validates_against_its_verb_request_schema(case: dict[str, Any]) -> None:
    relative = verb_file(case["plugin"], case["verb"], "request")
    error = first_error(file_validator(relative), stdin_document(case))
    if case["id"] in REQUEST_REJECTION_ALLOWLIST:
        assert error is not None, "allowlisted but accepted: drop it from REQUEST_REJECTION_ALLOWLIST"
        return
    assert error is None


def test_rejection_allowlist_names_existing_cases_with_reasons() -> None:
    ids = {case_id(case) for case in REQUEST_CASES}
    for allowed, reason in REQUEST_REJECTION_ALLOWLIST.items():
        assert allowed in ids and reason.strip()


@pytest.mark.parametrize("case", FULL_RESPONSE_CASES, ids=case_id)
def test_every_successful_vector_response_validates_against_its_verb_response_schema(
    case: dict[str, Any],
) -> None:
    relative = verb_file(case["plugin"], case["verb"], "response")
    assert first_error(file_validator(relative), case["expect"]["response"]) is None


# --- 5. wrong structure is rejected, value checks are left to the handler --------------------------------

WRONG_STRUCTURE = [
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": 1.5}}}, "count 1.5"),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": "2"}}}, 'count "2"'),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": True}}}, "count true"),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": None}}}, "count null"),
    ("gpu", "add-node", {"nodename": "n1", "info": {"NCPU": "8"}}, "info.NCPU a string"),
    (
        "gpu",
        "set-node-resource-capacity",
        {"nodename": "n1", "resource_request": {"prod_count_map": ["nvidia-3070"]}},
        "prod_count_map not an object",
    ),
    (
        "gpu",
        "set-node-resource-usage",
        {"nodename": "n1", "workloads_resource": [{"prod_count_map": {"nvidia-3070": "1"}}]},
        "workload count a string",
    ),
    (
        "gpu",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {"prod_count_map": {"a": 2**63}}},
        "count beyond int64",
    ),
    ("gpu", "get-metrics", {"nodes": {"podname": "p", "nodename": "n1"}}, "nodes not an array"),
    ("gpu", "get-metrics", {"nodes": [{"podname": "p", "nodename": 5}]}, "nodes[0].nodename a number"),
    ("gpu", "get-nodes-deploy-capacity", [], "request not an object"),
    ("storage", "add-node", {"nodename": "n1", "info": {"StorageTotal": "1000"}}, "info.StorageTotal a string"),
    (
        "storage",
        "set-node-resource-info",
        {"nodename": "n1", "capacity": {"volumes": ["/data0:1T"]}, "usage": {}},
        "parsed volumes not an object",
    ),
    (
        "storage",
        "set-node-resource-info",
        {"nodename": "n1", "capacity": {"storage": "1T"}, "usage": {}},
        "parsed storage a string",
    ),
    (
        "storage",
        "set-node-resource-capacity",
        {"nodename": "n1", "resource": {"disks": ["/dev/vda:/:1:1:1:1"]}},
        "parsed disks are strings",
    ),
    (
        "storage",
        "set-node-resource-usage",
        {"nodename": "n1", "resource": {"disks": [{"device": "/dev/vda", "read_IOPS": 1.5}]}},
        "disk quota 1.5",
    ),
    (
        "storage",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource": {"volume_plan_request": ["AUTO:/d:rw:1G"]}},
        "volume plan not an object",
    ),
    (
        "storage",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource": {"storage_request": "1G"}},
        "workload storage_request a string",
    ),
    (
        "storage",
        "get-node-resource-info",
        {"nodename": "n1", "workloads_resource": [{"volumes_request": "AUTO:/d:rw:1G"}]},
        "workload binding list a string",
    ),
    ("storage", "get-metrics", {"nodes": "node-1"}, "nodes a string"),
    # Decision 19: what a person writes is refused when the plugin does not read it as written.
    ("gpu", "add-node", {"nodename": "n1", "resource": "x"}, "a non-object node resource"),
    ("gpu", "add-node", {"nodname": "n1"}, "a misspelt top-level key"),
    (
        "gpu",
        "calculate-deploy",
        {"nodename": "n1", "workload_resource_request": {"prod_count": {"a": 1}}},
        "prod_count",
    ),
    ("gpu", "calculate-realloc", {"nodename": "n1", "workload_resource_request": {"nvidia-3090": 1}}, "a bare product"),
    ("gpu", "get-nodes-deploy-capacity", {"nodenames": ["n1"], "workload_resource": "x"}, "a string workload"),
    ("gpu", "set-node-resource-usage", {"nodename": "n1", "resource_request": {"prod": {}}}, "usage request key"),
    ("gpu", "calculate-deploy", {"nodename": "n1", "deploy_cont": 2}, "deploy_cont"),
    (
        "storage",
        "get-nodes-deploy-capacity",
        {"nodenames": ["n1"], "workload_resource": {"storage": True}},
        "bool size",
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "workload_resource_request": {"volumes": "AUTO:/d"}},
        "one binding",
    ),
    ("storage", "calculate-deploy", {"nodename": "n1", "workload_resource_request": {"volume": [1]}}, "number binding"),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "workload_resource_request": {"volumes_request": []}},
        "_ for -",
    ),
    ("storage", "calculate-realloc", {"nodename": "n1", "workload_resource_request": {"storage-limt": "1G"}}, "limt"),
    ("storage", "add-node", {"nodename": "n1", "resource": {"volumes": "/data0:1T"}}, "one volume string"),
    ("storage", "add-node", {"nodename": "n1", "resource": {"volumes": ["/data0:1T", 5]}}, "number volume"),
    ("storage", "add-node", {"nodename": "n1", "resource": {"storage": True}}, "bool node storage"),
    ("storage", "add-node", {"nodename": "n1", "resource": []}, "a list node resource"),
    ("storage", "set-node-resource-capacity", {"nodename": "n1", "resource_request": {"rm-disks": 5}}, "rm-disks 5"),
    ("storage", "set-node-resource-capacity", {"nodename": "n1", "resource_request": {"rm_disks": "a"}}, "rm_disks"),
    ("storage", "set-node-resource-info", {"nodename": "n1", "capcity": {}}, "capcity"),
]

LEFT_TO_THE_HANDLER = [
    ("gpu", "add-node", {"nodename": 5, "resource": {"prod_count_map": {"a": 1}}}, "node name is empty"),
    ("gpu", "get-most-idle-node", {"nodenames": [1, 2, None]}, "node name is empty"),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": 0}}}, "invalid gpu map"),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"  ": 1}}}, "invalid gpu product"),
    ("gpu", "add-node", {"nodename": "n1", "resource": {"prod_count_map": {"a": 3.0}}}, "3.0 is 3"),
    ("gpu", "add-node", {"nodename": "n1", "info": {"Resources": {"gpu": {"prod_count_map": {}}}}}, "decision 2"),
    ("gpu", "set-node-resource-capacity", {"nodename": "n1", "delta": None, "incr": "false"}, "flags read true"),
    ("gpu", "set-node-resource-usage", {"nodename": "n1", "workloads_resource": [1, "x", None]}, "dropped"),
    ("gpu", "calculate-deploy", {"nodename": "n1", "deploy_count": "4"}, "lenient Int"),
    ("gpu", "get-node-resource-info", None, "null stdin reads as no keys"),
    ("storage", "get-nodes-deploy-capacity", {"nodenames": ["n1"], "workload_resource": {"storage": "-1"}}, "1"),
    ("storage", "add-node", {"nodename": "n1", "resource": {"volumes": ["/data0"]}}, "invalid volume"),
    ("storage", "add-node", {"nodename": "n1", "resource": {"disks": ["/dev/vda:/:1K:200:1G:2G"]}}, "invalid disk"),
    ("storage", "set-node-resource-usage", {"nodename": "n1", "resource": {"volumes": {"/d": -1}}}, "invalid volume"),
    (
        "storage",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource": {"volume_plan_request": {"garbage": {"/data0": 1}}}},
        "plan keys are parsed by the plugin",
    ),
]


@pytest.mark.parametrize(("plugin", "verb", "request_", "what"), WRONG_STRUCTURE, ids=[w[3] for w in WRONG_STRUCTURE])
def test_wrong_structure_requests_are_rejected(plugin: str, verb: str, request_: Any, what: str) -> None:
    assert first_error(file_validator(verb_file(plugin, verb, "request")), request_) is not None
    assert not fast_accepts(plugin, verb, "request", request_)


@pytest.mark.parametrize(
    ("plugin", "verb", "request_", "why"), LEFT_TO_THE_HANDLER, ids=[f"{w[1]}-{w[3]}" for w in LEFT_TO_THE_HANDLER]
)
def test_lenient_fields_and_worded_value_checks_are_left_to_the_handler(
    plugin: str, verb: str, request_: Any, why: str
) -> None:
    assert first_error(file_validator(verb_file(plugin, verb, "request")), request_) is None
    assert fast_accepts(plugin, verb, "request", request_)


# --- 4. the compiled code reads only the schema files and means the same as they do ---------------------


def refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [ref for item in node for ref in refs(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    data = ("examples", "const", "enum")
    return found + [ref for key, value in node.items() if key not in data for ref in refs(value)]


@pytest.mark.parametrize("relative", SCHEMA_FILES)
def test_every_reference_resolves_to_a_definition_in_a_schema_file(relative: str) -> None:
    base = load(relative)["$id"]
    for ref in refs(load(relative)):
        assert "#/definitions/" in ref, ref
        uri, target = schemafiles.resolve(SCHEMAS, base, ref)
        assert uri.startswith(ID_BASE) and isinstance(target, dict), ref


def test_compiling_reads_no_address_outside_the_schema_directory() -> None:
    local = schemafiles.handlers(SCHEMAS)
    for uri in ("https://example.com/x.json", f"{ID_BASE}../secret.json", "http://json-schema.org/draft-07/schema"):
        with pytest.raises(ValueError):
            local[uri.split(":")[0]](uri)


@pytest.mark.parametrize(("plugin", "verb", "direction"), VERB_SCHEMAS)
def test_compiled_code_is_reproducible(plugin: str, verb: str, direction: str) -> None:
    assert compiled_code(plugin, verb, direction) == compiled_code(plugin, verb, direction)


def documents_for(plugin: str, verb: str, direction: str) -> list[Any]:
    """Every document of the plugin the vectors and tests know, whatever verb it belongs to."""
    if direction == "request":
        docs: list[Any] = [stdin_document(case) for case in REQUEST_CASES if case["plugin"] == plugin]
        docs += [w[2] for w in WRONG_STRUCTURE + LEFT_TO_THE_HANDLER if w[0] == plugin]
        docs += [None, [], "x", 1]
    else:
        docs = [case["expect"]["response"] for case in RESPONSE_CASES if case["plugin"] == plugin]
        docs += [None, {}, [], *PLUGINS]
    for other in VERBS:
        docs += load(verb_file(plugin, other, direction))["examples"]
    return docs


@pytest.mark.parametrize(("plugin", "verb", "direction"), VERB_SCHEMAS)
def test_compiled_code_and_the_files_give_the_same_verdicts_on_the_vectors(
    plugin: str, verb: str, direction: str
) -> None:
    relative = verb_file(plugin, verb, direction)
    for document in documents_for(plugin, verb, direction):
        expected = file_validator(relative).is_valid(document)
        assert fast_accepts(plugin, verb, direction, document) == expected, json.dumps(document)[:300]
