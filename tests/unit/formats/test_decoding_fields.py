"""The lenient request-field readers of formats/decoding.py, as the reference's field helpers read a field."""

from __future__ import annotations

import pytest

from resource_extend.formats import decoding


def test_string_does_not_convert_numbers() -> None:
    assert decoding.string({"k": 5}, "k") == ""
    assert decoding.string({"k": "v"}, "k") == "v"


def test_string_list_drops_non_strings() -> None:
    assert decoding.string_list({"k": ["a", 1, None, "b"]}, "k") == ["a", "b"]
    assert decoding.string_list({"k": "a"}, "k") == []


@pytest.mark.parametrize(
    ("value", "expected"), [(True, True), (False, False), (None, True), (0, True), ("false", True)]
)
def test_flag_is_true_for_any_present_value_but_false(value: object, expected: bool) -> None:
    assert decoding.flag({"k": value}, "k") is expected
    assert decoding.flag({}, "k") is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.5, 2),
        (3.5, 4),
        (7, 7),
        ("12", 12),
        ("-3", -3),
        ("1_0", 0),
        (" 1", 0),
        ("x", 0),
        (True, 0),
        (None, 0),
    ],
)
def test_integer_rounds_half_to_even_and_parses_decimal_strings(value: object, expected: int) -> None:
    assert decoding.integer({"k": value}, "k") == expected
