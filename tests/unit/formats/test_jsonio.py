"""Reading the request off stdin and writing JSON the way the Go reference does.

Request numbers are IEEE doubles in the reference (spec 1.3, 1.9): integer literals beyond 2**53 lose
precision exactly as a float64 round trip does, and integers that no longer fit int64 fail strict decoding.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.gpu import prodmap
from tests.support import ROOT


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
        except json.JSONDecodeError as exc:  # less the " at" some of json's messages end in
            msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
            return f"decode plugin input: {msg} at offset {exc.pos}"
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


# -- one decoding path: the C scanner's success, else the json package's answer ----------------------------

# Texts the C scanner fails on in every way it can: truncated, a raw control character in a string, a bad
# escape, a trailing comma (3.13 reports it itself, older ones leave it to the caller), nothing at all.
MALFORMED = ['{"a":1', '{"a":"x\x01"}', '{"a":"\\q"}', "[1,]", '{"a":}', "", "\ufeff{}", "{} x"]


def _answer(decode: Callable[[], object]) -> object:
    try:
        return ("ok", decode())
    except (PluginError, ValueError) as exc:  # loads raises json's ValueError
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("text", [*MALFORMED, '{"a":[1,{"b":null}]}', " 3 "])
@pytest.mark.parametrize("raised", [SystemError, KeyError, StopIteration(0), RecursionError])
def test_any_failure_of_the_fast_path_is_answered_by_the_json_package(
    monkeypatch: pytest.MonkeyPatch, text: str, raised: BaseException | type[BaseException]
) -> None:
    data = text.encode()
    expected = [
        _answer(lambda: jsonio.loads_request(data)),
        _answer(lambda: jsonio.load_document(data)),
        _answer(lambda: jsonio.loads(data)),
    ]

    def broken(text: str, start: int) -> tuple[object, int]:
        raise raised

    # Every reader's scanner fails, as the C scanner does on 3.10/3.11 without json.decoder imported.
    for reader in (jsonio._PLAIN, jsonio._REQUEST, jsonio._DOCUMENT):
        monkeypatch.setattr(reader, "scan", broken)
    got = [
        _answer(lambda: jsonio.loads_request(data)),
        _answer(lambda: jsonio.load_document(data)),
        _answer(lambda: jsonio.loads(data)),
    ]
    assert got == expected


def test_loads_reads_nesting_too_deep_as_a_value_error() -> None:
    # Its callers (etcd's replies, the config's JSON) catch ValueError: no other error may leave it.
    with pytest.raises(ValueError, match="nested too deeply"):
        jsonio.loads("[" * 100000 + "]" * 100000)


# A fresh interpreter that has not imported json: what every call of an executable is. In-process tests
# cannot see the bug this pins (pytest imported json long ago): the C scanner's error path on 3.10 and 3.11
# raised SystemError there, which no caller caught.
_FRESH = """
import sys
sys.path.insert(0, sys.argv[1])
from resource_extend.formats import jsonio
from resource_extend.errors import PluginError
assert "json" not in sys.modules and "json.decoder" not in sys.modules, "json is imported already"
texts = [t.encode() for t in sys.argv[2:]]
for decode in (jsonio.loads_request, jsonio.load_document):
    for data in texts:
        try:
            decode(data)
            print("ok")
        except PluginError as exc:
            print("refused", exc)
for data in texts:
    try:
        jsonio.loads(data)
        print("ok")
    except ValueError as exc:
        print("ValueError")
"""


def _interpreters() -> list[str]:
    """This interpreter and every other CPython 3.9+ on the machine (each runs the built executables)."""
    found = {sys.executable}
    found.update(filter(None, (shutil.which(f"python3.{minor}") for minor in range(9, 20))))
    found.update(str(p) for p in Path.home().glob(".pyenv/versions/3.*/bin/python3"))
    usable: dict[str, str] = {}  # one path per version
    for path in sorted(found):
        try:
            done = subprocess.run(
                [path, "-I", "-c", "import sys; print(sys.version_info >= (3, 9), sys.version)"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        usable.setdefault(done.stdout, path)
    return sorted(path for output, path in usable.items() if output.startswith("True "))


@pytest.mark.parametrize("python", _interpreters())
def test_malformed_json_is_refused_cleanly_by_an_interpreter_without_json_imported(python: str) -> None:
    done = subprocess.run(
        [python, "-I", "-c", _FRESH, str(ROOT), *MALFORMED], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 * len(MALFORMED)
    stdin, records, loads = lines[: len(MALFORMED)], lines[len(MALFORMED) : -len(MALFORMED)], lines[-len(MALFORMED) :]
    # The request reads only its first value: "{} x" is {}. Everything else is refused, saying where.
    assert stdin[-1] == "ok" and all(line.startswith("refused decode plugin input: ") for line in stdin[:-1]), stdin
    assert all(line.startswith("refused invalid JSON: ") for line in records), records
    # loads is json.loads: it reads bytes after a BOM.
    assert loads == ["ok" if "\ufeff" in text else "ValueError" for text in MALFORMED]
    assert not any("SystemError" in line for line in lines)


# -- records read as Go reads them (decision 17) ------------------------------------------------------------

RECORD = '{"capacity":{"prod_count_map":{"a":1}},"usage":{"prod_count_map":{}}}'


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\xef\xbb\xbf" + RECORD.encode(), "invalid JSON: starts with a UTF-8 byte-order mark"),
        (RECORD.encode("utf-16"), "invalid JSON: not UTF-8 (byte 0xff at offset 0)"),
        (RECORD.encode("utf-16-le"), "invalid JSON: Expecting property name enclosed in double quotes at offset 1"),
        (RECORD.encode("utf-32"), "invalid JSON: not UTF-8 (byte 0xff at offset 0)"),
        (RECORD.replace('"a"', '"a\xff"').encode("latin-1"), "invalid JSON: not UTF-8 (byte 0xff at offset 33)"),
        (b'{"capacity":null,"x":NaN}', "invalid JSON: invalid number literal NaN"),
        (RECORD.encode() + b"{}", "invalid JSON: Extra data at offset 69"),
        (b"[" * 100000 + b"]" * 100000, "invalid JSON: nested too deeply"),
    ],
)
def test_a_record_go_cannot_read_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(PluginError) as refused:
        jsonio.load_document(data)
    assert str(refused.value) == why


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-32"])
def test_json_loads_would_read_the_encodings_go_refuses(encoding: str) -> None:
    # Why records do not go through json.loads: it reads these bytes as the record.
    import json

    data = RECORD.encode(encoding)
    assert json.loads(data) == json.loads(RECORD)
    with pytest.raises(PluginError, match="invalid JSON"):
        jsonio.load_document(data)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a":"\\ud800"}', {"a": "\ufffd"}),
        (b'{"\\udfff\\ud800":[1,"\\uDC80"]}', {"\ufffd\ufffd": [1, "\ufffd"]}),
        (b'{"a":"\\ud83d\\ude00 \\\\ud800"}', {"a": "\U0001f600 \\ud800"}),
    ],
)
def test_a_lone_surrogate_escape_in_a_record_reads_as_the_replacement_character(raw: bytes, expected: object) -> None:
    doc = jsonio.load_document(raw)
    assert doc == expected
    assert jsonio.dump_record(doc).decode("utf-8")  # writable again: every string is UTF-8


# -- one wording on every interpreter (the executables run under each: tests/test_trust_every_python.py) ----


@pytest.mark.parametrize(
    ("text", "pos", "kind"),
    [('{"a":1,}', 6, "object"), ('{"a":1 , \n }', 7, "object"), ("[1,]", 2, "array"), ("[1,\t]", 2, "array")],
)
def test_a_trailing_comma_reads_in_the_words_of_3_9_to_3_12_whatever_the_interpreter(
    text: str, pos: int, kind: str
) -> None:
    import json

    # What 3.13's json raises (at the comma); the others' text is the answer on every interpreter.
    raised = json.JSONDecodeError(f"Illegal trailing comma before end of {kind}", text, pos)
    older = {"object": "Expecting property name enclosed in double quotes", "array": "Expecting value"}[kind]
    assert jsonio.reason(raised) == f"{older} at offset {len(text) - 1}"
    with pytest.raises(PluginError) as caught:
        jsonio.load_document(text.encode())
    assert str(caught.value) == f"invalid JSON: {older} at offset {len(text) - 1}"


def test_the_int_conversion_limit_reads_in_the_same_words_on_3_9_and_3_10() -> None:
    tail = " for integer string conversion: value has 5001 digits; use sys.set_int_max_str_digits() to increase"
    tail += " the limit"
    newer = f"Exceeds the limit (4300 digits){tail}"
    assert jsonio.reason(ValueError(f"Exceeds the limit (4300){tail}")) == newer
    assert jsonio.reason(ValueError(newer)) == newer
    with pytest.raises(PluginError) as caught:
        jsonio.load_document(b'{"a":1' + b"0" * 5000 + b"}")
    assert str(caught.value) == f"invalid JSON: {newer}"


@pytest.mark.parametrize("depth", [jsonio.MOST_NESTED, jsonio.MOST_NESTED + 1, 1200, 5000])
def test_nesting_past_most_nested_is_refused_by_every_reading_whatever_the_interpreter_decodes(depth: int) -> None:
    import json

    # 3.12 and 3.13 decode 1200 and 5000 levels where 3.9-3.11 raise RecursionError: one depth for all.
    inner = "[" * (depth - 1) + "]" * (depth - 1)
    readings: list[Callable[[], object]] = [
        lambda: jsonio.loads_request(f'{{"x":{inner}}}'.encode()),
        lambda: jsonio.load_document(f'{{"x":{inner}}}'.encode()),
        lambda: jsonio.loads(f'{{"x":{inner}}}'),
        lambda: jsonio.loads(f'{{"x":{inner}}}'.encode()),
    ]
    for read in readings:
        if depth <= jsonio.MOST_NESTED:
            assert read() == {"x": json.loads(inner)}
        else:
            with pytest.raises((PluginError, ValueError), match="nested too deeply"):
                read()


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(st.integers(jsonio.MOST_NESTED - 3, jsonio.MOST_NESTED + 3), st.lists(st.sampled_from("[{"), max_size=8))
def test_a_text_is_refused_exactly_when_it_nests_past_most_nested_short_texts_skipping_the_count(
    depth: int, shape: list[str]
) -> None:
    # The tightest texts of a depth: a text of at most 2 * MOST_NESTED characters is never counted, and
    # no text that short nests past MOST_NESTED; one bracket more nests past it and is refused.
    import json

    opening = ("[" * depth)[: depth - len(shape)] + "".join(shape) if len(shape) < depth else "[" * depth
    inner = "0"
    for bracket in reversed(opening):
        inner = f"[{inner}]" if bracket == "[" else f'{{"k":{inner}}}'
    value = json.loads(inner)
    assert _depth(value) == depth
    if depth <= jsonio.MOST_NESTED:
        assert jsonio.loads(inner) == value
        assert jsonio.load_document(inner.encode()) == value
    else:
        with pytest.raises(ValueError, match="nested too deeply"):
            jsonio.loads(inner)
        with pytest.raises(PluginError, match="nested too deeply"):
            jsonio.load_document(inner.encode())


def test_many_brackets_that_nest_shallowly_read() -> None:
    text = '{"nodes":[' + ",".join(['{"a":[1]}'] * 5000) + "]}"
    assert len(jsonio.loads_request(text.encode())["nodes"]) == 5000
    assert len(jsonio.loads(text)["nodes"]) == 5000


@given(st.lists(st.text(alphabet=st.sampled_from('ab<>&\u2028\u2029\\"é'), max_size=6), max_size=5))
def test_a_rendered_answer_is_escaped_exactly_when_it_holds_a_character_go_escapes(texts: list[str]) -> None:
    rendered = jsonio.Rendered()
    rendered.items += [jsonio.compact(text) for text in texts]
    assert jsonio.dumps(rendered) == rendered.text().translate(jsonio._GO_ESCAPES)
    assert jsonio.dumps(rendered) == jsonio.dumps(texts)


@given(st.text(alphabet=st.sampled_from('ab\\ud800\\uDC00\\u0041"'), max_size=40))
def test_a_record_reads_its_surrogate_escapes_alike_whether_or_not_it_holds_other_backslashes(body: str) -> None:
    import json

    data = json.dumps({"k": body}).encode()  # every backslash of ``body`` escaped: any text as a string
    raw = b'{"k":"' + body.encode() + b'"}'  # ``body``'s escapes as escapes: read, or refused, as json reads it
    assert jsonio.load_document(data) == {"k": body}
    try:
        expected: object = json.loads(raw)
    except ValueError:
        return
    got = jsonio.load_document(raw)
    assert got == {"k": "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in expected["k"])}  # type: ignore[index]
