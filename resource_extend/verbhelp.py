"""``<plugin> <verb> --help``: the verb's request keys and an example, read from its schema."""

from __future__ import annotations

import json
from typing import Any

from resource_extend.schemabundle import bundle
from resource_extend.validation import schema_dir


def describe(prog: str, plugin: str, verb: str, summary: str) -> str:
    lines = [f"{prog} {verb} — {summary}", "", f"usage: {prog} [--config PATH] {verb} < request.json"]
    try:
        schema = bundle(schema_dir(), plugin, verb, "request")
    except (OSError, ValueError, KeyError):
        return "\n".join(lines) + "\n"
    if schema.get("description"):
        lines += ["", str(schema["description"])]
    properties = schema.get("properties") or {}
    if properties:
        required = set(schema.get("required") or ())
        width = max(len(k) for k in properties)
        lines += ["", "request keys:"]
        for key, spec in properties.items():
            kind = _kind(schema, spec)
            note = " (required)" if key in required else ""
            text = spec.get("description", "") if isinstance(spec, dict) else ""
            lines.append(f"  {key:<{width}}  {kind}{note}  {text}".rstrip())
    examples = schema.get("examples") or []
    if examples:
        lines += ["", "example request:", "  " + json.dumps(examples[0])]
    return "\n".join(lines) + "\n"


def _kind(root: dict[str, Any], spec: Any) -> str:
    if not isinstance(spec, dict):
        return "any"
    ref = spec.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        target = root.get("definitions", {}).get(ref.rsplit("/", 1)[-1], {})
        return _kind(root, target) if target is not spec else "any"
    kind = spec.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if isinstance(kind, str):
        return kind
    for combo in ("anyOf", "oneOf"):
        if isinstance(spec.get(combo), list):
            return " | ".join(_kind(root, s) for s in spec[combo])
    return "any"
