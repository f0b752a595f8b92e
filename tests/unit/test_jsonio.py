"""Reading the request off stdin and writing JSON the way the Go reference does.

Request numbers are IEEE doubles in the reference (spec 1.3, 1.9): integer literals beyond 2**53 lose
precision exactly as a float64 round trip does, and integers that no longer fit int64 fail strict decoding.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend import jsonio
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap


def test_dumps_is_compact_and_escapes_like_go() -> None:
    assert jsonio.dumps({"a": "<&>", "b": "é"}) == '{"a":"\\u003c\\u0026\\u003e","b":"é"}'


def test_dumps_writes_integral_floats_without_a_fraction() -> None:
    assert jsonio.dumps({"rate": 1.0, "usage": 0.25, "zero": 0.0}) == '{"rate":1,"usage":0.25,"zero":0}'


@pytest.mark.parametrize("raw", [b"", b"   \n"])
def test_empty_stdin_is_eof(raw: bytes) -> None:
    with pytest.raises(PluginError, match="decode plugin input: EOF"):
        jsonio.loads_request(raw)


@pytest.mark.parametrize("raw", [b"{not json", b"[1]", b'"s"', b"3", b"true", b"NaN", b'{"a": Infinity}'])
def test_invalid_or_non_object_stdin_is_rejected(raw: bytes) -> None:
    with pytest.raises(PluginError, match="decode plugin input"):
        jsonio.loads_request(raw)


def test_null_reads_as_no_fields_and_trailing_data_is_ignored() -> None:
    assert jsonio.loads_request(b"null") == {}
    assert jsonio.loads_request(b'{"nodename": "x"} trailing garbage') == {"nodename": "x"}


def test_deep_nesting_is_a_clean_error() -> None:
    with pytest.raises(PluginError, match="decode plugin input"):
        jsonio.loads_request(b"[" * 100000 + b"]" * 100000)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a":"\\ud800"}', {"a": "\ufffd"}),
        (b'{"a":["\\udc80","x"]}', {"a": ["\ufffd", "x"]}),
        (b'{"\\udfff\\ud800":1}', {"\ufffd\ufffd": 1}),
        (b'{"a":"\\udc00\\ud800\\udc00"}', {"a": "\ufffd\U00010000"}),
        (b'{"a":"\\ud83d\\ude00"}', {"a": "\U0001f600"}),
        (b'{"a":"\\\\ud800"}', {"a": "\\ud800"}),
    ],
)
def test_lone_surrogate_escapes_read_as_the_replacement_character(raw: bytes, expected: object) -> None:
    assert jsonio.loads_request(raw) == expected


def test_utf8_never_carries_a_surrogate() -> None:
    assert jsonio.utf8("a\udc80b") == "a\ufffdb".encode()
    assert jsonio.utf8("é") == "é".encode()


def _walked(value: object) -> str:
    # What dumps wrote before it skipped the walk: every integral float rewritten, always.
    import json

    return json.dumps(jsonio._go_numbers(value), ensure_ascii=False, separators=(",", ":")).translate(
        jsonio._GO_ESCAPES
    )


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=20,
    )
)
def test_dumps_skips_the_float_walk_only_when_it_would_change_nothing(value: object) -> None:
    assert jsonio.dumps(value) == _walked(value)


@pytest.mark.parametrize("number", [1e16, 2.5e17, -1e20, 123.0, -0.0, 1e15, 9.99e20])
def test_every_integral_float_below_1e21_is_written_as_go_writes_it(number: float) -> None:
    assert jsonio.dumps({"key": "10.0.0.1", "n": number}) == _walked({"key": "10.0.0.1", "n": number})
    assert jsonio.dumps([number]) == f"[{int(number)}]"


# jsonio drives json's C scanner and encoder itself (the json package costs every call its import): these
# pin it to what the json package answers for the same text, valid or not.
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON_VALUES)
def test_compact_writes_what_json_dumps_writes(value: object) -> None:
    import json

    assert jsonio.compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@given(_JSON_VALUES, st.sampled_from(["", " ", "\n\t ", " x", "]", "{}"]), st.sampled_from(["", " \r\n"]))
def test_loads_reads_what_json_loads_reads(value: object, tail: str, lead: str) -> None:
    import json

    text = lead + json.dumps(value) + tail
    try:
        expected: object = ("ok", json.loads(text))
    except json.JSONDecodeError as exc:
        expected = ("error", exc.msg, exc.pos)
    try:
        got: object = ("ok", jsonio.loads(text))
    except ValueError as exc:
        got = ("error", getattr(exc, "msg", None), getattr(exc, "pos", None))
    assert got == expected


@given(st.text(alphabet='{}[]",:0123456789.eE+- \ntrufalsnIiyN\\u', max_size=30))
def test_request_errors_read_as_the_json_package_reported_them(text: str) -> None:
    import json

    def with_json_package(raw: bytes) -> str:
        # The decoding loads_request did with the json package itself.
        stripped = raw.decode("utf-8", errors="replace").lstrip(" \t\r\n")
        if not stripped:
            return "decode plugin input: EOF"
        try:
            value, _ = json.JSONDecoder(
                parse_int=jsonio._go_double_int, parse_constant=jsonio._reject_constant
            ).raw_decode(stripped)
        except json.JSONDecodeError as exc:
            return f"decode plugin input: {exc.msg} at offset {exc.pos}"
        except RecursionError:
            return "decode plugin input: nested too deeply"
        except ValueError as exc:
            return f"decode plugin input: {exc}"
        return "ok" if isinstance(value, dict) or value is None else "not an object"

    try:
        jsonio.loads_request(text.encode())
        got = "ok"
    except PluginError as exc:
        got = "not an object" if "into a request object" in str(exc) else str(exc)
    assert got == with_json_package(text.encode())


# Request numbers are IEEE doubles, as in the reference: the rounding happens as the request is read.


def test_small_integers_stay_exact() -> None:
    assert jsonio.loads_request(b'{"n": 9007199254740992, "m": -3}') == {"n": 2**53, "m": -3}


def test_integers_beyond_2_pow_53_round_like_float64() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 9007199254740993}}')
    assert prodmap.parse(request, "resource") == {"x": 9007199254740992}


def test_int64_max_literal_overflows_after_the_double_round_trip() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 9223372036854775807}}')
    with pytest.raises(PluginError):
        prodmap.parse(request, "resource")


def test_integer_literal_of_1e21_or_more_is_not_an_integer() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 1000000000000000000000}}')
    with pytest.raises(PluginError):
        prodmap.parse(request, "resource")


def test_integer_literal_beyond_float64_range_fails_decoding() -> None:
    with pytest.raises(PluginError, match="decode plugin input"):
        jsonio.loads_request(b'{"n": 1' + b"0" * 400 + b"}")
