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
take a strict ``json.loads`` path with the same alphabet and only the number forms both read alike.
tests/unit/test_yamlsubset.py checks every accepted file against ``yaml.safe_load`` on generated input.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Unsupported(Exception):
    """The text uses YAML beyond this subset; parse it with PyYAML instead."""


# Printable ASCII and \n, nothing else (\Z: a trailing \n is a line, not a hole in the check).
_ALPHABET = re.compile(r"[\x20-\x7e\n]*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}\Z")
# A flow item that is a plain scalar: no quotes, spaces, flow indicators or '#'; no ':' at its end.
_FLOW_WORD = re.compile(r"[A-Za-z0-9_/+-](?:[A-Za-z0-9_/.+=@%~:-]*[A-Za-z0-9_/.+=@%~-])?\Z")
# The forms kept, and the value each gives (PyYAML: int(text) after sign handling, float(text)).
_SIMPLE_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_SIMPLE_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]+\Z")
_NULL = {"~", "null", "Null", "NULL"}
_BOOL = {
    **dict.fromkeys(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"), False),
}
# PyYAML's implicit resolvers (resolver.py, YAML 1.1) for every type other than str: a plain scalar
# matching one of these that is not a kept form above is refused.
_IMPLICIT = re.compile(
    r"""(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\Z
    |(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z
    |(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\Z
    |<<\Z|(?:~|null|Null|NULL|)\Z
    |(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z
    |=\Z""",
    re.X,
)
# PyYAML's resolver picks candidates by first character; a leading '.' covers .5 as well.
_PLAIN_START = re.compile(r"[A-Za-z0-9_/]")


def parse(text: str) -> Any:
    if not _ALPHABET.match(text):
        raise Unsupported("a character outside printable ASCII and \\n")
    if text.lstrip(" \n").startswith("{"):
        return _json(text)
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
        if not sep or not _KEY.match(key) or key in _BOOL or key in _NULL:
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
        elif _FLOW_WORD.match(item):
            items.append(_plain(item))
        else:
            raise Unsupported("a flow item beyond plain words and quoted scalars")
    return items


def _plain(text: str) -> Any:
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _SIMPLE_INT.match(text):
        return int(text)
    if _SIMPLE_FLOAT.match(text):
        return float(text)
    if _IMPLICIT.match(text) or not _PLAIN_START.match(text):
        raise Unsupported("a plain scalar of another implicit type, or one starting with an indicator")
    return text


# -- JSON (which is YAML 1.2, and nearly 1.1) -------------------------------------------------------------


def _json(text: str) -> Any:
    """A JSON object, when PyYAML reads its text the same: no backslash escapes (surrogates, \\u0085),
    no number beyond ``-?digits[.digits]`` (PyYAML reads 1e3 as a string), no key split from its ':'
    by a line break and no long key (PyYAML's simple keys), and no tab (PyYAML's flow whitespace)."""
    if "\\" in text or re.search(r'"[ \n]*\n[ \n]*:', text) or re.search(r'"[^"\n]{512}', text):
        raise Unsupported("JSON beyond what PyYAML reads alike")
    import json

    try:
        return json.loads(text, parse_float=_json_float, parse_constant=_json_refuse)
    except ValueError:
        raise Unsupported("not JSON") from None


def _json_float(text: str) -> float:
    if not _SIMPLE_FLOAT.match(text):
        raise Unsupported("a JSON number PyYAML reads differently")
    return float(text)


def _json_refuse(text: str) -> Any:
    raise Unsupported(f"JSON {text}")
