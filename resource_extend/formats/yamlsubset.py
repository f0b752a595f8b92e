"""A parser for a deliberately small YAML subset, so a call need not import PyYAML (~35 ms here).

The subset is chosen so that exactness can be checked by reading it, not only by testing it:

* alphabet: printable ASCII (0x20-0x7E) and ``\\n`` only. No tabs, no ``\\r``, no control characters,
  nothing non-ASCII: every question about Unicode spaces and line breaks (NBSP, U+3000, NEL, U+2028...)
  is answered by refusing the file;
* block mappings whose keys are plain words (a letter or ``_``, then letters, digits, ``_ . -``; never a
  word PyYAML reads as a bool or null), nested by spaces; a key's value is inline, a nested block, or
  a block sequence at the key's own indentation;
* block sequences of inline values (no nested collections, no empty items);
* inline values: single-quoted scalars (``''`` as the only escape), double-quoted scalars without
  backslashes, flow sequences ``[a, 'b', 3]`` of plain words and quoted scalars, and single-line plain
  scalars; a comment after any of them needs a space before ``#``;
* plain scalars resolve exactly as PyYAML's YAML 1.1 resolver does for the forms kept (null ``~ null``,
  bools ``true/yes/on/...``, decimal ints, ``digits.digits`` floats, strings); any other implicit type
  (hex, octal, binary, ``1_000``, sexagesimal, exponents, ``.inf``, timestamps, merge, ``=``) is refused,
  whatever its value would be, because its resolver regex (copied from PyYAML) matches.

Everything else raises ``Unsupported`` and the caller hands the file to PyYAML. JSON files (``{`` first)
take a strict ``json.loads`` path with the same alphabet and only the number forms both read alike
(PyYAML's implicit-type regular expression, and ``re``, is compiled only when a scalar needs it).
tests/unit/formats/test_yamlsubset.py checks every accepted file against ``yaml.safe_load`` on generated input.
"""

from __future__ import annotations

from resource_extend.formats import jsonio
from resource_extend.formats.decoding import ascii_digits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from typing import Any


class Unsupported(Exception):
    """The text uses YAML beyond this subset; parse it with PyYAML instead."""


# The character classes of the grammar are sets, not regular expressions: ``re`` (with the ``enum`` and
# ``functools`` it imports) would cost every call more than reading the whole file does.
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
_KEY_START = _LETTERS | {"_"}
_KEY_REST = _KEY_START | _DIGITS | frozenset(".-")
# A flow item that is a plain scalar: no quotes, spaces, flow indicators or '#'; no ':' at its end.
_FLOW_START = _LETTERS | _DIGITS | frozenset("_/+-")
_FLOW_END = _FLOW_START | frozenset(".=@%~")
_FLOW_MIDDLE = _FLOW_END | {":"}
_PLAIN_START = _LETTERS | _DIGITS | frozenset("_/")
_NULL = {"~", "null", "Null", "NULL"}
_BOOL = {
    **dict.fromkeys(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"), False),
}
# Every character any alternative of IMPLICIT (PyYAML's implicit resolvers) can match (with the
# words of _BOOL and _NULL, which never get that far): a scalar with a character outside it cannot match,
# and needs no regular expression.
_IMPLICIT_CHARS = _DIGITS | frozenset("-+_.:eEbxabcdefABCDEFinfINFaATtZ \t<=~ulLUyYsSoOrR")


def _is_implicit(text: str) -> bool:
    if not set(text) <= _IMPLICIT_CHARS:
        return False
    return implicit(text)


def _printable_ascii(text: str) -> bool:
    """Printable ASCII (0x20-0x7E) and \\n, nothing else."""
    return text.isascii() and text.replace("\n", "").isprintable()


def _is_key(text: str) -> bool:
    return 0 < len(text) <= 128 and text[0] in _KEY_START and set(text) <= _KEY_REST


def _is_flow_word(text: str) -> bool:
    if not text or text[0] not in _FLOW_START:
        return False
    return len(text) == 1 or (text[-1] in _FLOW_END and set(text[1:-1]) <= _FLOW_MIDDLE)


def _unsigned(text: str) -> str:
    return text[1:] if text[:1] in ("-", "+") else text


def _is_simple_int(text: str) -> bool:
    """``[-+]?(0|[1-9][0-9]*)``"""
    digits = _unsigned(text)
    return ascii_digits(digits) and (digits == "0" or digits[0] != "0")


def _is_simple_float(text: str) -> bool:
    """``[-+]?[0-9]+\\.[0-9]+``"""
    whole, dot, fraction = _unsigned(text).partition(".")
    return bool(dot) and ascii_digits(whole) and ascii_digits(fraction)


def parse(text: str) -> Any:
    if not _printable_ascii(text):
        raise Unsupported("a character outside printable ASCII and \\n")
    if text.lstrip(" \n").startswith("{"):
        return json_config(text)
    lines = _lines(text)
    if not lines:
        return None
    if lines[0][0] != 0:
        raise Unsupported("an indented first line")
    value, end = _mapping(lines, 0, 0)
    if end != len(lines):
        raise Unsupported("content after the top-level mapping")
    return value


def _lines(text: str) -> list[tuple[int, str]]:
    """(indent, content) of every line that is not blank or a whole-line comment."""
    result = []
    for number, line in enumerate(text.split("\n")):
        content = line.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        if number == 0 and line == "---":
            continue
        result.append((len(line) - len(content), content))
    return result


def _mapping(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[dict[str, Any], int]:
    result: dict[str, Any] = {}
    i = start
    while i < len(lines) and lines[i][0] == indent:
        key, sep, rest = lines[i][1].partition(":")
        if not sep or not _is_key(key) or key in _BOOL or key in _NULL:
            raise Unsupported("not a simple mapping entry")
        if rest and not rest.startswith(" "):
            raise Unsupported("no space after ':'")
        rest = rest.strip(" ")
        i += 1
        if rest and not rest.startswith("#"):
            result[key] = _inline(rest)
            if i < len(lines) and lines[i][0] > indent:
                raise Unsupported("a value continued on the next line")
        elif i < len(lines) and lines[i][0] > indent:
            if _is_item(lines[i][1]):
                result[key], i = _sequence(lines, i, lines[i][0])
            else:
                result[key], i = _mapping(lines, i, lines[i][0])
        elif i < len(lines) and lines[i][0] == indent and _is_item(lines[i][1]):
            result[key], i = _sequence(lines, i, indent)
        else:
            result[key] = None
        if i < len(lines) and lines[i][0] > indent:
            raise Unsupported("unexpected indentation")
    return result, i


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def _sequence(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[list[Any], int]:
    result = []
    i = start
    while i < len(lines) and lines[i][0] == indent and _is_item(lines[i][1]):
        item = lines[i][1][2:].strip(" ")
        if not item or item.startswith("#") or item.startswith("["):
            raise Unsupported("an empty or nested sequence item")
        result.append(_inline(item))
        i += 1
        if i < len(lines) and lines[i][0] > indent:
            raise Unsupported("a sequence item continued on the next line")
    return result, i


def _inline(text: str) -> Any:
    """A value that starts after ``key: `` or ``- `` and runs to the end of the line."""
    first = text[0]
    if first in "'\"":
        value, rest = _quoted(text)
        _comment_only(rest)
        return value
    if first == "[":
        end = text.find("]")
        if end < 0:
            raise Unsupported("a flow sequence spanning lines")
        _comment_only(text[end + 1 :])
        return _flow(text[1:end])
    # A block plain scalar runs to " #" (a comment) or the end of the line.
    at = text.find(" #")
    if at >= 0:
        text = text[:at].rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise Unsupported("': ' inside a plain scalar")
    return _plain(text)


def _quoted(text: str) -> tuple[str, str]:
    """The quoted scalar at the start of ``text`` and what follows it on the line."""
    quote = text[0]
    if quote == '"':
        end = text.find('"', 1)
        if end < 0 or "\\" in text[1:end]:
            raise Unsupported("a double-quoted scalar with escapes or spanning lines")
        return text[1:end], text[end + 1 :]
    i = 1
    while True:
        end = text.find("'", i)
        if end < 0:
            raise Unsupported("a single-quoted scalar spanning lines")
        if text.startswith("''", end):
            i = end + 2
            continue
        return text[1:end].replace("''", "'"), text[end + 1 :]


def _comment_only(rest: str) -> None:
    stripped = rest.lstrip(" ")
    if stripped and not (stripped.startswith("#") and stripped != rest):
        raise Unsupported("content after a quoted scalar or flow sequence")


def _flow(inner: str) -> list[Any]:
    if not inner.strip(" "):
        return []
    items = []
    for part in inner.split(","):
        item = part.strip(" ")
        if not item:
            raise Unsupported("an empty flow entry")
        if item[0] in "'\"":
            value, rest = _quoted(item)
            if rest or (item[0] == "'" and "," in value) or "[" in value or "{" in value or "#" in value:
                raise Unsupported("a quoted flow item with content the split cannot judge")
            items.append(value)
        elif _is_flow_word(item):
            items.append(_plain(item))
        else:
            raise Unsupported("a flow item beyond plain words and quoted scalars")
    return items


def _plain(text: str) -> Any:
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _is_simple_int(text):
        return int(text)
    if _is_simple_float(text):
        return float(text)
    if text[:1] not in _PLAIN_START or _is_implicit(text):
        raise Unsupported("a plain scalar of another implicit type, or one starting with an indicator")
    return text


# PyYAML's implicit resolvers (resolver.py, YAML 1.1) for every type other than str: a plain scalar
# matching one of these that is not a kept form above is refused.
IMPLICIT = r"""(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\Z
    |(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z
    |(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\Z
    |<<\Z|(?:~|null|Null|NULL|)\Z
    |(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z
    |=\Z"""
_implicit: list[Pattern[str]] = []


def implicit(text: str) -> bool:
    """Whether PyYAML resolves the plain scalar ``text`` to a type other than str (``_is_implicit``)."""
    if not _implicit:
        import re

        _implicit.append(re.compile(IMPLICIT, re.X))
    return _implicit[0].match(text) is not None


# -- JSON (which is YAML 1.2, and nearly 1.1) -------------------------------------------------------------


def json_config(text: str) -> Any:
    """A JSON object, when PyYAML reads its text the same: no backslash escapes (surrogates, \\u0085),
    no number beyond ``-?digits[.digits]`` (PyYAML reads 1e3 as a string), no key split from its ':'
    by a line break and no long key (PyYAML's simple keys), and no tab (PyYAML's flow whitespace)."""
    if "\\" in text or _key_split_or_long(text):
        raise Unsupported("JSON beyond what PyYAML reads alike")
    try:
        return jsonio.loads(text, parse_float=_json_float, parse_constant=_json_refuse)
    except ValueError:
        raise Unsupported("not JSON") from None


def _key_split_or_long(text: str) -> bool:
    """A quote followed by spaces and line breaks (at least one) and then ':', or by 512 characters that
    are neither a quote nor a line break (the regular expressions ``"[ \\n]*\\n[ \\n]*:`` and
    ``"[^"\\n]{512}``, searched anywhere)."""
    at = text.find('"')
    while at >= 0:
        after = end = at + 1
        while end < len(text) and text[end] in " \n":
            end += 1
        if text[end : end + 1] == ":" and "\n" in text[after:end]:
            return True
        quote, newline = text.find('"', after), text.find("\n", after)
        run_end = min(i for i in (quote, newline, len(text)) if i >= 0)
        if run_end - after >= 512:
            return True
        at = quote
    return False


def _json_float(text: str) -> float:
    if not _is_simple_float(text):
        raise Unsupported("a JSON number PyYAML reads differently")
    return float(text)


def _json_refuse(text: str) -> Any:
    raise Unsupported(f"JSON {text}")
