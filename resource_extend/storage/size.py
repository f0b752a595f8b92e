"""Human-readable sizes, read exactly as core's ``ParseRAMInHuman`` over go-units v0.5.0 ``RAMInBytes`` does.

Every unit is binary (``1T`` is 2**40 bytes) and a plain integer is taken verbatim as bytes, so values an
operator wrote for the Go plugin mean the same thing here.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.formats.decoding import INT64_MAX, INT64_MIN, decimal_int64, parse_float64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NUMBER_END = frozenset("0123456789. ")
_MULTIPLIERS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(text: str) -> int:
    """Bytes for ``512``, ``-1``, ``1G``, ``1.5 GiB``, ``-2T``...; raises ``PluginError`` otherwise."""
    if text == "":
        return 0
    value = decimal_int64(text)
    if value is not None:
        return value
    if text.startswith("-"):
        return -_ram_in_bytes(text[1:])
    return _ram_in_bytes(text)


def size_param(req: dict[str, Any], key: str) -> int:
    """A request size that may be a human-size string or a plain byte count (absent or null is 0)."""
    value = req.get(key)
    if value is None:
        return 0
    if isinstance(value, str):
        return parse_size(value)
    size = decoding.integer(req, key)
    # A JSON number past int64 is no size core could send (Go's int64); refuse it here, before it is
    # added to anything.
    if not INT64_MIN <= size <= INT64_MAX:
        raise PluginError(f"invalid size: {key} {value} is beyond int64: give a byte count up to {INT64_MAX}")
    return size


def _ram_in_bytes(text: str) -> int:
    sep = max((i for i, char in enumerate(text) if char in _NUMBER_END), default=-1)
    if sep < 0:
        raise PluginError(f"invalid size: '{text}'")
    # One space may separate the number from its unit; it belongs to neither.
    number = text[:sep] if text[sep] == " " else text[: sep + 1]
    suffix = text[sep + 1 :]

    size = _parse_float(number)
    if size < 0:
        raise PluginError(f"invalid size: '{text}'")
    if not suffix:
        return int(size)

    # go-units measures the suffix in bytes before lower-casing it.
    if len(suffix.encode()) > 3:
        raise _bad_suffix(suffix)
    lowered = suffix.lower()
    if lowered[0] == "b":
        if len(lowered) > 1:
            raise _bad_suffix(suffix)
        return int(size)
    multiplier = _MULTIPLIERS.get(lowered[0])
    if multiplier is None:
        raise _bad_suffix(suffix)
    if (len(lowered) == 2 and lowered[1] != "b") or (len(lowered) == 3 and lowered[1:] != "ib"):
        raise _bad_suffix(suffix)
    # The product is formed in float64 and truncated, as the reference does.
    return int(size * float(multiplier))


def _bad_suffix(suffix: str) -> PluginError:
    # The reference lower-cases the unit in its message; the operator's own spelling is easier to find.
    return PluginError(f"invalid suffix: '{suffix}' (units: B, K, M, G, T, P, alone or with B or iB, e.g. 10G)")


def _parse_float(number: str) -> float:
    try:
        return parse_float64(number)
    except PluginError as cause:
        raise PluginError(f"invalid size: {cause}") from None
