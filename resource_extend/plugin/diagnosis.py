"""What can be wrong with one stored record, independent of the plugin: the pure half of ``doctor``.

A finding names the node, the kind of problem, the detail (path and value) and the verb that repairs it;
``salvage`` and the plugins' ``corrected`` give the record that verb is sent (``doctor`` prints the command).
Two questions are asked of the raw bytes: can this implementation read the record (the plugin's own
decoder answers, with its own words), and could the Go reference (its ``json.Unmarshal`` into the record
structs: integer fields take only integer literals that fit int64, every field its declared JSON type).
The plugin modules (``gpu/checks.py``, ``storage/checks.py``) then check a readable record's numbers.
Nothing here does I/O.
"""

from __future__ import annotations

import json
from typing import Any, Callable, TypeVar, Union

from resource_extend.formats.decoding import INT64_MAX, INT64_MIN

R = TypeVar("R")

# Kinds of finding, stable for ``doctor --json``.
UNREADABLE = "unreadable"
BEYOND_INT64 = "beyond-int64"
GO_UNDECODABLE = "go-undecodable"
NEGATIVE = "negative"
ABOVE_CAPACITY = "usage-above-capacity"
NO_CAPACITY = "usage-without-capacity"
WRITE_REFUSED = "write-refused"
# Keys no node of core's has: ``…/gpu/`` (an empty name, which every verb refuses, so only etcdctl removes
# it) and ``…/gpu/sub/node`` (a name holding "/": core's own keys cannot hold such a node).
EMPTY_NAME = "empty-node-name"
NESTED_KEY = "nested-key"

# The verb that repairs each kind. Every record's repair is set-node-resource-info with the record doctor
# proposes (``salvage``, then the plugin's ``corrected``): it overwrites the whole record without reading it,
# so it also repairs a record nothing can read, and one command clears every problem of a node at once.
# (Usage that drifted from the workloads is better recomputed by core: ``eru-cli node resource --fix``.)
REWRITE = "set-node-resource-info"
REMOVE = "remove-node"
DELETE_KEY = "etcdctl del"
REPAIRS = {
    UNREADABLE: REWRITE,
    BEYOND_INT64: REWRITE,
    GO_UNDECODABLE: REWRITE,
    NEGATIVE: REWRITE,
    ABOVE_CAPACITY: REWRITE,
    NO_CAPACITY: REWRITE,
    WRITE_REFUSED: REWRITE,
    EMPTY_NAME: DELETE_KEY,
    NESTED_KEY: REMOVE,
}


class Finding:
    __slots__ = ("detail", "kind", "node", "repair")

    def __init__(self, node: str, kind: str, detail: str) -> None:
        self.node, self.kind, self.detail = node, kind, detail
        self.repair = REPAIRS[kind]

    def to_json(self) -> dict[str, str]:
        return {"node": self.node, "problem": self.kind, "detail": self.detail, "repair": self.repair}

    def __repr__(self) -> str:
        return f"Finding({self.node!r}, {self.kind!r}, {self.detail!r})"


class FloatLiteral(str):
    """A JSON number written with a fraction or exponent, kept as its text: Go reads no such number as an int."""

    __slots__ = ()


# A Go type as encoding/json sees it: "int" (int / int64), "string", or ("struct", {json name: type}),
# ("map", value type), ("list", element type). ``null`` decodes into every one of them.
GoType = Union[str, tuple[str, Any]]


def examine(
    node: str,
    data: bytes,
    decode: Callable[[bytes], R],
    go_type: GoType,
    check_record: Callable[[str, R], list[Finding]],
    checked: Callable[[R], object] | None = None,
) -> list[Finding]:
    """Every finding for one record: unreadable here (``decode``'s own words), undecodable by the Go
    reference (``go_type``), then, when readable, what ``check_record`` finds in its numbers.

    ``checked`` is the store's own check before a write (``Record.checked``): a record it refuses
    makes every write to the node fail, so whatever it refuses that ``check_record`` did not name is a
    finding too. Checks added there later are reported here without a change.
    """
    go_reads = True
    try:
        go_found = go_problems(node, parse_literal(data), go_type, "")
    except (ValueError, RecursionError):
        go_found, go_reads = [], False  # not JSON at all: neither implementation reads it
    try:
        record = decode(data)
    except Exception as exc:  # whatever stops the verbs from reading the record is the finding
        why = " ".join(str(exc).split()) or type(exc).__name__
        if go_found or not go_reads:
            why += " (the Go reference cannot read it either)"
        # One row for the record, plus each value past int64: the kind an operator asked to find.
        return [Finding(node, UNREADABLE, why)] + [f for f in go_found if f.kind == BEYOND_INT64]
    found = go_found + check_record(node, record)
    if checked is not None and not any(f.kind in _SEMANTIC for f in found):
        try:
            checked(record)
        except Exception as exc:  # the store's words for why it would refuse the write
            found.append(Finding(node, WRITE_REFUSED, "every write to the node fails: " + " ".join(str(exc).split())))
    return found


_SEMANTIC = frozenset({NEGATIVE, ABOVE_CAPACITY, NO_CAPACITY, BEYOND_INT64})


def parse_literal(data: bytes) -> Any:
    """The record's JSON with float literals kept as ``FloatLiteral`` and integers exact (however large).

    Read from strict UTF-8 text, as Go reads it: json.loads of the bytes would also take UTF-16 or a BOM."""
    return json.loads(data.decode("utf-8"), parse_float=FloatLiteral, parse_constant=FloatLiteral)


def go_problems(node: str, doc: Any, kind: GoType, path: str) -> list[Finding]:
    """Where the Go reference's decoder would fail on ``doc`` read as ``kind``: one finding per place."""
    if doc is None:
        return []
    if kind == "int":
        if isinstance(doc, FloatLiteral):
            return [Finding(node, GO_UNDECODABLE, f"{path} is {doc}: the Go reference reads only integers there")]
        if isinstance(doc, int) and not isinstance(doc, bool):
            if INT64_MIN <= doc <= INT64_MAX:
                return []
            return [Finding(node, BEYOND_INT64, f"{path} is {doc}, past int64 (±9223372036854775807)")]
        return [_mismatch(node, doc, path, "an integer")]
    if kind == "string":
        return [] if isinstance(doc, str) else [_mismatch(node, doc, path, "a string")]
    assert isinstance(kind, tuple)
    shape, inner = kind
    found: list[Finding] = []
    if shape == "struct":
        if not isinstance(doc, dict):
            return [_mismatch(node, doc, path, "an object")]
        for name, field in inner.items():
            found += go_problems(node, doc.get(name), field, f"{path}.{name}" if path else name)
    elif shape == "map":
        if not isinstance(doc, dict):
            return [_mismatch(node, doc, path, "an object")]
        for key, value in doc.items():
            found += go_problems(node, value, inner, f"{path}[{json.dumps(key)}]")
    elif shape == "list":
        if not isinstance(doc, list):
            return [_mismatch(node, doc, path, "an array")]
        for i, value in enumerate(doc):
            found += go_problems(node, value, inner, f"{path}[{i}]")
    return found


def _mismatch(node: str, doc: Any, path: str, wanted: str) -> Finding:
    text = json.dumps(doc)
    shown = text if len(text) <= 40 else text[:37] + "..."
    return Finding(node, GO_UNDECODABLE, f"{path or 'the record'} is {shown}: the Go reference needs {wanted} there")


def node_of(key: str, directory: str) -> str:
    """The node a key belongs to: the part after the plugin's directory, as the verbs name it."""
    return key[len(directory) :] if key.startswith(directory) else key


def key_problem(node: str, key: str) -> Finding | None:
    """A key that names no node of core's: empty after the directory, or nested below it."""
    if node == "":
        return Finding(node, EMPTY_NAME, f"key {key} has no node name: every verb refuses an empty name")
    if "/" in node:
        return Finding(node, NESTED_KEY, f"node name {node!r} holds '/': core's node names never do")
    return None


def salvage(data: bytes, go_type: GoType) -> Any:
    """What can be kept of a stored record: every value of the type ``go_type`` declares that both
    implementations read, integers only in 0..int64 (a fraction that is a whole number, ``2.0``, kept as
    one); the rest is left out, which reads as empty or zero. Not JSON at all: ``{}``."""
    try:
        doc = parse_literal(data)
    except (ValueError, RecursionError):
        return {}
    kept = _keep(doc, go_type)
    return kept if isinstance(kept, dict) else {}


_LEFT_OUT = object()


def _keep(doc: Any, kind: GoType) -> Any:
    if kind == "int":
        if isinstance(doc, FloatLiteral):
            from decimal import Decimal, InvalidOperation

            try:
                number = Decimal(doc)
            except InvalidOperation:  # NaN, Infinity
                return _LEFT_OUT
            doc = int(number) if number.is_finite() and number == number.to_integral_value() else None
        if isinstance(doc, int) and not isinstance(doc, bool) and 0 <= doc <= INT64_MAX:
            return doc
        return _LEFT_OUT
    if kind == "string":
        return doc if isinstance(doc, str) else _LEFT_OUT
    assert isinstance(kind, tuple)
    shape, inner = kind
    if shape == "struct" and isinstance(doc, dict):
        fields = {name: _keep(doc.get(name), field) for name, field in inner.items() if doc.get(name) is not None}
        return {name: value for name, value in fields.items() if value is not _LEFT_OUT}
    if shape == "map" and isinstance(doc, dict):
        entries = {key: _keep(value, inner) for key, value in doc.items()}
        return {key: value for key, value in entries.items() if value is not _LEFT_OUT}
    if shape == "list" and isinstance(doc, list):
        return [value for value in (_keep(item, inner) for item in doc) if value is not _LEFT_OUT]
    return _LEFT_OUT
