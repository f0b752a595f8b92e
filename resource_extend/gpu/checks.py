"""What ``resource-<plugin> doctor`` checks in one stored record of a counted plugin (pure: a decoded record in,
findings out)."""

from __future__ import annotations

from resource_extend.gpu.prodmap import MaybeMap, named
from resource_extend.gpu.record import CountedRecord
from resource_extend.plugin.diagnosis import ABOVE_CAPACITY, NEGATIVE, NO_CAPACITY, Finding, GoType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The reference's record: NodeResourceInfo{Capacity, Usage *NodeResource{ProdCountMap map[string]int}}.
_RESOURCE: GoType = ("struct", {"prod_count_map": ("map", "int")})
GO_RECORD: GoType = ("struct", {"capacity": _RESOURCE, "usage": _RESOURCE})


def check_record(node: str, record: CountedRecord) -> list[Finding]:
    """Counts a readable record should not hold: negative ones, and usage the capacity does not cover."""
    found = _negative(node, "capacity", record.capacity) + _negative(node, "usage", record.usage)
    capacity = record.capacity or {}
    for product, used in sorted((record.usage or {}).items()):
        if used <= 0:
            continue
        if product not in capacity:
            found.append(Finding(node, NO_CAPACITY, f"usage has {used} x {product}, capacity has none"))
        elif used > capacity[product]:
            found.append(Finding(node, ABOVE_CAPACITY, f"{product}: usage {used} > capacity {capacity[product]}"))
    return found


def _negative(node: str, side: str, counts: MaybeMap) -> list[Finding]:
    return [
        Finding(node, NEGATIVE, f"{side} {product} is {count}")
        for product, count in sorted((counts or {}).items())
        if count < 0
    ]


def corrected(doc: dict[str, Any]) -> dict[str, Any]:
    """The record ``doctor`` proposes from a salvaged one (``diagnosis.salvage``): capacity without counts
    below 1 or blank product names (a write refuses both), usage only of products the capacity has, and at
    most their capacity."""
    capacity = {p: k for p, k in _counts(doc, "capacity").items() if k > 0 and named(p)}
    usage = {p: min(k, capacity[p]) for p, k in _counts(doc, "usage").items() if k > 0 and p in capacity}
    return {"capacity": {"prod_count_map": capacity}, "usage": {"prod_count_map": usage}}


def _counts(doc: dict[str, Any], side: str) -> dict[str, int]:
    counts: dict[str, int] = (doc.get(side) or {}).get("prod_count_map") or {}
    return counts
