"""JSON text jsonio's fast paths could not read or write: the json package's reading of a text the C scanner
failed on, the words of a refusal, and lone surrogates. jsonio imports this module only then, so a call
whose JSON is plain never loads it.
"""

from __future__ import annotations

from resource_extend.jsonio import _WHITESPACE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.jsonio import _Reader


def read_with_json_package(reader: _Reader, text: str, start: int, whole: bool) -> Any:
    """``reader``'s reading of a text its C scanner could not read: the json package's, configured alike
    (jsonio._Reader)."""
    import json  # only a text the fast path could not read pays for the package (and its ``re``)

    decoder = json.JSONDecoder(
        parse_int=reader.parse_int, parse_float=reader.parse_float, parse_constant=reader.parse_constant
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
