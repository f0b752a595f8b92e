"""JSON in and out, matching what the reference's Go encoder writes.

Records in etcd are shared with the Go implementation, so they are written the way Go marshals them:
no spaces, UTF-8 as is, and ``<``, ``>``, ``&``, U+2028, U+2029 escaped. Floats that hold an integer are
written without a fraction (Go writes ``1``, Python would write ``1.0``).
"""

from __future__ import annotations

import json

from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps(value: Any) -> str:
    """Compact JSON with Go's escaping; keys keep the order the caller built them in."""
    text = json.dumps(_go_numbers(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # The characters only occur inside JSON strings, so a plain translation is exact.
    return text.translate(_GO_ESCAPES)


def _go_numbers(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return value


def loads_request(data: bytes) -> dict[str, Any]:
    """Decode the one JSON value on stdin into a request object (``null`` reads as no fields).

    Like the reference's streaming decoder, only the first complete value counts; what follows it is
    ignored. Invalid UTF-8 inside strings becomes U+FFFD, and so does a ``\\u`` escape of a lone
    surrogate, as Go's decoder does (decision 11): no string a verb sees can fail to encode as UTF-8.
    """
    text = data.decode("utf-8", errors="replace")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        raise PluginError("decode plugin input: EOF")
    try:
        value, _ = json.JSONDecoder(parse_int=_go_double_int, parse_constant=_reject_constant).raw_decode(stripped)
        if "\\ud" in stripped or "\\uD" in stripped:  # only a request that spells such an escape pays the walk
            value = _replace_surrogates(value)
    except json.JSONDecodeError as exc:
        raise PluginError(f"decode plugin input: {exc.msg} at offset {exc.pos}") from None
    except RecursionError:
        raise PluginError("decode plugin input: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise PluginError(f"decode plugin input: {exc}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
        raise PluginError(f"decode plugin input: json: cannot unmarshal {kind} into a request object")
    return value


def _replace_surrogates(value: Any) -> Any:
    # Python's decoder pairs valid surrogate escapes into one character and keeps a lone one as is.
    if isinstance(value, str):
        return _no_surrogates(value)
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, any lone surrogate (say, from a record another writer stored) as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _no_surrogates(text).encode("utf-8")


def _no_surrogates(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # only surrogates fail to encode
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)
    return text


def _go_double_int(text: str) -> int | float:
    """An integer literal as the reference holds it: a float64, re-encoded as an integer below 1e21.

    So ``9007199254740993`` reads as ``9007199254740992``; literals of 1e21 or more stay doubles (the
    reference re-encodes them in exponent form, which no integer field accepts).
    """
    exact = int(text)
    if abs(exact) <= 2**53:
        return exact
    try:
        double = float(exact)
    except OverflowError:
        raise ValueError(f"json: cannot unmarshal number {text} into Go value of type float64") from None
    return int(double) if abs(double) < 1e21 else double


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Go's decoder refuses them too.
    raise ValueError(f"invalid number literal {name}")


def load_record(data: bytes) -> Any:
    """A stored record's JSON document, or a PluginError saying why the bytes are not one."""
    try:
        return json.loads(data)
    except ValueError as exc:  # also bytes that are not UTF-8, and integers too long to convert
        raise PluginError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise PluginError("invalid JSON: nested too deeply") from None


def dump_record(doc: Any) -> bytes:
    """A record's bytes as the Go reference marshals them; a lone surrogate is not storable."""
    try:
        return dumps(doc).encode()
    except UnicodeEncodeError as exc:  # a lone surrogate: not UTF-8, so not storable
        bad = exc.object[exc.start : exc.end]
        raise PluginError(f"record holds a string that is not valid UTF-8 ({bad!r})") from None
