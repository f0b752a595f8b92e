"""The schemas' string patterns are checked on a call without ``re`` (schemaerror.KNOWN_PATTERNS): each
stand-in must answer as the regular expression does, and every pattern the schemas use must have one."""

from __future__ import annotations

import decimal
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.formats.schemaerror import KNOWN_PATTERNS, LazyPatterns, NeverDecimal
from tests.support import ROOT

SCHEMAS = ROOT / "schemas"


def _patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(_patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(value) for value in node))
    return set()


def schema_patterns() -> set[str]:
    # As fastjsonschema compiles them: every '$' becomes '\Z'.
    found = set().union(*(_patterns(json.loads(p.read_text())) for p in SCHEMAS.rglob("*.json")))
    return {pattern.replace("$", "\\Z") for pattern in found}


def test_every_schema_pattern_has_a_stand_in() -> None:
    assert schema_patterns(), "no pattern found: the walk is broken"
    assert schema_patterns() <= KNOWN_PATTERNS.keys()


@pytest.mark.parametrize("source", sorted(KNOWN_PATTERNS))
@given(text=st.text(alphabet=st.sampled_from("0123456789-/:,ab \x00\x1f\x7f\x9f\xa0é١\n"), max_size=8) | st.text())
def test_each_stand_in_answers_as_its_regular_expression(source: str, text: str) -> None:
    assert KNOWN_PATTERNS[source](text) == bool(re.compile(source).search(text))


def test_an_unknown_pattern_is_compiled_by_re() -> None:
    patterns = LazyPatterns({"^a+$": "^a+\\Z"})
    assert patterns["^a+$"].search("aaa")
    assert not patterns["^a+$"].search("aab")


def test_a_known_pattern_answers_search_as_a_compiled_regex_would_without_re() -> None:
    patterns = LazyPatterns({"digits": "^[0-9]+\\Z", "path": "^/[^:,\\u0000-\\u001f\\u007f-\\u009f]*\\Z"})
    assert patterns["digits"].search("12") is True
    assert patterns["digits"].search("1a") is None
    assert patterns["path"].search("/data0") is True
    assert patterns["path"].search("/data:0") is None
    assert not [p for p in patterns.values() if p.__class__.__module__ == "re"]


@pytest.mark.parametrize("value", [0, 1.5, True, None, "1", decimal.Decimal(1), [], {}])
def test_nothing_is_a_never_decimal_and_a_number_check_reads_as_int_or_float(value: object) -> None:
    assert not isinstance(value, NeverDecimal)
    assert isinstance(value, (int, float, NeverDecimal)) == isinstance(value, (int, float))
