"""Checking requests and responses against the JSON Schemas under ``schemas/``.

Executables carry validators that build.py compiled from the schemas (``_validators_<plugin>``); no
schema library is imported on a call. Run from a source checkout, the same schemas are compiled on
first use with fastjsonschema instead. tests/ prove both agree with the ``jsonschema`` package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

from resource_extend.errors import PluginError

if TYPE_CHECKING:
    from pathlib import Path

Validator = Callable[[Any], Any]


def schema_dir() -> Path:
    """build.py copies schemas/ into the package as _schemas; a source checkout reads them in place."""
    from pathlib import Path  # a call never needs it: only help and source checkouts read schema files

    loader = globals().get("__loader__")
    archive = getattr(loader, "archive", None)  # a zipimporter: the executable runs from its archive
    if archive is not None:
        import zipfile

        # zipfile.Path reads like a Path (/, read_text, glob), which is all schemabundle asks of one.
        found: Path = zipfile.Path(archive, getattr(loader, "prefix", "") + "_schemas/")  # type: ignore[assignment]
        return found
    package = Path(__file__).resolve().parent
    return package / "_schemas" if (package / "_schemas").is_dir() else package.parent / "schemas"


def module_name(verb: str, direction: str) -> str:
    """The compiled validator's module inside ``resource_extend._validators_<plugin>``."""
    return f"{verb.replace('-', '_')}_{direction}"


def validator(plugin: str, verb: str, direction: str) -> Validator:
    # One small module per verb and direction: a call imports only the two it checks against.
    try:
        module = importlib.import_module(f"resource_extend._validators_{plugin}.{module_name(verb, direction)}")
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(f"resource_extend._validators_{plugin}"):
            raise
        return _compile_from_source(plugin, verb, direction)
    found: Validator = module.validate
    return found


def _compile_from_source(plugin: str, verb: str, direction: str) -> Validator:
    import fastjsonschema  # source checkouts only

    from resource_extend.schemabundle import bundle

    compiled: Validator = fastjsonschema.compile(bundle(schema_dir(), plugin, verb, direction))
    return compiled


def check(plugin: str, verb: str, direction: str, document: Any) -> None:
    """Raise a one-line PluginError naming the offending path when ``document`` breaks the schema."""
    try:
        validator(plugin, verb, direction)(document)
    except ValueError as exc:  # the compiled validators' exception classes derive from ValueError
        message = getattr(exc, "message", None) or str(exc)
        # Compiled messages call the document "data"; operators know it as the request or response.
        if message.startswith("data"):
            message = direction + message[4:]
        if hasattr(exc, "value"):  # what was sent, so the line shows the value next to the rule it broke
            message += f", got {_shown(exc.value)}"
        raise PluginError(f"{direction} does not match the schema: {message}") from None


def _shown(value: Any) -> str:
    from resource_extend.jsonio import dumps

    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
