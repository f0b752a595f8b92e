"""The JSON Schemas under ``schemas/``, each file addressed by its ``$id``, for fastjsonschema and the help text.

Every ``$id`` lies under ``BASE`` and the files reference each other relative to it (``../common.json#/...``,
``defs.json#/...``). fastjsonschema resolves those references itself and asks its ``handlers`` for each
file; ``handlers`` answers from the schema directory, so compiling never touches the network and a
reference outside the directory is an error. ``resolve`` follows one reference the same way for the help.

Only build.py, source checkouts (validation compiles there) and the help path import this module.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

BASE = "https://projecteru2.github.io/resource-extend/schemas/"
DIRECTIONS = ("request", "response")
# Keywords that annotate and do not validate: the generated code would embed them otherwise.
ANNOTATIONS = frozenset({"title", "description", "examples", "$comment"})
# Keywords whose values are data, not subschemas, and those whose values map names to subschemas.
_DATA = frozenset({"const", "enum", "default"})
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "definitions", "dependencies"})


def verb_uri(plugin: str, verb: str, direction: str) -> str:
    """The ``$id`` of ``<plugin>/<verb>.<direction>.json``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    for label, part in (("plugin", plugin), ("verb", verb)):
        if not part or "/" in part or part.startswith("."):
            raise ValueError(f"invalid {label} name {part!r}")
    return f"{BASE}{plugin}/{verb}.{direction}.json"


def load(schema_dir: Path, uri: str) -> dict[str, Any]:
    """The schema file whose ``$id`` is ``uri`` (a fragment is ignored), read from ``schema_dir``."""
    address = uri.partition("#")[0]
    relative = posixpath.normpath(address[len(BASE) :]) if address.startswith(BASE) else ""
    if not relative or relative.startswith("..") or relative.startswith("/"):
        raise ValueError(f"schema {uri!r} is not a file under {BASE}")
    try:
        document = json.loads((schema_dir / relative).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"schema file {relative} does not exist under {schema_dir}") from None
    if not isinstance(document, dict):
        raise ValueError(f"{relative}: a schema file must hold a JSON object")
    return document


def verb_schema(schema_dir: Path, plugin: str, verb: str, direction: str) -> dict[str, Any]:
    return load(schema_dir, verb_uri(plugin, verb, direction))


def handlers(schema_dir: Path, annotations: bool = True) -> dict[str, Callable[[str], Any]]:
    """fastjsonschema's ``handlers``: every referenced file from ``schema_dir``, ``without_annotations``
    unless asked to keep them; ``http`` too, so that no address is ever fetched."""

    def local(uri: str) -> Any:
        document = load(schema_dir, uri)
        return document if annotations else without_annotations(document)

    return {"https": local, "http": local}


def resolve(schema_dir: Path, base: str, ref: str) -> tuple[str, Any]:
    """The address and the subschema ``ref``, found in the file ``base``, points at (a JSON pointer)."""
    address, _, pointer = ref.partition("#")
    uri = base.partition("#")[0]
    if address:  # relative to the referring file, as its $id makes it
        uri = BASE + posixpath.normpath(posixpath.join(posixpath.dirname(uri[len(BASE) :]), address))
    node: Any = load(schema_dir, uri)
    for token in filter(None, pointer.split("/")):
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return uri, node


def without_annotations(schema: Any) -> Any:
    """The schema minus the keywords that do not validate (``ANNOTATIONS``); data is kept as it is."""
    if isinstance(schema, list):
        return [without_annotations(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            # keys are names (a property may well be called "title" or "$ref"), values are schemas
            kept[key] = {name: without_annotations(sub) for name, sub in value.items()}
        elif key in _DATA:
            kept[key] = value
        else:
            kept[key] = without_annotations(value)
    return kept


def verbs_with_schemas(schema_dir: Path, plugin: str) -> list[str]:
    """The verbs that have both a request and a response schema for ``plugin``, sorted."""
    directory = schema_dir / plugin
    requests = {p.name[: -len(".request.json")] for p in directory.glob("*.request.json")}
    responses = {p.name[: -len(".response.json")] for p in directory.glob("*.response.json")}
    return sorted(requests & responses)


def renamed(schema_dir: Path, source: str, name: str, words: dict[str, str]) -> dict[str, str]:
    """Plugin ``source``'s schema files for a plugin of the same shape called ``name``: each file's text by its
    file name, with every whole-word ``source`` (the ``$id``s, ``resource-gpu``, the metric names ``gpu_used``,
    the ``name`` verb's answer) replaced by ``name`` and each key of ``words`` (``{"GPU": "RDMA NIC"}``) by its
    value. A counted plugin's schemas differ from GPU's only so: they are generated, never copied by hand."""
    import re  # build and tests only

    whole = re.compile(rf"(?<![A-Za-z0-9]){re.escape(source)}(?![A-Za-z0-9])")
    files = {}
    for path in sorted((schema_dir / source).glob("*.json")):
        text = whole.sub(name, path.read_text(encoding="utf-8"))
        for old, new in words.items():
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])", new, text)
        files[path.name] = text
    return files
