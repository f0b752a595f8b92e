"""base64text codes the gateway's base64 without ``binascii`` for short input: always exactly as ``binascii`` does.

Differential: ``encode`` against ``b2a_base64`` over any bytes, ``decode`` against ``a2b_base64`` over valid
base64 and over text mangled every way etcd's answer could be (bad padding, whitespace, ``=`` inside,
characters outside the alphabet, non-ASCII, any length): the same bytes, or the same error with the same
words. And the pure path is really the one taken for canonical input up to ``LONG`` bytes, so a call that
codes only that never imports ``binascii``.
"""

from __future__ import annotations

import binascii
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from resource_extend.store.etcd import base64text, gateway, gatewaybulk, messages
from resource_extend.store.etcd.base64text import LONG, LONG_TEXT
from tests.support import ROOT


def outcome(function: Callable[[Any], object], argument: object) -> tuple[object, ...]:
    try:
        return ("ok", function(argument))
    except Exception as exc:  # whatever either raises, compared
        return ("raised", type(exc), str(exc))


def b2a(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


class NoBinascii:
    """Stands in for ``binascii`` in sys.modules: any use of it fails the test."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"binascii.{name} used")


@contextmanager
def without_binascii() -> Iterator[None]:
    real = sys.modules["binascii"]
    sys.modules["binascii"] = NoBinascii()  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.modules["binascii"] = real


# Data of every size class: short (a key, a record), and around LONG, where the pure path hands over.
DATA = st.one_of(
    st.binary(max_size=64),
    st.binary(min_size=64, max_size=4096),
    st.integers(LONG - 4, LONG + 4).flatmap(lambda n: st.binary(min_size=n, max_size=n)),
)


@given(DATA)
@example(b"")
@example(b"\0")
@example(b"\xff\xff\xff")
@example(b"\0" * LONG)
@example(b"\xff" * (LONG + 1))
def test_encode_is_b2a_base64(data: bytes) -> None:
    assert base64text.encode(data) == b2a(data)


@given(DATA)
@example(b"")
@example(b"\0" * LONG)
@example(b"\xff" * (LONG + 1))
def test_decode_of_valid_base64_is_a2b_base64(data: bytes) -> None:
    text = b2a(data)
    assert base64text.decode(text) == binascii.a2b_base64(text) == data


# What a mangled answer could hold: the alphabet, padding, whitespace, URL-safe and other ASCII, control
# characters, Latin-1 and wider characters, and a surrogate.
NOISE = "=\n\r\t \x00\x0b-_.!:~*é\xff\u3000\U0001f600\ud800"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@st.composite
def mangled(draw: st.DrawFn) -> str:
    """Valid base64 of some bytes, then a few edits: insert, delete, replace, truncate or pad."""
    text = b2a(draw(st.binary(max_size=48)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(NOISE + ALPHABET[::7]))
        edit = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "pad", "unpad"]))
        if edit == "insert":
            text = text[:at] + char + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        elif edit == "replace":
            text = text[:at] + char + text[at + 1 :]
        elif edit == "truncate":
            text = text[:at]
        elif edit == "pad":
            text += "=" * draw(st.integers(1, 3))
        else:
            text = text.rstrip("=")
    return text


TEXT = st.one_of(
    mangled(),
    st.text(alphabet=ALPHABET + "=", max_size=24),
    st.text(alphabet=ALPHABET + NOISE, max_size=24),
    st.text(max_size=16),
)


@given(TEXT)
@example("")
@example("=")
@example("==")
@example("====")
@example("QQ")  # no padding
@example("QQ=")  # too little
@example("QQ===")  # too much
@example("Q===")
@example("QR==")  # bits the padding leaves over set: not canonical, binascii drops them
@example("QUJ=")
@example("QUI=")
@example("QQ==QQ==")  # '=' inside
@example("Q=Q=")
@example("=QQQ")
@example(" QUJD")
@example("QUJD\n")
@example("QU\nJD")
@example("QUJDé===")
@example("QUJ\U0001f600")
@example("QU-_")  # URL-safe alphabet
def test_decode_of_any_text_is_a2b_base64_or_its_error(text: str) -> None:
    assert outcome(base64text.decode, text) == outcome(binascii.a2b_base64, text)


@pytest.mark.parametrize("value", [None, 5, 1.5, [], {}, b"QUJD", bytearray(b"QUJD"), b"\xff"])
def test_decode_of_what_is_not_a_string_is_a2b_base64_or_its_error(value: object) -> None:
    # A garbled answer whose "key" or "value" is a JSON number, array or null (bytes: binascii's own case).
    assert outcome(base64text.decode, value) == outcome(binascii.a2b_base64, value)


@pytest.mark.parametrize("value", [None, "QUJD", 5, bytearray(b"abc"), memoryview(b"abcd")])
def test_encode_of_what_is_not_bytes_is_b2a_base64_or_its_error(value: object) -> None:
    assert outcome(base64text.encode, value) == outcome(b2a, value)


@given(st.binary(max_size=LONG))
@example(b"")
@example(b"\xff" * LONG)
def test_short_data_and_its_canonical_text_are_coded_without_binascii(data: bytes) -> None:
    text = b2a(data)
    assert len(text) <= LONG_TEXT
    with without_binascii():
        assert base64text.encode(data) == text
        assert base64text.decode(text) == data


@pytest.mark.parametrize(
    "use",
    [
        lambda: base64text.encode(b"\x01" * (LONG + 1)),
        lambda: base64text.decode("QUJD" * (LONG_TEXT // 4 + 1)),
        lambda: base64text.decode("QR=="),
        lambda: base64text.decode("QUJD\n"),
    ],
    ids=["long data", "long text", "not canonical", "whitespace"],
)
def test_long_input_and_text_the_strict_path_refuses_go_to_binascii(use: Callable[[], object]) -> None:
    with without_binascii(), pytest.raises(AssertionError, match="binascii"):
        use()


def test_the_module_and_a_short_round_trip_import_no_binascii() -> None:
    # A fresh interpreter: this one has binascii loaded already (hypothesis, pytest).
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from resource_extend.store.etcd import base64text, gateway\n"
        "key = b'/prefix/resource/storage/n1'\n"
        "assert base64text.decode(base64text.encode(key)) == key\n"
        "print('binascii' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


# The gateway reads a 200 whose "key" or "value" is not base64 (or not a string) as a bad reply: what
# decode raises for it must be among what the gateway catches there.
BAD_FIELDS = ["QQ=", "Q", "QUJD\x00é", "é", None, 5, ["QUJD"]]


@pytest.mark.parametrize("field", ["key", "value"])
@pytest.mark.parametrize("bad", BAD_FIELDS)
@pytest.mark.parametrize("read", ["one key", "a few keys", "a span"])
def test_an_answer_whose_base64_does_not_read_is_a_bad_reply(read: str, field: str, bad: object) -> None:
    key = "/p/resource/gpu/n1"
    kv = {"key": b2a(key.encode()), "value": b2a(b"{}"), "mod_revision": "3", field: bad}
    reply = {"header": {}, "kvs": [kv], "count": "1"}
    parse: Callable[[Any], object]
    answer: object
    if read == "one key":
        parse, answer = gateway._single(key), reply
    elif read == "a few keys":
        parse, answer = (
            gatewaybulk._aligned([key], base64text.decode),
            {"header": {}, "responses": [{"response_range": reply}]},
        )
    else:
        parse, answer = gatewaybulk._from_span([key], base64text.for_many()[1]), reply
    with pytest.raises(messages.BAD_REPLY):
        parse(answer)
