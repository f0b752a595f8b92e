"""A strict parser for the small part of YAML that plugin configs use, so a call need not import PyYAML.

Importing PyYAML costs ~35 ms here, more than the rest of a call's imports together; config files are a
few nested mappings of scalars. This parser accepts block mappings, block sequences of scalars, flow
sequences of scalars, quoted and plain scalars, and comments, and resolves plain scalars exactly as
PyYAML's safe loader does. Anything else raises ``Unsupported`` and the caller hands the whole text to
PyYAML, so a file is never read differently from PyYAML: the tests check that on generated documents.
"""

from __future__ import annotations

import re
from typing import Any


class Unsupported(Exception):
    """The text uses YAML beyond this subset; parse it with PyYAML instead."""


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]+\Z")
_NULL = {"", "~", "null", "Null", "NULL"}
# A digit-led plain scalar is a string only when it holds a letter no number or timestamp form uses
# ("30s", "5GiB"); hex digits, exponents, radix prefixes and the T/Z of timestamps do not count.
_NOT_A_NUMBER = re.compile(r"[g-su-wyG-SU-WY]")
# YAML 1.1 booleans, as PyYAML resolves them.
_BOOL = {
    **dict.fromkeys(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"), False),
}
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`=<")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_KEY_RESERVED = set(_BOOL) | _NULL


def parse(text: str) -> Any:
    lines = _lines(text)
    if not lines:
        return None
    value, end = _block(lines, 0, lines[0][0])
    if end != len(lines):
        raise Unsupported("trailing content")
    return value


def _lines(text: str) -> list[tuple[int, str]]:
    """(indent, content) of every line with content, comments removed."""
    result = []
    for number, raw in enumerate(text.split("\n")):
        line = raw.rstrip("\r")
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise Unsupported("tab indentation")
        content = _strip_comment(line).rstrip(" ")
        if not content.strip():
            continue
        if content.strip() in ("---", "...") or content.startswith("%"):
            if number == 0 and content == "---":
                continue
            raise Unsupported("document markers")
        indent = len(content) - len(content.lstrip(" "))
        result.append((indent, content[indent:]))
    return result


def _strip_comment(line: str) -> str:
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and (i == 0 or line[i - 1] in " [,:-"):
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] == " "):
            return line[:i]
    if quote:
        raise Unsupported("multi-line quoted scalar")
    return line


def _block(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[Any, int]:
    if lines[start][1].startswith("- ") or lines[start][1] == "-":
        return _sequence(lines, start, indent)
    return _mapping(lines, start, indent)


def _mapping(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[dict[str, Any], int]:
    result: dict[str, Any] = {}
    i = start
    while i < len(lines) and lines[i][0] == indent:
        content = lines[i][1]
        key, sep, rest = content.partition(":")
        if not sep or (rest and not rest.startswith(" ")) or not _KEY.match(key) or key in _KEY_RESERVED:
            raise Unsupported(f"not a simple mapping entry: {content!r}")
        rest = rest.strip()
        i += 1
        if rest:
            result[key] = _value(rest)
        elif i < len(lines) and (lines[i][0] > indent or (lines[i][0] == indent and lines[i][1][:2] in ("- ", "-"))):
            result[key], i = _block(lines, i, lines[i][0])
        else:
            result[key] = None
    if i < len(lines) and lines[i][0] > indent:
        raise Unsupported("unexpected indentation")
    return result, i


def _sequence(lines: list[tuple[int, str]], start: int, indent: int) -> tuple[list[Any], int]:
    result = []
    i = start
    while i < len(lines) and lines[i][0] == indent and (lines[i][1].startswith("- ") or lines[i][1] == "-"):
        item = lines[i][1][1:].strip()
        if not item or ": " in item or item.endswith(":") or item.startswith("- "):
            raise Unsupported("nested collection in a sequence")
        result.append(_value(item))
        i += 1
    if i < len(lines) and lines[i][0] > indent:
        raise Unsupported("unexpected indentation")
    return result, i


def _value(text: str) -> Any:
    if text.startswith("["):
        if not text.endswith("]"):
            raise Unsupported("flow sequence spanning lines")
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [_scalar(part.strip()) for part in _split_flow(inner)]
    return _scalar(text)


def _split_flow(text: str) -> list[str]:
    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            current += char
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            current += char
        elif char in "[]{}":
            raise Unsupported("nested flow collection")
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
    if quote:
        raise Unsupported("unterminated quote")
    parts.append(current)
    if any(not part.strip() for part in parts):
        raise Unsupported("empty flow entry")
    return parts


def _scalar(text: str) -> Any:
    if text.startswith('"'):
        return _double_quoted(text)
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1].replace("''", ""):
            raise Unsupported("single-quoted scalar")
        return text[1:-1].replace("''", "'")
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    first = text[0]
    if first in _INDICATORS or first in "+." or ": " in text or " #" in text or text.endswith(":"):
        raise Unsupported(f"plain scalar {text!r}")
    if first.isdigit() and not _NOT_A_NUMBER.search(text):
        # Could be one of PyYAML's other implicit types (hex, octal, sexagesimal, timestamp, 1_000).
        raise Unsupported(f"number-like plain scalar {text!r}")
    if "\\" in text or any(ord(c) < 32 or ord(c) > 126 for c in text):
        raise Unsupported("non-ASCII or escaped plain scalar")
    return text


def _double_quoted(text: str) -> str:
    if len(text) < 2 or not text.endswith('"'):
        raise Unsupported("double-quoted scalar")
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char == '"':
            raise Unsupported("quote inside a double-quoted scalar")
        if char == "\\":
            if i + 1 >= len(body) or body[i + 1] not in _ESCAPES:
                raise Unsupported("escape sequence")
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)
