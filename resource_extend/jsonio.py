"""JSON in and out, matching what the reference's Go encoder writes.

Records in etcd are shared with the Go implementation, so they are written the way Go marshals them:
no spaces, UTF-8 as is, and ``<``, ``>``, ``&``, U+2028, U+2029 escaped. Floats that hold an integer are
written without a fraction (Go writes ``1``, Python would write ``1.0``).
"""

from __future__ import annotations

# The C halves of the json package, used directly: ``json`` itself imports ``re`` (and ``re`` ``enum`` and
# ``functools``), several milliseconds that every call would pay for a parser it never uses. What follows is
# exactly what json.dumps/json.loads do with these options; tests compare the two.
from _json import encode_basestring, make_encoder, make_scanner

from resource_extend.decoding import json_kind
from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
_compact = make_encoder(None, _unserializable, encode_basestring, None, ":", ",", False, False, False)


def compact(value: Any) -> str:
    """Compact JSON, UTF-8 characters as they are, no NaN or infinity (``ValueError``)."""
    return "".join(_compact(value, 0))


class Rendered:
    """A JSON array written while it was built, item by item: an answer too big to build as values first
    and then encode (get-metrics over 1000 nodes: 4000 rows, ~500 KB).

    ``items`` are the items' compact JSON texts, strings as ``encode_basestring`` writes them (``dumps``
    adds Go's escapes to the whole). Every item is written by one of a few templates from strings and
    ints; ``samples`` holds each template's first item, which is what the response check parses and
    checks (validation.representatives): the others differ from it only in the strings and ints filled in.
    """

    __slots__ = ("items", "samples")

    def __init__(self) -> None:
        self.items: list[str] = []
        self.samples: dict[str, str] = {}

    def text(self) -> str:
        return "[" + ",".join(self.items) + "]"


def dumps(value: Any) -> str:
    """Compact JSON with Go's escaping; keys keep the order the caller built them in."""
    if type(value) is Rendered:
        return value.text().translate(_GO_ESCAPES)
    text = compact(value)
    # Only an integral float below 1e21 reads differently in Go, and Python writes every such float with
    # ".0" (below 1e16) or an exponent "e+16" to "e+20". Text without those has no float to rewrite, so the
    # walk over the whole value (most of the cost of a 1000-node answer) runs only when one may be there.
    if ".0" in text or "e+1" in text or "e+2" in text:
        text = compact(_go_numbers(value))
    # The characters only occur inside JSON strings, so a plain translation is exact.
    return text.translate(_GO_ESCAPES)


class _Options:
    """What the C scanner reads off a decoder: json.JSONDecoder's attributes."""

    __slots__ = ("memo", "object_hook", "object_pairs_hook", "parse_constant", "parse_float", "parse_int", "strict")

    def __init__(
        self,
        parse_int: Callable[[str], Any] = int,
        parse_float: Callable[[str], Any] = float,
        parse_constant: Callable[[str], Any] | None = None,
    ) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_int = parse_int
        self.parse_float = parse_float
        self.parse_constant = parse_constant or _plain_constant
        self.memo: dict[str, str] = {}


_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _plain_constant(name: str) -> float:
    return _CONSTANTS[name]


class DecodeError(ValueError):
    """json.JSONDecodeError's message and offset, without importing the json package to build one."""

    def __init__(self, msg: str, pos: int) -> None:
        super().__init__(f"{msg}: char {pos}")
        self.msg = msg
        self.pos = pos


_WHITESPACE = " \t\n\r"


def scanner(
    parse_int: Callable[[str], Any] = int,
    parse_float: Callable[[str], Any] = float,
    parse_constant: Callable[[str], Any] | None = None,
) -> Callable[[str], tuple[Any, int]]:
    """A raw_decode: the first JSON value of a text (leading whitespace skipped) and where it ends.

    Errors are ``DecodeError``, or the json package's ``JSONDecodeError`` that the C scanner raises for
    malformed input past the first character (both carry ``msg`` and ``pos``), or ``RecursionError``.
    """
    # typeshed types the argument as a JSONDecoder; the C scanner reads only these attributes off it.
    scan = make_scanner(_Options(parse_int, parse_float, parse_constant))  # type: ignore[arg-type]

    def raw_decode(text: str) -> tuple[Any, int]:
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            return scan(text, start)
        except StopIteration as stop:
            raise DecodeError("Expecting value", stop.value) from None

    return raw_decode


_plain_scan = scanner()


def loads(
    data: str | bytes, parse_float: Callable[[str], Any] = float, parse_constant: Callable[[str], Any] | None = None
) -> Any:
    """``json.loads(data, parse_float=..., parse_constant=...)``, exactly.

    UTF-8 text holding one value reads through the C scanner alone; anything else (another encoding, a BOM,
    surrogates, malformed JSON) is handed to the json package itself, so its value or its error is json's.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        scan = (
            _plain_scan
            if parse_float is float and parse_constant is None
            else scanner(int, parse_float, parse_constant)
        )
        value, end = scan(text)
        if not text[end:].strip(_WHITESPACE):
            return value
    except (ValueError, RecursionError):
        pass
    import json

    return json.loads(data, parse_float=parse_float, parse_constant=parse_constant)


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
        value, _ = _request_scan(stripped)
        if "\\ud" in stripped or "\\uD" in stripped:  # only a request that spells such an escape pays the walk
            value = _replace_surrogates(value)
    except RecursionError:
        raise PluginError("decode plugin input: nested too deeply") from None
    except ValueError as exc:
        if hasattr(exc, "msg") and hasattr(exc, "pos"):  # DecodeError, or the C scanner's JSONDecodeError
            raise PluginError(f"decode plugin input: {exc.msg} at offset {exc.pos}") from None
        raise PluginError(f"decode plugin input: {exc}") from None  # e.g. more digits than Python converts
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PluginError(f"decode plugin input: json: cannot unmarshal {json_kind(value)} into a request object")
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


_request_scan = scanner(parse_int=_go_double_int, parse_constant=_reject_constant)


def load_record(data: bytes) -> Any:
    """A stored record's JSON document, or a PluginError saying why the bytes are not one."""
    try:
        return loads(data)
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
