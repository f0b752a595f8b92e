"""decoding's hand-written syntax checks accept exactly what strconv's regular expressions describe.

They replace ``re`` on the call path, so a slip would silently widen or narrow what a request or a
stored record may hold; this compares them with the expressions over every short string of the
relevant alphabet and over drawn text. ``plain_int64s``, the fast path for a stored record's numbers,
must hold exactly for the ints a field reader returns unchanged.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats.decoding import (
    INT64_MAX,
    INT64_MIN,
    ascii_digits,
    control_character,
    is_decimal,
    is_go_float,
    plain_int64s,
    strict_int,
)
from tests.support import record_numbers as numbers

DECIMAL = re.compile(r"[+-]?[0-9]+\Z")
GO_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
# Characters the grammar gives a meaning to, plus near misses: another digit script, space, a letter.
ALPHABET = "09+-.eE ٣x"


def every_string(longest: int) -> itertools.chain[str]:
    return itertools.chain.from_iterable(
        ("".join(chars) for chars in itertools.product(ALPHABET, repeat=size)) for size in range(longest + 1)
    )


def test_decimal_syntax_matches_strconv_parse_int_expression_exhaustively() -> None:
    for text in every_string(4):
        assert is_decimal(text) == bool(DECIMAL.match(text)), text


def test_float_syntax_matches_strconv_parse_float_expression_exhaustively() -> None:
    for text in every_string(5):
        assert is_go_float(text) == bool(GO_FLOAT.match(text)), text


@given(st.text(alphabet=st.sampled_from(ALPHABET + "1²\n"), max_size=12) | st.text(max_size=8))
def test_both_syntaxes_match_their_expressions_on_drawn_text(text: str) -> None:
    assert is_decimal(text) == bool(DECIMAL.match(text))
    assert is_go_float(text) == bool(GO_FLOAT.match(text))


DIGITS = re.compile(r"[0-9]+\Z")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


@given(st.text(alphabet=st.sampled_from("09٣²x \x00\x1f\x7f\x9f\xa0é"), max_size=8) | st.text(max_size=8))
def test_digits_and_control_characters_match_their_expressions(text: str) -> None:
    # The one digit check and the one control-character check every reader of names, paths and numbers uses.
    assert ascii_digits(text) == bool(DIGITS.match(text))
    found = CONTROL.search(text)
    assert control_character(text) == (found.group(0) if found else None)


@given(values=st.lists(numbers, max_size=6))
def test_plain_int64s_holds_exactly_for_ints_a_field_reader_returns_unchanged(values: list[Any]) -> None:
    unchanged = all(type(value) is int and INT64_MIN <= value <= INT64_MAX for value in values)
    assert plain_int64s(values) is unchanged
    assert plain_int64s(dict(enumerate(values)).values()) is unchanged


def test_strict_int_accepts_integral_doubles_only() -> None:
    assert strict_int(3.0, "x") == 3
    for bad in (1.5, float("inf"), 2**63, "1", None, True):
        with pytest.raises(PluginError):
            strict_int(bad, "x")
