"""Go's decoding rules, written once: int64 bounds, decimal and float syntax, JSON type names, reading
stored and passed-back JSON objects field by field as Go decodes them into a struct, and the lenient readers
of request fields the reference's field helpers are (``string``, ``flag``, ``integer``, ``obj``, ...).

Known keys must hold the declared type (``null`` reads as the zero value), unknown keys are ignored, and a
mismatch is an error naming the field, so a corrupt record or resource fails loudly instead of reading as 0.
Pure: no I/O.
"""

from __future__ import annotations

from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def ascii_digits(text: str) -> bool:
    """``[0-9]+``: ``str.isdigit`` alone also takes other scripts' digits and superscripts.

    This and the checks below are written by hand rather than as regular expressions: ``re`` would be one
    more import every call pays. tests/unit/formats/test_decoding.py holds them to the expressions in their
    docstrings.
    """
    return text.isascii() and text.isdigit()


def control_character(text: str) -> str | None:
    """The first C0 or C1 control character of ``text`` (``[\\x00-\\x1f\\x7f-\\x9f]``), or ``None``: what
    node names (decision 10) and volume devices (decision 14) may not hold."""
    return next((char for char in text if char < " " or "\x7f" <= char <= "\x9f"), None)


def is_decimal(text: str) -> bool:
    """strconv.ParseInt's base-10 syntax, ``[+-]?[0-9]+`` in ASCII digits."""
    return ascii_digits(text[1:] if text[:1] in ("+", "-") else text)


def is_go_float(text: str) -> bool:
    """strconv.ParseFloat's decimal syntax, ``[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?``.

    Hex floats, digit separators, Inf and NaN are deliberately not accepted.
    """
    if not text.isascii():
        return False
    body = text[1:] if text[:1] in ("+", "-") else text
    head, sep, exponent = body.replace("E", "e").partition("e")
    if sep and not (exponent[1:] if exponent[:1] in ("+", "-") else exponent).isdigit():
        return False
    whole, _, fraction = head.partition(".")
    if (whole and not whole.isdigit()) or (fraction and not fraction.isdigit()):
        return False
    return bool(whole or fraction)


def json_kind(value: Any) -> str:
    """The name Go's decoder gives a JSON value in its errors: null, bool, string, array, object, number."""
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


def decimal_int64(text: str) -> int | None:
    """``text`` as strconv.ParseInt(text, 10, 64) reads it, or ``None`` when that fails (syntax or range)."""
    if not is_decimal(text):
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


def parse_int64(text: str) -> int:
    """strconv.ParseInt(text, 10, 64), failing with its own words."""
    value = decimal_int64(text)
    if value is None:
        why = "value out of range" if is_decimal(text) else "invalid syntax"
        raise PluginError(f'strconv.ParseInt: parsing "{text}": {why}')
    return value


def parse_float64(text: str) -> float:
    """strconv.ParseFloat(text, 64) for decimal text, failing with its own words."""
    if not is_go_float(text):
        raise PluginError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise PluginError(f'strconv.ParseFloat: parsing "{text}": value out of range')
    return value


def int64_problem(where: str, value: int) -> str | None:
    """Why ``value`` may not be stored at ``where``: past int64, which no reader of the record accepts."""
    if INT64_MIN <= value <= INT64_MAX:
        return None
    bound = f"max {INT64_MAX}" if value > 0 else f"min {INT64_MIN}"
    return f"{where} would be {value}, past int64 ({bound})"


def strict_int(value: Any, where: str) -> int:
    """Decode a JSON number into an int64 the way the reference's JSON round trip does.

    The reference holds request numbers as doubles, re-encodes them and decodes into an integer, so
    ``3.0`` and ``1e3`` are integers while ``1.5``, strings, booleans and ``null`` are errors.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PluginError(f"json: cannot unmarshal {json_kind(value)} into {where} of type int64")
    number: int
    if isinstance(value, float):
        if not value.is_integer() or abs(value) >= 1e21:  # is_integer() is False for inf and nan too
            raise PluginError(f"json: cannot unmarshal number {value!r} into {where} of type int64")
        number = int(value)
    else:
        number = value
    if not INT64_MIN <= number <= INT64_MAX:
        raise PluginError(f"json: cannot unmarshal number {number} into {where} of type int64 (out of range)")
    return number


def object_or_none(value: Any, where: str) -> dict[str, Any] | None:
    """An object, or ``None`` for null."""
    if value is None or isinstance(value, dict):
        return value
    raise _mismatch(value, where, "object")


def int_field(source: dict[str, Any], key: str, where: str) -> int:
    value = source.get(key)
    # A stored record holds plain int64s: answer those before building the error context a slip would need
    # (records of 1000 nodes are decoded per get-metrics or capacity call, 18 numbers each).
    if value.__class__ is int and INT64_MIN <= value <= INT64_MAX:
        return value
    return 0 if value is None else strict_int(value, f"{where}.{key}")


_PLAIN_INT = frozenset((int,))


def plain_int64s(values: Collection[Any]) -> bool:
    """Whether every value is a plain int within int64, which a field reader would return unchanged.

    Checked in C over the whole collection (types, then the extremes), so decoding a stored record, whose
    numbers are all such ints, skips reading them one by one (1000 records per get-metrics or capacity
    call, 18 numbers each); anything else goes the way of the field readers and their errors.
    """
    if not {*map(type, values)} <= _PLAIN_INT:
        return False
    return not values or (min(values) >= INT64_MIN and max(values) <= INT64_MAX)


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
    return PluginError(f"json: cannot unmarshal {json_kind(value)} into {where} of type {expected}")


# -- request fields, read as the reference's field helpers read them ---------------------------------------
# Core and the reference agree on lenient readers for scalar fields (a ``nodename`` that is not a string is
# "empty", any present non-false value of a flag is true); every plugin's payloads and the shared envelope
# read their fields with these.


def string(req: dict[str, Any], key: str) -> str:
    """The value when it is a JSON string, else ``""`` (numbers are not converted)."""
    value = req.get(key)
    return value if isinstance(value, str) else ""


def string_list(req: dict[str, Any], key: str) -> list[str]:
    """The string elements of an array, in order; anything else reads as an empty list."""
    value = req.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def flag(req: dict[str, Any], key: str) -> bool:
    """Absent is false, ``false`` is false, any other present value (even ``null`` or ``0``) is true."""
    if key not in req:
        return False
    return req[key] is not False


def integer(req: dict[str, Any], key: str) -> int:
    """A number rounded half to even, a decimal string parsed, anything else 0."""
    value = req.get(key)
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value) if value - value == 0 else 0  # finite: inf - inf and nan - nan are nan (no math import)
    parsed = decimal_int64(value) if isinstance(value, str) else None
    return 0 if parsed is None else parsed


def obj(req: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A shallow copy of the value when it is an object, else ``None`` (absent)."""
    value = req.get(key)
    return dict(value) if isinstance(value, dict) else None


def obj_list(req: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    """The object elements of an array; ``None`` when the value is not an array."""
    value = req.get(key)
    if not isinstance(value, list):
        return None
    return [dict(item) for item in value if isinstance(item, dict)]
