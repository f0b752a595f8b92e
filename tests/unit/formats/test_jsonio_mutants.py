"""jsonio at the edges hand mutants moved (issue 37, docs/testing.md#mutant-sample-issue-37): each test names the
boundary it pins; the mutant that survived without it is in the table there."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.formats.decoding import strict_int


def test_a_float_of_1e21_or_more_is_written_in_exponent_form_as_go_writes_it() -> None:
    # Go's encoder switches to exponent form at 1e21 exactly; below it, integral floats are plain digits.
    assert jsonio.dumps([1e21, -1e21, 1e22, 9.99e20]) == "[1e+21,-1e+21,1e+22,999000000000000000000]"


def test_a_request_integer_literal_of_1e21_stays_a_double_and_is_refused_in_go_s_words() -> None:
    # The reference reads request numbers as float64 and re-encodes them: 1e21 comes back as "1e+21", which
    # no int64 field takes; below 1e21 the double is re-encoded as an integer.
    request = jsonio.loads_request(b'{"n": 1000000000000000000000, "m": 999999999999999868928}')
    assert type(request["n"]) is float and type(request["m"]) is int
    with pytest.raises(PluginError, match=r"^json: cannot unmarshal number 1e\+21 into n of type int64$"):
        strict_int(request["n"], "n")


def _nested(depth: int) -> str:
    """A list nested ``depth`` deep with an empty list beside its innermost levels' parent: more than
    MOST_NESTED brackets and more than twice as many characters, so the depth is walked, not skipped."""
    return "[" * depth + "]" * (depth - 1) + ",[]]"


def test_a_text_nested_exactly_most_nested_deep_among_more_brackets_reads() -> None:
    text = _nested(jsonio.MOST_NESTED)
    assert len(text) > 2 * jsonio.MOST_NESTED and text.count("[") > jsonio.MOST_NESTED
    assert len(jsonio.loads(text)) == 2
    assert len(jsonio.load_document(text.encode())) == 2
    with pytest.raises(ValueError, match="nested too deeply"):
        jsonio.loads(_nested(jsonio.MOST_NESTED + 1))
