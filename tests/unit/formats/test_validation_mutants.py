"""validation at the edges hand mutants moved (issue 37, docs/testing.md#mutant-sample-issue-37): each test names
the behaviour it pins; the mutant that survived without it is in the table there."""

from __future__ import annotations

from resource_extend.formats import validation
from resource_extend.formats.schemaerror import JsonSchemaValueException


def test_nearest_takes_the_first_written_of_keys_equally_near() -> None:
    # "ab" is one substitution from each of "ax" and "ay": a true tie, decided by the order written.
    assert validation.edits("ab", "ax") == validation.edits("ab", "ay") == 1
    assert validation.nearest("ab", ["ax", "ay"]) == "ax"
    assert validation.nearest("ab", ["ay", "ax"]) == "ay"


def _line(value: str) -> str:
    exc = JsonSchemaValueException("data.x must be integer", value, "data.x", {"type": "integer"}, "type")
    return validation.describe("request", exc)


def test_a_value_of_80_characters_is_shown_whole_and_a_longer_one_cut_to_80() -> None:
    whole = "a" * 78  # 80 characters as JSON, with its quotes
    assert _line(whole) == f'request does not match the schema: request.x must be integer, got "{whole}"'
    cut = _line("a" * 79)
    assert cut.endswith(', got "' + "a" * 76 + "...")
    assert len(cut.rpartition("got ")[2]) == 80
