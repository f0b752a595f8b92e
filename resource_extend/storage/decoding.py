"""Reading stored and passed-back JSON objects field by field, as Go decodes them into a struct.

Known keys must hold the declared type (``null`` reads as the zero value), unknown keys are ignored, and a
mismatch is an error naming the field, so a corrupt record or resource fails loudly instead of reading as 0.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.params import strict_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def object_or_none(value: Any, where: str) -> dict[str, Any] | None:
    """An object, or ``None`` for null."""
    if value is None or isinstance(value, dict):
        return value
    raise _mismatch(value, where, "object")


def int_field(source: dict[str, Any], key: str, where: str) -> int:
    value = source.get(key)
    return 0 if value is None else strict_int(value, f"{where}.{key}")


def str_field(source: dict[str, Any], key: str, where: str) -> str:
    value = source.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise _mismatch(value, f"{where}.{key}", "string")


def list_field(source: dict[str, Any], key: str, where: str) -> list[Any] | None:
    """The array, or ``None`` for an absent or null field (Go's nil slice)."""
    value = source.get(key)
    if value is None or isinstance(value, list):
        return value
    raise _mismatch(value, f"{where}.{key}", "array")


def str_list(values: list[Any], where: str) -> list[str]:
    """Every element as a string; ``null`` elements read as ``""``."""
    result = []
    for value in values:
        if value is None:
            result.append("")
        elif isinstance(value, str):
            result.append(value)
        else:
            raise _mismatch(value, where, "string")
    return result


def _mismatch(value: Any, where: str, expected: str) -> PluginError:
    if isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, (int, float)):
        kind = "number"
    elif isinstance(value, str):
        kind = "string"
    elif isinstance(value, list):
        kind = "array"
    else:
        kind = "object"
    return PluginError(f"json: cannot unmarshal {kind} into {where} of type {expected}")
