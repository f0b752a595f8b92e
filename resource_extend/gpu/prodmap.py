"""Counts per product model: the one value type of a counted plugin (GPU cards per model), and its arithmetic.

A map is a plain ``dict[str, int]``. ``None`` stands for a map that was never set (the reference writes
``"prod_count_map": null`` for it); every operation treats it as empty.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats.decoding import plain_int64s, strict_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypedDict

    class ProdMapJSON(TypedDict):
        """The wire and stored shape of a card-count map."""

        prod_count_map: dict[str, int] | None


ProdMap = dict[str, int]
if TYPE_CHECKING:
    MaybeMap = ProdMap | None
else:
    # Only the type checker reads it; at run time it is a subscript of typeshim.Generic, which ignores it, and
    # `X | None` of a generic alias cannot be evaluated before Python 3.10 (decision 16: 3.9 runs this).
    MaybeMap = ProdMap

# Go's strings.TrimSpace trims Unicode White_Space; str.strip() also trims U+001C..U+001F.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


def count(m: MaybeMap) -> int:
    return sum(m.values()) if m else 0


def add(m: MaybeMap, n: MaybeMap) -> ProdMap:
    """``m + n`` per product; products that reach zero disappear (negatives stay)."""
    return _combine(m, n, 1)


def sub(m: MaybeMap, n: MaybeMap) -> ProdMap:
    """``m - n`` per product; products that reach zero disappear (negatives stay)."""
    return _combine(m, n, -1)


def _combine(m: MaybeMap, n: MaybeMap, sign: int) -> ProdMap:
    result = dict(m or {})
    for product, k in (n or {}).items():
        total = result.get(product, 0) + sign * k
        if total:
            result[product] = total
        else:
            result.pop(product, None)
    return result


def validate(m: MaybeMap, name: str) -> None:
    """Every count positive and every product named, else the reference's ``invalid <name> map/product``
    (``name``: the plugin's, ``gpu``)."""
    for product, k in (m or {}).items():
        if k <= 0:
            raise PluginError(
                f"count is less than or equal to zero: <product: {product}, count: {k}>: invalid {name} map"
            )
        if not named(product):
            raise PluginError(f"product is empty: invalid {name} product (product {product!r})")


def named(product: str) -> bool:
    """Whether ``product`` names a model: not blank as Go's ``strings.TrimSpace`` sees blanks."""
    return bool(product.strip(_GO_SPACE))


def validate_products(m: MaybeMap, name: str) -> None:
    """Only the blank-product check: realloc requests may carry negative counts."""
    for product in m or {}:
        if not named(product):
            raise PluginError(f"product is empty: invalid {name} product (product {product!r})")


def parse(resource: Mapping[str, Any] | None, where: str) -> MaybeMap:
    """Strictly decode ``{"prod_count_map": {...}}``: counts must be integers; absent object or key → None."""
    if resource is None:
        return None
    raw = resource.get("prod_count_map")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise PluginError(f"json: cannot unmarshal {where}.prod_count_map: want an object of counts")
    if plain_int64s(raw.values()):  # what a stored record holds: no count needs decoding
        return dict(raw)
    return {product: strict_int(k, f"{where}.prod_count_map[{product!r}]") for product, k in raw.items()}


def to_json(m: MaybeMap) -> ProdMapJSON:
    """The wire shape; map keys sorted as Go's encoder writes them."""
    return {"prod_count_map": None if m is None else {p: m[p] for p in sorted(m)}}
