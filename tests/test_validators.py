"""The validators build.py compiles into the executables agree with the jsonschema package."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referencing import Registry
from referencing.jsonschema import DRAFT7

import build
from resource_extend.formats import schemafiles
from resource_extend.formats.schemafiles import verbs_with_schemas
from resource_extend.formats.validation import module_name, schema_dir
from resource_extend_dev.conformance import load_cases
from tests.support import PLUGINS, VECTORS, examples

CASES = load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl")))
Pair = tuple[Callable[[Any], Any], jsonschema.Draft7Validator]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str, str], Pair]]:
    """Every (plugin, verb, direction): the build's compiled validator and a jsonschema validator."""
    root = tmp_path_factory.mktemp("validators")
    package_root = root / "resource_extend_compiled"
    package_root.mkdir()
    (package_root / "__init__.py").write_text("")
    sys.path.insert(0, str(root))
    pairs = {}
    # The jsonschema package follows the references between the files the way fastjsonschema did for the build.
    registry: Registry[Any] = Registry(
        retrieve=lambda uri: DRAFT7.create_resource(schemafiles.load(schema_dir(), uri))  # type: ignore[call-arg]
    )
    try:
        for plugin in PLUGINS:
            build.compile_validators(plugin, schema_dir(), package_root / plugin)
            for verb in verbs_with_schemas(schema_dir(), plugin):
                for direction in ("request", "response"):
                    module = importlib.import_module(
                        f"resource_extend_compiled.{plugin}.{module_name(verb, direction)}"
                    )
                    schema = schemafiles.verb_schema(schema_dir(), plugin, verb, direction)
                    reference = jsonschema.Draft7Validator(schema, registry=registry)
                    pairs[(plugin, verb, direction)] = (module.validate, reference)
        yield pairs
    finally:
        sys.path.remove(str(root))


def test_the_compiled_validators_carry_only_what_the_failure_line_reads(
    compiled: dict[tuple[str, str, str], Pair],
) -> None:
    # As constants, the schema fragments were half of a call's unmarshalling: a raise keeps only what
    # validation.describe reads (an unknown key's siblings, a list's type), every other raise carries None.
    from resource_extend.formats.schemaerror import JsonSchemaValueException

    fast, _ = compiled[("gpu", "add-node", "request")]
    with pytest.raises(JsonSchemaValueException) as raised:
        fast({"resource": {"prod_count_map": {"a": 1.5}}})
    assert raised.value.definition is None and raised.value.rule
    with pytest.raises(JsonSchemaValueException) as raised:
        fast({"resource": {"prod_count": {}}})
    assert raised.value.definition == {"properties": {"prod_count_map": None}}
    fast, _ = compiled[("storage", "add-node", "request")]
    with pytest.raises(JsonSchemaValueException) as raised:
        fast({"resource": {"volumes": "/data0:1T"}})
    assert raised.value.definition == {"type": ["array", "object", "null"]}
    module = sys.modules[fast.__module__]
    assert module.__file__ is not None and "'description'" not in Path(module.__file__).read_text()


def verdicts(pair: Pair, document: Any) -> tuple[bool, bool]:
    fast, reference = pair
    try:
        fast(document)
        fast_ok = True
    except ValueError:
        fast_ok = False
    return fast_ok, reference.is_valid(document)


def test_the_compiled_validators_raise_only_the_shims_exception(compiled: dict[tuple[str, str, str], Pair]) -> None:
    from resource_extend.formats.schemaerror import JsonSchemaValueException

    fast, _ = compiled[("gpu", "add-node", "request")]
    with pytest.raises(JsonSchemaValueException):
        fast({"resource": {"prod_count_map": {"a": 1.5}}})


def test_every_vector_document_gets_the_same_verdict(compiled: dict[tuple[str, str, str], Pair]) -> None:
    checked = 0
    for case in CASES:
        if case["plugin"] not in PLUGINS:
            continue
        documents = [("request", case.get("request"))]
        if "response" in case["expect"]:
            documents.append(("response", case["expect"]["response"]))
        for direction, document in documents:
            pair = compiled[(case["plugin"], case["verb"], direction)]
            fast_ok, reference_ok = verdicts(pair, document)
            assert fast_ok == reference_ok, (case["id"], direction)
            checked += 1
    assert checked > len([c for c in CASES if c["plugin"] in PLUGINS])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def mutate(document: Any, path: list[int], value: Any) -> Any:
    """Replace one node of ``document`` (chosen by ``path``) with ``value``."""
    if not path or not isinstance(document, (dict, list)) or not document:
        return value
    if isinstance(document, dict):
        key = sorted(document)[path[0] % len(document)]
        return {**document, key: mutate(document[key], path[1:], value)}
    index = path[0] % len(document)
    return [*document[:index], mutate(document[index], path[1:], value), *document[index + 1 :]]


SEEDS = [(c["plugin"], c["verb"], c.get("request")) for c in CASES if c["plugin"] in PLUGINS]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SEEDS), st.lists(st.integers(0, 50), max_size=5), json_values)
def test_mutated_requests_get_the_same_verdict(
    compiled: dict[tuple[str, str, str], Pair], seed: tuple[str, str, Any], path: list[int], value: Any
) -> None:
    plugin, verb, request = seed
    document = mutate(request, path, value)
    assert (
        verdicts(compiled[(plugin, verb, "request")], document)[0]
        == verdicts(compiled[(plugin, verb, "request")], document)[1]
    )


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SEEDS), json_values)
def test_random_documents_get_the_same_verdict(
    compiled: dict[tuple[str, str, str], Pair], seed: tuple[str, str, Any], document: Any
) -> None:
    plugin, verb, _ = seed
    for direction in ("request", "response"):
        fast_ok, reference_ok = verdicts(compiled[(plugin, verb, direction)], document)
        assert fast_ok == reference_ok


def test_every_schema_has_a_compiled_validator_in_the_build(compiled: dict[tuple[str, str, str], Pair]) -> None:
    for plugin in PLUGINS:
        assert {verb for (p, verb, _) in compiled if p == plugin} == set(verbs_with_schemas(schema_dir(), plugin))
        built = Path(build.ROOT, "build", plugin, "resource_extend", f"_validators_{plugin}")
        if built.exists():
            modules = {p.stem for p in built.glob("*.py") if p.stem != "__init__"}
            assert modules == {module_name(v, d) for (p, v, d) in compiled if p == plugin}
