"""Inline a verb's JSON Schema and everything it references into one self-contained draft-07 schema.

The files under ``schemas/`` reference each other in three forms only: ``../common.json#/definitions/NAME``
and ``defs.json#/definitions/NAME`` (resolved against the referring file's location, as ``$id`` does) and
``#/definitions/NAME`` inside one file. ``bundle`` copies every definition reached from a verb file into the
result's ``definitions`` under a name prefixed with its file's stem (``common__nodename``,
``defs__record``) and rewrites each reference to ``#/definitions/<that name>``. The result has local
references only, so fastjsonschema can compile it without a resolver.

Pure functions of the files on disk: stdlib only, no network, nothing cached.
"""

from __future__ import annotations

import copy
import json
import posixpath
from pathlib import Path
from typing import Any

DIRECTIONS = ("request", "response")

_DEFINITIONS = "/definitions/"
# Keywords whose values are data, not subschemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"examples", "const", "enum", "default"})
# Keywords whose values map names to subschemas.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "definitions", "dependencies"})
# Keywords that only make sense at a document's root.
_ROOT_ONLY = ("$id", "$schema")


def bundle(schema_dir: Path, plugin: str, verb: str, direction: str) -> dict[str, Any]:
    """The self-contained schema of ``<plugin>/<verb>.<direction>.json`` under ``schema_dir``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
    for label, part in (("plugin", plugin), ("verb", verb)):
        if not part or "/" in part or part.startswith("."):
            raise ValueError(f"invalid {label} name {part!r}")
    return bundle_file(schema_dir, f"{plugin}/{verb}.{direction}.json")


def bundle_file(schema_dir: Path, relative: str) -> dict[str, Any]:
    """The self-contained schema of any file under ``schema_dir`` (a verb file, ``common.json``, a defs file).

    The root file's own definitions keep their names; definitions from other files get the other file's
    stem as prefix.
    """
    return _Bundler(schema_dir, _normalize(relative)).run()


def verbs_with_schemas(schema_dir: Path, plugin: str) -> list[str]:
    """The verbs that have both a request and a response schema for ``plugin``, sorted."""
    directory = schema_dir / plugin
    requests = {p.name[: -len(".request.json")] for p in directory.glob("*.request.json")}
    responses = {p.name[: -len(".response.json")] for p in directory.glob("*.response.json")}
    return sorted(requests & responses)


def _normalize(relative: str) -> str:
    path = posixpath.normpath(relative)
    if path.startswith("../") or path == ".." or path.startswith("/"):
        raise ValueError(f"schema path {relative!r} leaves the schema directory")
    return path


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class _Bundler:
    def __init__(self, schema_dir: Path, root: str) -> None:
        self.schema_dir = schema_dir
        self.root = root
        self.documents: dict[str, dict[str, Any]] = {}
        self.prefixes: dict[str, str] = {}  # prefix -> file, to refuse two files with one stem
        self.inlined: dict[str, Any] = {}
        self.pending: list[tuple[str, str, str]] = []  # (file, definition name, bundled name)
        self.queued: set[str] = set()

    def run(self) -> dict[str, Any]:
        result = self._rewrite(copy.deepcopy(self._load(self.root)), self.root)
        if not isinstance(result, dict):
            raise ValueError(f"{self.root}: a schema file must hold a JSON object")
        while self.pending:
            source, name, bundled = self.pending.pop()
            definition = self._definition(source, name)
            if isinstance(definition, dict):
                definition = {k: v for k, v in definition.items() if k not in _ROOT_ONLY}
            self.inlined[bundled] = self._rewrite(copy.deepcopy(definition), source)
        own = result.get("definitions", {})
        if not isinstance(own, dict):
            raise ValueError(f"{self.root}: definitions must be an object")
        clash = sorted(set(own) & set(self.inlined))
        if clash:
            raise ValueError(f"{self.root}: own definitions clash with bundled names: {', '.join(clash)}")
        if own or self.inlined:
            result["definitions"] = {**own, **dict(sorted(self.inlined.items()))}
        return result

    def _load(self, relative: str) -> dict[str, Any]:
        if relative not in self.documents:
            path = self.schema_dir / relative
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise ValueError(f"schema file {relative} does not exist under {self.schema_dir}") from None
            if not isinstance(document, dict):
                raise ValueError(f"{relative}: a schema file must hold a JSON object")
            self.documents[relative] = document
        return self.documents[relative]

    def _definition(self, relative: str, name: str) -> Any:
        definitions = self._load(relative).get("definitions")
        if not isinstance(definitions, dict) or name not in definitions:
            raise ValueError(f"{relative} has no definition {name!r}")
        return definitions[name]

    def _rewrite(self, node: Any, source: str) -> Any:
        """Rewrite every ``$ref`` in schema ``node``, found in file ``source``, to a bundle-local one."""
        if isinstance(node, list):
            return [self._rewrite(item, source) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = self._local_ref(value, source)
            elif key in _DATA_KEYWORDS:
                out[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                # keys are names (a property may well be called "default" or "$ref"), values are schemas
                out[key] = {name: self._rewrite(schema, source) for name, schema in value.items()}
            else:
                out[key] = self._rewrite(value, source)
        return out

    def _local_ref(self, ref: str, source: str) -> str:
        file_part, hash_mark, fragment = ref.partition("#")
        if ":" in file_part:
            raise ValueError(f"{source}: absolute reference {ref!r} cannot be bundled")
        if not hash_mark or not fragment.startswith(_DEFINITIONS) or "/" in fragment[len(_DEFINITIONS) :]:
            raise ValueError(f"{source}: reference {ref!r} must point at #/definitions/NAME")
        name = _unescape(fragment[len(_DEFINITIONS) :])
        target = _normalize(posixpath.join(posixpath.dirname(source), file_part)) if file_part else source
        self._definition(target, name)  # fail early on a dangling reference
        if target == self.root:
            return "#" + _DEFINITIONS + _escape(name)
        prefix = posixpath.basename(target).split(".")[0]
        owner = self.prefixes.setdefault(prefix, target)
        if owner != target:
            raise ValueError(f"{self.root}: {owner} and {target} would share the prefix {prefix!r}")
        bundled = f"{prefix}__{name}"
        if bundled not in self.queued:
            self.queued.add(bundled)
            self.pending.append((target, name, bundled))
        return "#" + _DEFINITIONS + _escape(bundled)
