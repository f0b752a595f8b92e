"""Checking requests and responses against the JSON Schemas under ``schemas/``.

Executables carry validators that build.py compiled from the schemas (``_validators_<plugin>``); no
schema library is imported on a call. Run from a source checkout, the same schemas are compiled on
first use with fastjsonschema instead. tests/ prove both agree with the ``jsonschema`` package.
"""

from __future__ import annotations

import sys

from resource_extend.decoding import INT64_MAX
from resource_extend.errors import PluginError
from resource_extend.jsonio import Rendered, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable

    Validator = Callable[[Any], Any]


def schema_dir() -> Path:
    """build.py copies schemas/ into the package as _schemas; a source checkout reads them in place."""
    from pathlib import Path  # a call never needs it: only help and source checkouts read schema files

    loader = globals().get("__loader__")
    archive = getattr(loader, "archive", None)  # zipimport's loader, or the start's CodeTable: in the archive
    if archive is not None and __file__.startswith(archive + "/"):
        import zipfile

        # zipfile.Path reads like a Path (/, read_text, glob), which is all schemafiles asks of one.
        inside = __file__[len(archive) + 1 :].rpartition("/")[0] + "/_schemas/"
        found: Path = zipfile.Path(archive, inside)  # type: ignore[assignment]
        return found
    package = Path(__file__).resolve().parent
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

    from resource_extend.schemafiles import handlers, verb_schema

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
    row template or signature (see ``representatives``); that is the same verdict as checking every row,
    at a cost that no longer grows with the schema's work per row.
    """
    validate = validator(plugin, verb, direction, schemas)
    try:
        reduced = representatives(verb, document, direction)
        try:
            validate(document if reduced is None else reduced)
        except ValueError:
            if reduced is None:
                raise
            validate(_values(document))  # the whole document, for the message naming the offending row
            raise
    except ValueError as exc:  # the compiled validators' exception classes derive from ValueError
        raise PluginError(describe(direction, exc)) from None


def describe(direction: str, exc: ValueError) -> str:
    """The one line a schema violation becomes: the path, the rule, and the value that broke it."""
    message = getattr(exc, "message", None) or str(exc)
    # Compiled messages call the document "data"; operators know it as the request or response.
    if message.startswith("data"):
        message = direction + message[4:]
    if hasattr(exc, "value"):  # what was sent, so the line shows the value next to the rule it broke
        message += f", got {_shown(exc.value)}"
    return f"{direction} does not match the schema: {message}"


def _shown(value: Any) -> str:
    from resource_extend.jsonio import dumps

    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------------------------------------------------
# Big responses. get-metrics answers are written as JSON text while they are built (jsonio.Rendered), one
# template per metric name, so each template's first row, parsed back, stands for all of its rows.
# get-nodes-deploy-capacity entries and get-metrics request nodes are values: each is summarised by a
# signature that captures everything its schema checks, and the schema runs once per distinct signature.
# Two items with the same signature get the same verdict from the schema, so the answer is the full
# check's; only its cost changes. Below ROWS items the document is checked as it is.

ROWS = 64


_ABSENT = object()


def _metrics_node(node: Any) -> tuple[Any, ...]:
    """Schema ``metrics_node``: the node's type and, for an object, the types of podname and nodename (or
    that they are absent); other keys are not looked at."""
    if type(node) is not dict:
        return (type(node),)
    return (dict, type(node.get("podname", _ABSENT)), type(node.get("nodename", _ABSENT)))


def _capacity_entry(entry: Any) -> tuple[Any, ...]:
    """Schema ``deploy_capacity_entry``: keys, the type of each value, and capacity within 1..int64."""
    if type(entry) is not dict:
        return (type(entry),)
    capacity = entry.get("capacity")
    return (
        tuple(entry),
        type(capacity),
        type(capacity) is int and 0 < capacity <= INT64_MAX,
        type(entry.get("usage")),
        type(entry.get("rate")),
        type(entry.get("weight")),
    )


def representatives(verb: str, document: Any, direction: str = "response") -> Any:
    """The document cut down to one item of each template or signature, or None to check it whole.

    Covers the responses of get-metrics (written as text, see ``jsonio.Rendered``) and
    get-nodes-deploy-capacity (a map of node entries), and get-metrics requests (an array of nodes), of
    both plugins. Every other document is checked whole.
    """
    if direction == "request":
        nodes = document.get("nodes") if verb == "get-metrics" and type(document) is dict else None
        if type(nodes) is list and len(nodes) > ROWS:
            first: dict[tuple[Any, ...], Any] = {}
            for node in nodes:
                first.setdefault(_metrics_node(node), node)
            return {**document, "nodes": list(first.values())}
        return None
    if type(document) is Rendered:
        return [loads(sample) for sample in document.samples.values()]
    if verb == "get-nodes-deploy-capacity" and type(document) is dict:
        entries = document.get("nodes_deploy_capacity_map")
        if type(entries) is dict and len(entries) > ROWS:
            seen: dict[tuple[Any, ...], tuple[str, Any]] = {}
            for node, entry in entries.items():
                seen.setdefault(_capacity_entry(entry), (node, entry))
            return {**document, "nodes_deploy_capacity_map": dict(seen.values())}
    return None


def _values(document: Any) -> Any:
    return loads(document.text()) if type(document) is Rendered else document
