"""schemaerror's pattern stand-ins on the texts hand mutants moved (issue 37, docs/testing.md#mutant-sample-issue-37):
the property test draws such texts only now and then; these are checked on every run."""

from __future__ import annotations

import re

import pytest

from resource_extend.formats.schemaerror import KNOWN_PATTERNS

EDGES = ["/a,b", "/,", "/a:b", "/", "", "a/b", "/a\x9f", "/a\x7f", "/a\xa0", "/data0", "-0", "-", "0", "٣"]


@pytest.mark.parametrize("source", sorted(KNOWN_PATTERNS))
@pytest.mark.parametrize("text", EDGES)
def test_each_stand_in_answers_as_its_regular_expression_on_each_character_it_excludes(source: str, text: str) -> None:
    assert KNOWN_PATTERNS[source](text) == bool(re.compile(source).search(text))
