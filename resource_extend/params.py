"""Reading request fields the way the reference's field helpers do.

Core and the reference agree on lenient readers for scalar fields (``nodename`` that is not a string is
"empty", any present non-false value of a flag is true) and on strict decoding for resource objects.
These helpers keep those rules in one place so every verb reads its request the same way.
"""

from __future__ import annotations

import math
import re

from resource_extend.errors import PluginError

# Not imported on the call path: typing exists for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    JSONObject = dict[str, Any]
else:
    JSONObject = dict

_DECIMAL = re.compile(r"[+-]?[0-9]+\Z")
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def string(req: JSONObject, key: str) -> str:
    """The value when it is a JSON string, else ``""`` (numbers are not converted)."""
    value = req.get(key)
    return value if isinstance(value, str) else ""


def string_list(req: JSONObject, key: str) -> list[str]:
    """The string elements of an array, in order; anything else reads as an empty list."""
    value = req.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def flag(req: JSONObject, key: str) -> bool:
    """Absent is false, ``false`` is false, any other present value (even ``null`` or ``0``) is true."""
    if key not in req:
        return False
    return req[key] is not False


def integer(req: JSONObject, key: str) -> int:
    """A number rounded half to even, a decimal string parsed, anything else 0."""
    value = req.get(key)
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value) if math.isfinite(value) else 0
    if isinstance(value, str) and _DECIMAL.match(value):
        parsed = int(value)
        return parsed if INT64_MIN <= parsed <= INT64_MAX else 0
    return 0


def obj(req: JSONObject, key: str) -> JSONObject | None:
    """A shallow copy of the value when it is an object, else ``None`` (absent)."""
    value = req.get(key)
    return dict(value) if isinstance(value, dict) else None


def obj_list(req: JSONObject, key: str) -> list[JSONObject] | None:
    """The object elements of an array; ``None`` when the value is not an array."""
    value = req.get(key)
    if not isinstance(value, list):
        return None
    return [dict(item) for item in value if isinstance(item, dict)]


def nodename(req: JSONObject) -> str:
    """The single-node verbs' ``nodename``: a non-empty string or the reference's error."""
    name = string(req, "nodename")
    if not name:
        raise PluginError("node name is empty")
    return name


def nodenames(req: JSONObject) -> list[str]:
    """The multi-node verbs' ``nodenames``: at least one string or the reference's error."""
    names = string_list(req, "nodenames")
    if not names:
        raise PluginError("node name is empty")
    return names


def bulk_nodenames(req: JSONObject) -> list[str]:
    """``nodenames`` of the verbs core asks in bulk (decision 13): ``[]`` or ``null`` is no nodes, an
    answer; a missing key, or names none of which is a string, is still ``node name is empty``."""
    if "nodenames" in req and req["nodenames"] in (None, []):
        return []
    return nodenames(req)


def int64_problem(where: str, value: int) -> str | None:
    """Why ``value`` may not be stored at ``where``: past int64, which no reader of the record accepts."""
    if INT64_MIN <= value <= INT64_MAX:
        return None
    bound = f"max {INT64_MAX}" if value > 0 else f"min {INT64_MIN}"
    return f"{where} would be {value}, past int64 ({bound})"


# core's enginetypes.Info fields that the reference decodes with a Go type; unknown keys are ignored.
_INFO_FIELDS = {"Type": str, "ID": str, "NCPU": int, "MemTotal": int, "StorageTotal": int}


def engine_info(req: JSONObject) -> JSONObject:
    """add-node's ``info`` (the engine report), its typed fields checked as the reference's strict decoding
    does; anything that is not an object reads as no report (``{}``)."""
    info = obj(req, "info")
    if info is None:
        return {}
    for name, kind in _INFO_FIELDS.items():
        value = info.get(name)
        if value is None:
            continue
        if kind is int:
            strict_int(value, f"info.{name}")
        elif not isinstance(value, str):
            raise PluginError(f"json: cannot unmarshal info.{name}: want a string")
    return info


def strict_int(value: Any, where: str) -> int:
    """Decode a JSON number into an int64 the way the reference's JSON round trip does.

    The reference holds request numbers as doubles, re-encodes them and decodes into an integer, so
    ``3.0`` and ``1e3`` are integers while ``1.5``, strings, booleans and ``null`` are errors.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PluginError(f"json: cannot unmarshal {_kind(value)} into {where} of type int64")
    number: int
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer() or abs(value) >= 1e21:
            raise PluginError(f"json: cannot unmarshal number {value!r} into {where} of type int64")
        number = int(value)
    else:
        number = value
    if not INT64_MIN <= number <= INT64_MAX:
        raise PluginError(f"json: cannot unmarshal number {number} into {where} of type int64 (out of range)")
    return number


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "number"
