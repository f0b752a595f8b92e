"""``<plugin> <verb> --help``: the verb's request keys, their types and an example, read from its schema.

Only the help path imports this module (and the schema files it reads): a verb call never does.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from resource_extend.formats import schemafiles
from resource_extend.formats.validation import schema_dir

# Where a subschema was found: the schema directory and the $id of its file, against which its references
# resolve.
At = tuple[Path, str]

_NAMES = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean", "null": "null"}


def describe(prog: str, plugin: str, verb: str, summary: str) -> str:
    lines = [f"{prog} {verb} — {summary}", "", f"usage: {prog} [--config PATH] {verb} < request.json"]
    try:
        at: At = (schema_dir(), schemafiles.verb_uri(plugin, verb, "request"))
        schema = schemafiles.load(*at)
    except (OSError, ValueError, KeyError):
        return "\n".join(lines) + "\n"
    if schema.get("description"):
        lines += ["", *textwrap.wrap(str(schema["description"]), 100)]
    properties = schema.get("properties") or {}
    if properties:
        required = set(schema.get("required") or ())
        rows = []
        for key, spec in properties.items():
            kind = kind_of(at, spec) + (", required" if key in required else "")
            rows.append((key, kind, first_sentence(_description(at, spec))))
        lines += ["", "request keys:", *_table(rows)]
    example = best_example(schema.get("examples") or [])
    if example is not None:
        text = json.dumps(example, separators=(",", ":"), ensure_ascii=False).replace("'", "'\\''")
        lines += ["", "example request:", f"  echo '{text}' | ./{prog} {verb}"]
    return "\n".join(lines) + "\n"


_WIDE = 44  # a longer type gets a line of its own, its description below it


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    key_width = max(len(key) for key, _, _ in rows)
    kind_width = max((len(kind) for _, kind, _ in rows if len(kind) <= _WIDE), default=0)
    lines = []
    for key, kind, text in rows:
        if len(kind) <= _WIDE:
            lines.append(f"  {key:<{key_width}}  {kind:<{kind_width}}  {text}".rstrip())
        else:
            lines.append(f"  {key:<{key_width}}  {kind}")
            if text:
                lines.append(f"  {'':<{key_width}}  {'':<{kind_width}}  {text}")
    return lines


def best_example(examples: list[Any]) -> Any:
    """The example that shows the most: the one with the most values that are not null or empty."""
    if not examples:
        return None
    return max(examples, key=lambda example: (_filled(example), -examples.index(example)))


def _filled(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_filled(v) for v in value.values()) + len(value)
    if isinstance(value, list):
        return sum(_filled(v) for v in value) + len(value)
    return 0 if value is None else 1


def first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + dot.strip() if dot else text


def _resolve(at: At, spec: Any, depth: int = 0) -> tuple[At, Any]:
    """``spec`` with its references followed, and where the last one led."""
    while isinstance(spec, dict) and isinstance(spec.get("$ref"), str) and depth < 20:
        uri, spec = schemafiles.resolve(at[0], at[1], spec["$ref"])
        at = (at[0], uri)
        depth += 1
    return at, spec


def _description(at: At, spec: Any) -> str:
    if isinstance(spec, dict) and spec.get("description"):
        return str(spec["description"])
    try:
        _, target = _resolve(at, spec)
    except (OSError, ValueError, KeyError, IndexError):
        return ""
    return str(target.get("description", "")) if isinstance(target, dict) else ""


def kind_of(at: At, spec: Any, depth: int = 0) -> str:
    """A short human type for a schema: ``integer``, ``array of strings``, ``object {prod_count_map}``, …"""
    try:
        at, spec = _resolve(at, spec)
    except (OSError, ValueError, KeyError, IndexError):
        return "any"
    if not isinstance(spec, dict) or depth > 4:
        return "any"
    if spec.get("title") and "type" not in spec:
        return str(spec["title"])
    if isinstance(spec.get("if"), dict) and "then" in spec:
        # Read only when it has this type; anything else reads as absent, as the reference reads it.
        return kind_of(at, spec["then"], depth + 1)
    if "type" not in spec and "items" in spec:
        # items alone applies to arrays only (anything else reads as absent), like an if/then on the type.
        return _one(at, spec, "array", depth)
    kinds = spec.get("type")
    if isinstance(kinds, str):
        kinds = [kinds]
    if isinstance(kinds, list):
        # null is left out: every nullable key reads null as absent.
        named = [_one(at, spec, str(k), depth) for k in kinds if k != "null"]
        return " or ".join(named) if named else "null"
    for combo in ("anyOf", "oneOf"):
        if isinstance(spec.get(combo), list):
            return " or ".join(kind_of(at, s, depth + 1) for s in spec[combo])
    return "any"


def _one(at: At, spec: dict[str, Any], kind: str, depth: int) -> str:
    if kind == "array":
        items = spec.get("items")
        return "array" if items is None else f"array of {_plural(kind_of(at, items, depth + 1))}"
    if kind == "object":
        properties = spec.get("properties")
        if isinstance(properties, dict) and properties:
            return "object {" + ", ".join(properties) + "}"
        extra = spec.get("additionalProperties")
        if isinstance(extra, dict):
            return f"object of {_plural(kind_of(at, extra, depth + 1))}"
        return "object"
    return _NAMES.get(kind, kind)


def _plural(kind: str) -> str:
    if " " in kind or kind.endswith("s") or kind == "any":
        return kind if kind != "any" else "values"
    return kind + "s"
