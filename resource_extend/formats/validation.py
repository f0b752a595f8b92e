"""Checking requests and responses against the JSON Schemas under ``schemas/``.

Executables carry validators that build.py compiled from the schemas (``_validators_<plugin>``); no
schema library is imported on a call. Run from a source checkout, the same schemas are compiled on
first use with fastjsonschema instead. tests/ prove both agree with the ``jsonschema`` package.
"""

from __future__ import annotations

import sys

from resource_extend.errors import PluginError
from resource_extend.formats.jsonio import Rendered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable

    Validator = Callable[[Any], Any]

# The verbs whose documents grow with the number of nodes: checked on representatives (bigdocs.py).
BIG = ("get-metrics", "get-nodes-deploy-capacity")


def schema_dir() -> Path:
    """build.py copies schemas/ into the package as _schemas; a source checkout reads them in place."""
    from pathlib import Path  # a call never needs it: only help and source checkouts read schema files

    loader = globals().get("__loader__")
    archive = getattr(loader, "archive", None)  # zipimport's loader, or the start's CodeTable: in the archive
    if archive is not None and __file__.startswith(archive + "/"):
        import zipfile

        # zipfile.Path reads like a Path (/, read_text, glob), which is all schemafiles asks of one.
        inside = __file__[len(archive) + 1 :].rpartition("/")[0].rpartition("/")[0] + "/_schemas/"
        found: Path = zipfile.Path(archive, inside)  # type: ignore[assignment]
        return found
    package = Path(__file__).resolve().parent.parent  # resource_extend/, beside or above its schemas
    return package / "_schemas" if (package / "_schemas").is_dir() else package.parent / "schemas"


def module_name(verb: str, direction: str) -> str:
    """The compiled validator's module inside ``resource_extend._validators_<plugin>``."""
    return f"{verb.replace('-', '_')}_{direction}"


def validator(plugin: str, verb: str, direction: str, schemas: str | None = None) -> Validator:
    # One small module per verb and direction: a call imports only the two it checks against.
    name = f"resource_extend._validators_{plugin}.{module_name(verb, direction)}"
    try:
        # __import__ rather than importlib.import_module: the importlib package is one more import a call
        # would pay for (with warnings); the loaded module is then in sys.modules.
        __import__(name)
        module = sys.modules[name]
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(f"resource_extend._validators_{plugin}"):
            raise
        return _compile_from_source(plugin, verb, direction, schemas)
    found: Validator = module.validate
    return found


# A source checkout's validators, compiled once per process: compiling costs 9-37 ms, checking microseconds,
# and a process that serves many calls (the tests, serving in-process) would otherwise pay it on every check.
_compiled: dict[tuple[str, str, str, str | None], Validator] = {}


def _compile_from_source(plugin: str, verb: str, direction: str, schemas: str | None) -> Validator:
    found = _compiled.get((plugin, verb, direction, schemas))
    if found is not None:
        return found
    import fastjsonschema  # source checkouts only

    from resource_extend.formats.schemafiles import handlers, verb_schema

    directory = schema_dir() if schemas is None else _path(schemas)
    schema = verb_schema(directory, plugin, verb, direction)
    compiled: Validator = fastjsonschema.compile(schema, handlers=handlers(directory))
    _compiled[(plugin, verb, direction, schemas)] = compiled
    return compiled


def _path(directory: str) -> Path:
    from pathlib import Path

    return Path(directory)


def check(plugin: str, verb: str, direction: str, document: Any, schemas: str | None = None) -> None:
    """Raise a one-line PluginError naming the offending path when ``document`` breaks the schema.

    ``schemas`` is the plugin's schema directory when it is not the project's (``Plugin.schemas``).

    A document that grows with the number of nodes is checked on one representative of each distinct
    row template or signature (``bigdocs.representatives``); that is the same verdict as checking every
    row, at a cost that no longer grows with the schema's work per row.
    """
    validate = validator(plugin, verb, direction, schemas)
    if verb not in BIG and type(document) is not Rendered:
        try:
            validate(document)
        except ValueError as exc:  # the compiled validators' exception classes derive from ValueError
            raise PluginError(describe(direction, exc)) from None
        return
    # Only get-metrics and get-nodes-deploy-capacity load it (their handlers import it, so that the start
    # preloads it with the verb's code).
    from resource_extend.formats.bigdocs import representatives, whole

    try:
        reduced = representatives(verb, document, direction)
        try:
            validate(document if reduced is None else reduced)
        except ValueError:
            if reduced is None:
                raise
            validate(whole(document))  # the whole document, for the message naming the offending row
            raise
    except ValueError as exc:  # the compiled validators' exception classes derive from ValueError
        raise PluginError(describe(direction, exc)) from None


def describe(direction: str, exc: ValueError) -> str:
    """The one line a schema violation becomes: the path, the rule, and the value that broke it.

    A key the schema does not read (decision 19) is named by its whole path, with the nearest key read at
    that place (``did you mean prod_count_map?``); a string where a list is read shows the list it meant.
    """
    message = getattr(exc, "message", None) or str(exc)
    # Compiled messages call the document "data"; operators know it as the request or response.
    if message.startswith("data"):
        message = direction + message[4:]
    rule = getattr(exc, "rule", None)
    definition = getattr(exc, "definition", None)
    value = getattr(exc, "value", None)
    if rule == "additionalProperties" and isinstance(definition, dict) and isinstance(value, dict):
        unknown = _unknown_key(value, definition)
        if unknown is not None:
            return f"{direction} does not match the schema: {unknown_key_line(direction, exc, unknown, definition)}"
    if hasattr(exc, "value"):  # what was sent, so the line shows the value next to the rule it broke
        message += f", got {_shown(value)}"
        if rule == "type" and isinstance(value, str) and isinstance(definition, dict):
            types = definition.get("type")
            if types == "array" or (isinstance(types, list) and "array" in types):
                message += f": a list is read here, [{_shown(value)}]"
    return f"{direction} does not match the schema: {message}"


def _unknown_key(value: dict[str, Any], definition: dict[str, Any]) -> str | None:
    """The first key of ``value`` (in the order it was written) that ``definition`` does not read."""
    known = definition.get("properties") or {}
    for key in value:
        if key not in known:
            return str(key)
    return None


def unknown_key_line(direction: str, exc: ValueError, key: str, definition: dict[str, Any]) -> str:
    """``request.workload_resource_request.prod_count is an unknown key; did you mean prod_count_map?``"""
    name = getattr(exc, "name", None) or "data"
    where = direction + name[4:] if name.startswith("data") else name
    known = [str(k) for k in definition.get("properties") or {}]
    line = f"{where}.{key} is an unknown key"
    if not known:
        return line + " (this object takes no keys)"
    near = meant(key, known)
    if near is not None:
        return line + f"; did you mean {near}?"
    # A guess far from what was written misleads more than it helps: name what this object reads instead.
    shown = known if len(known) <= 8 else [*known[:8], "..."]
    return line + f"; the keys read here: {', '.join(shown)}"


def meant(word: str, candidates: list[str]) -> str | None:
    """The candidate ``word`` was likely meant to be, or None: the nearest, when it is a few edits away (a
    third of the word, at least two), else the first that holds ``word`` or that ``word`` holds, when the
    shorter is at least half the longer (``node`` for ``nodename``, ``prod_count`` for ``prod_count_map``;
    not ``a`` or ``ode``)."""
    near = nearest(word, candidates)
    if near is not None and edits(word.lower(), near.lower()) <= max(2, len(word) // 3):
        return near
    for candidate in candidates:
        short, long = sorted((word.lower(), candidate.lower()), key=len)
        if short and short in long and 2 * len(short) >= len(long):
            return candidate
    return None


def nearest(word: str, candidates: list[str]) -> str | None:
    """The candidate fewest edits away from ``word`` (case ignored), the first written on a tie."""
    best: tuple[int, str] | None = None
    for candidate in candidates:
        distance = edits(word.lower(), candidate.lower())
        if best is None or distance < best[0]:
            best = (distance, candidate)
    return None if best is None else best[1]


def edits(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions (``nodenmae`` is one edit from ``nodename``)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[len(b)]


def _shown(value: Any) -> str:
    from resource_extend.formats.jsonio import dumps

    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
