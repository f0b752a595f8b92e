"""JSON in and out, matching what the reference's Go encoder writes.

Records in etcd are shared with the Go implementation, so they are written the way Go marshals them:
no spaces, UTF-8 as is, and ``<``, ``>``, ``&``, U+2028, U+2029 escaped. Floats that hold an integer are
written without a fraction (Go writes ``1``, Python would write ``1.0``).

A text the fast paths cannot take falls to the json package, imported inside the one function that reads
such a text (``json`` imports ``re``): a call whose JSON is plain never loads it.
"""

from __future__ import annotations

# The C halves of the json package, used directly: ``json`` itself imports ``re`` (and ``re`` ``enum`` and
# ``functools``), several milliseconds that every call would pay for a parser it never uses. What follows is
# exactly what json.dumps/json.loads do with these options; tests compare the two.
from _json import encode_basestring, make_encoder, make_scanner

from resource_extend.errors import PluginError
from resource_extend.formats.decoding import json_kind

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
    checks (bigdocs.representatives): the others differ from it only in the strings and ints filled in.
    An item may hold several rows joined by ``,`` (one node's), as ``text`` would join them. ``parts`` is
    the renderer's, for the fixed texts it writes once per answer rather than once per row.
    """

    __slots__ = ("items", "parts", "samples")

    def __init__(self) -> None:
        self.items: list[str] = []
        self.samples: dict[str, str] = {}
        self.parts: dict[str, tuple[str, ...]] = {}

    def text(self) -> str:
        return "[" + ",".join(self.items) + "]"


def dumps(value: Any) -> str:
    """Compact JSON with Go's escaping; keys keep the order the caller built them in."""
    if type(value) is Rendered:
        return _go_escaped(value.text())
    text = compact(value)
    # Only an integral float below 1e21 reads differently in Go, and Python writes every such float with
    # ".0" (below 1e16) or an exponent "e+16" to "e+20". Text without those has no float to rewrite, so the
    # walk over the whole value (most of the cost of a 1000-node answer) runs only when one may be there.
    if ".0" in text or "e+1" in text or "e+2" in text:
        text = compact(_go_numbers(value))
    return _go_escaped(text)


def _go_escaped(text: str) -> str:
    """``text`` with Go's escapes. The characters only occur inside JSON strings, so a plain translation is
    exact; five searches (C, ~20 µs for a 500 KB answer) spare the translation (~350 µs) when none is there."""
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        return text.translate(_GO_ESCAPES)
    return text


_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _plain_constant(name: str) -> float:
    return _CONSTANTS[name]


_WHITESPACE = " \t\n\r"


class _Reader:
    """One reading of JSON text (its number and constant hooks), fast when the text is good.

    The C scanner is the fast path, and only its success is trusted. How it fails is private to each
    interpreter: on 3.10 and 3.11 its error path looks ``json.decoder`` up in ``sys.modules`` without
    importing it, so with the json package not yet imported (every call of an executable) a truncated
    text, a raw control character or a bad escape raise ``SystemError``; 3.13 reports a trailing comma
    that older ones leave to the caller. So any failure of the fast path, whatever it raises, reads the
    text again with the json package and its decoder configured the same way, and that decoder's error is
    the answer: a ``ValueError`` (json's ``JSONDecodeError`` with ``msg`` and ``pos``, or a hook's own),
    or ``RecursionError``. Importing json first also makes the C scanner raise its own errors correctly.
    """

    # What the C scanner reads off a decoder (json.JSONDecoder's attributes), and the scanner made from them.
    __slots__ = ("memo", "object_hook", "object_pairs_hook", "parse_constant", "parse_float", "parse_int", "scan",
                 "strict")  # fmt: skip

    def __init__(
        self,
        parse_int: Callable[[str], Any] = int,
        parse_float: Callable[[str], Any] = float,
        parse_constant: Callable[[str], Any] | None = None,
        object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    ) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_int = parse_int
        self.parse_float = parse_float
        self.parse_constant = parse_constant or _plain_constant
        self.memo: dict[str, str] = {}
        # typeshed types the argument as a JSONDecoder; the C scanner reads only the attributes above off it.
        self.scan = make_scanner(self)  # type: ignore[arg-type]

    def read(self, text: str, whole: bool) -> Any:
        """The first JSON value of ``text`` (leading whitespace skipped); with ``whole``, the only one."""
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = self.scan(text, start)
            if not whole or end == len(text) or not text[end:].strip(_WHITESPACE):
                return value
        except Exception:  # whatever the fast path raised, the json package answers
            pass
        return read_with_json_package(self, text, start, whole)


_PLAIN = _Reader()


def loads(
    data: str | bytes, parse_float: Callable[[str], Any] = float, parse_constant: Callable[[str], Any] | None = None
) -> Any:
    """``json.loads(data, parse_float=..., parse_constant=...)``, exactly, except that a text nested more
    than ``MOST_NESTED`` levels deep is a ``ValueError`` too: every error is one.

    UTF-8 text holding one value reads through the C scanner alone; anything else (another encoding, a BOM,
    malformed JSON, or a failure of the scanner itself) is handed to the json package, so its value or its
    error is json's. (etcd's replies and the config's JSON read so; records and stdin read as Go reads
    them: ``load_document``, ``loads_request``.)
    """
    reader = _PLAIN if parse_float is float and parse_constant is None else _Reader(int, parse_float, parse_constant)
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        start = len(text) - len(text.lstrip(_WHITESPACE))
        value, end = reader.scan(text, start)
        if end == len(text) or not text[end:].strip(_WHITESPACE):
            return _not_too_deep(text, value)
    except Exception:  # as in _Reader.read: only the fast path's success is trusted
        pass
    import json

    try:
        value = json.loads(data, parse_float=parse_float, parse_constant=parse_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    return _not_too_deep(data, value)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        for name, value in pairs:
            if found[name] != value:
                raise ValueError(f"the key {name!r} twice, with different values")
    return found


_UNIQUE: _Reader | None = None


def loads_unique(data: bytes) -> Any:
    """``loads``, except that an object naming one key twice with different values is a ``ValueError``:
    the json package keeps the last, so ``{"succeeded": true, "succeeded": false}`` would read as whichever
    came second. For the answers a write is settled by; others read the usual way."""
    global _UNIQUE
    if _UNIQUE is None:
        _UNIQUE = _Reader(object_pairs_hook=_unique)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    return _not_too_deep(text, _UNIQUE.read(text, whole=True))


# How deep the decoder gets before a RecursionError depends on the interpreter (about 990 levels on 3.9 to
# 3.11, 1100 to 1500 on 3.12, past 5000 on 3.13), so every reading refuses nesting past this one depth,
# below all of them: a text reads or is refused alike on every python3. (PyYAML stops near 490 on each.)
MOST_NESTED = 500


def _not_too_deep(text: str | bytes, value: Any) -> Any:
    """``value``, read from ``text``, unless it nests lists and objects more than MOST_NESTED deep (a
    ValueError). Only a text holding that many brackets can: each opens and closes, so a text of at most
    twice that many characters never does (a stored record, ~650 of them, pays no count: ~1.4 µs each,
    ~1.4 ms of a 1000-node get-metrics), and a longer one pays two counts."""
    if len(text) <= 2 * MOST_NESTED:
        return value
    brackets = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if brackets <= MOST_NESTED:
        return value
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(MOST_NESTED):  # level k+1 holds the containers nested k deep in the top one
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return value
    raise ValueError("nested too deeply")


def _go_numbers(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return value


# An empty (or all-whitespace) stdin, in Go's words; the command line adds what goes there.
EMPTY_INPUT = "decode plugin input: EOF"


def loads_request(data: bytes) -> dict[str, Any]:
    """Decode the one JSON value on stdin into a request object (``null`` reads as no fields).

    Like the reference's streaming decoder, only the first complete value counts; what follows it is
    ignored. Invalid UTF-8 inside strings becomes U+FFFD, and so does a ``\\u`` escape of a lone
    surrogate, as Go's decoder does (decision 11): no string a verb sees can fail to encode as UTF-8.
    """
    text = data.decode("utf-8", errors="replace")
    stripped = text.lstrip(_WHITESPACE)
    if not stripped:
        raise PluginError(EMPTY_INPUT)
    value = _go_value(_REQUEST, stripped, False, "decode plugin input")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PluginError(f"decode plugin input: json: cannot unmarshal {json_kind(value)} into a request object")
    return value


def load_document(data: bytes) -> Any:
    """Bytes stored by another writer or sent inside a request, read as Go's ``json.Unmarshal`` reads them
    (decision 17): one JSON value in UTF-8 without a byte-order mark (so UTF-16 and UTF-32 are refused
    too), no NaN or Infinity, nothing after it, a lone surrogate escape read as U+FFFD. Anything else is a
    PluginError ``invalid JSON: …``, which the caller prefixes with where the bytes came from."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PluginError(f"invalid JSON: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    if text.startswith("\ufeff"):  # Go does not skip it; Python's json.loads of bytes would
        raise PluginError("invalid JSON: starts with a UTF-8 byte-order mark")
    return _go_value(_DOCUMENT, text, True, "invalid JSON")


def _go_value(reader: _Reader, text: str, whole: bool, what: str) -> Any:
    """``reader``'s value of ``text`` with lone surrogates as U+FFFD, or a PluginError ``<what>: <why>``."""
    try:
        value = _not_too_deep(text, reader.read(text, whole))
        # Only a text that spells such an escape pays the walk; most hold no backslash at all, and a search
        # for one character is a memchr (~40 ns for a record), for two ~0.4 µs each.
        if "\\" in text and ("\\ud" in text or "\\uD" in text):
            value = replace_surrogates(value)
    except RecursionError:  # deeper than this interpreter reads: past MOST_NESTED on every one
        raise PluginError(f"{what}: nested too deeply") from None
    except ValueError as exc:  # _not_too_deep's "nested too deeply" among them
        raise PluginError(f"{what}: {reason(exc)}") from None
    return value


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, any lone surrogate (say, from a record another writer stored) as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return no_surrogates(text).encode("utf-8")


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


_REQUEST = _Reader(parse_int=_go_double_int, parse_constant=_reject_constant)
# Records are the reference's structs: integers are int64 fields, read exactly (and range-checked by the
# record's readers), never through a double.
_DOCUMENT = _Reader(parse_constant=_reject_constant)


def dump_record(doc: Any) -> bytes:
    """A record's bytes as the Go reference marshals them; a lone surrogate is not storable."""
    try:
        return dumps(doc).encode()
    except UnicodeEncodeError as exc:  # a lone surrogate: not UTF-8, so not storable
        bad = exc.object[exc.start : exc.end]
        raise PluginError(f"record holds a string that is not valid UTF-8 ({bad!r})") from None


def read_with_json_package(reader: _Reader, text: str, start: int, whole: bool) -> Any:
    """``reader``'s reading of a text its C scanner could not read: the json package's, configured alike
    (jsonio._Reader)."""
    import json  # only a text the fast path could not read pays for the package (and its ``re``)

    decoder = json.JSONDecoder(
        parse_int=reader.parse_int,
        parse_float=reader.parse_float,
        parse_constant=reader.parse_constant,
        object_pairs_hook=reader.object_pairs_hook,
    )
    return decoder.decode(text) if whole else decoder.raw_decode(text, start)[0]


_TRAILING_COMMA = "Illegal trailing comma before end of "


def reason(exc: ValueError) -> str:
    """Why decoding failed, in the same words on every interpreter 3.9-3.13: json's ``<msg> at offset
    <pos>``, or a hook's text (NaN, more digits than Python converts to an int).

    Where interpreters word a refusal differently, the words of most (and of 3.11, the build's) are kept:
    3.13's json reports a trailing comma itself, at the comma, which the others read as the next key or
    value missing where the closing bracket stands; 3.9 and 3.10 say ``Exceeds the limit (4300)`` where
    the others say ``(4300 digits)``. A message that differed by interpreter would answer core differently
    on another host (tests/test_trust_every_python.py holds every interpreter to the default python3's).
    """
    msg, pos, doc = getattr(exc, "msg", None), getattr(exc, "pos", None), getattr(exc, "doc", None)
    if not (isinstance(msg, str) and isinstance(pos, int)):  # a hook's, or int()'s own
        return _conversion_limit(str(exc))
    if msg.startswith(_TRAILING_COMMA) and isinstance(doc, str):
        after = doc[pos + 1 :]
        pos = len(doc) - len(after.lstrip(_WHITESPACE))
        msg = "Expecting property name enclosed in double quotes" if msg.endswith("object") else "Expecting value"
    # json says "Invalid control character at" (its own text goes on ": line 1 column …").
    return f"{msg[:-3] if msg.endswith(' at') else msg} at offset {pos}"


def _conversion_limit(text: str) -> str:
    """int()'s refusal of a number of too many digits in 3.11's words (3.9 and 3.10 leave "digits" out)."""
    head = "Exceeds the limit ("
    if text.startswith(head):
        limit, close, rest = text[len(head) :].partition(")")
        if close and limit.isdigit():
            return f"{head}{limit} digits){rest}"
    return text


def replace_surrogates(value: Any) -> Any:
    # Python's decoder pairs valid surrogate escapes into one character and keeps a lone one as is.
    if isinstance(value, str):
        return no_surrogates(value)
    if isinstance(value, list):
        return [replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {replace_surrogates(k): replace_surrogates(v) for k, v in value.items()}
    return value


def no_surrogates(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # only surrogates fail to encode
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)
    return text
