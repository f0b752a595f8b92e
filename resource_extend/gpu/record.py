"""A counted plugin's node record stored in etcd: ``{"capacity": {"prod_count_map": …}, "usage": {…}}``, and how
a set-node-resource-* call or the node's workloads change its sides.

Each plugin's manifest subclasses ``CountedRecord`` with its words (``NAME``, ``NOUN``): they name the plugin
in the record's refusals (``invalid gpu map``) and reach every function that is given a record.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.formats.decoding import int64_problem, plain_int64s
from resource_extend.gpu import prodmap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Self, TypedDict

    from resource_extend.gpu.prodmap import MaybeMap, ProdMap, ProdMapJSON

    class CountedRecordJSON(TypedDict):
        capacity: ProdMapJSON
        usage: ProdMapJSON


SIDES = ("capacity", "usage")


class CountedRecord:
    __slots__ = ("capacity", "usage")

    # The plugin's name as its messages, metrics and the engine's report spell it ("gpu"), and its noun ("GPU").
    NAME: str
    NOUN: str

    def __init__(self, capacity: MaybeMap, usage: MaybeMap) -> None:
        self.capacity = capacity
        self.usage = usage

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.capacity == other.capacity and self.usage == other.usage

    __hash__ = None  # type: ignore[assignment]  # mutable maps inside, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"{type(self).__name__}(capacity={self.capacity!r}, usage={self.usage!r})"

    @classmethod
    def empty(cls) -> Self:
        return cls({}, {})

    @classmethod
    def decode(cls, data: bytes) -> Self:
        return cls.from_json(jsonio.load_document(data))

    def encode(self) -> bytes:
        return jsonio.dump_record(self.to_json())

    def checked(self) -> Self:
        """The record itself when it may be written, else a PluginError naming every problem."""
        found = write_problems(self)
        if found:
            raise PluginError("; ".join(found))
        return self

    def problems(self) -> list[str]:
        return problems(self)

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        if type(doc) is dict:
            # A record as both plugins store it (each side's map an object of plain int64 counts) reads with
            # its counts checked in one go: 1000 are decoded per get-metrics call. Anything else goes below.
            capacity, usage = doc.get("capacity"), doc.get("usage")
            if type(capacity) is dict and type(usage) is dict:
                held, used = capacity.get("prod_count_map"), usage.get("prod_count_map")
                if type(held) is dict and type(used) is dict and plain_int64s([*held.values(), *used.values()]):
                    return cls(dict(held), dict(used))
        return cls.from_fields(doc)

    @classmethod
    def from_fields(cls, doc: Any) -> Self:
        """``from_json`` field by field, with the errors that name what is wrong (and every shape it reads)."""
        # Reading overlays the stored JSON on an empty record: a missing side reads as empty.
        if not isinstance(doc, dict):
            raise PluginError(f"a {cls.NOUN} record must be a JSON object")
        sides: list[MaybeMap] = []
        for side in SIDES:
            value = doc.get(side)
            if value is None:
                sides.append({})
            elif isinstance(value, dict):
                sides.append(prodmap.parse(value, side))
            else:
                raise PluginError(f"{side} must be an object")
        return cls(sides[0], sides[1])

    def with_sides(self, capacity: MaybeMap, usage: MaybeMap) -> Self:
        """A record of this plugin with these sides."""
        return self.__class__(capacity, usage)

    def to_json(self) -> CountedRecordJSON:
        return {"capacity": prodmap.to_json(self.capacity), "usage": prodmap.to_json(self.usage)}

    def available(self) -> prodmap.ProdMap:
        return prodmap.sub(self.capacity, self.usage)


def write_problems(record: CountedRecord) -> list[str]:
    """Why the record may not be written: a count past int64 (decision 9), not positive, or unnamed.

    Usage above capacity is deliberately allowed on write: the reference allows it, and core sets usage
    absolutely from what the engine reports.
    """
    problems = []
    for side, counts in ((SIDES[0], record.capacity), (SIDES[1], record.usage)):
        for product, k in sorted((counts or {}).items()):
            problem = int64_problem(f"{side}.prod_count_map[{product!r}]", k)
            if problem:
                problems.append(f"{problem}: invalid {record.NAME} map")
        try:
            prodmap.validate(counts, record.NAME)
        except PluginError as exc:
            problems.append(f"invalid {side}: {exc}")
    return problems


def problems(record: CountedRecord) -> list[str]:
    """Everything wrong with a record, for an operator's check of the store: what a write refuses, and
    usage that no capacity backs (above its product's capacity, or on a product the node lacks)."""
    found = write_problems(record)
    capacity = record.capacity or {}
    for product, k in sorted((record.usage or {}).items()):
        if product not in capacity:
            found.append(f"usage.prod_count_map[{product!r}] is {k} on a product the capacity lacks")
        elif k > capacity[product]:
            found.append(f"usage.prod_count_map[{product!r}] is {k}, above its capacity {capacity[product]}")
    return found


def combine(origin: MaybeMap, resource: MaybeMap, workloads: list[MaybeMap], delta: bool, incr: bool) -> ProdMap:
    """The new capacity or usage after a set-node-resource-* call.

    Absolute mode (not ``delta``) starts from nothing and always adds; delta mode adds to or subtracts
    from ``origin``. ``resource`` (the request's, else its ``resource``) wins over ``workloads``.
    """
    if not delta:
        result: ProdMap = {}
        incr = True
    else:
        result = dict(origin or {})
    op: Callable[[MaybeMap, MaybeMap], ProdMap] = prodmap.add if incr else prodmap.sub
    if resource is not None:
        return op(result, resource)
    for workload in workloads:
        result = op(result, workload)
    return result


def reconcile_usage(stored: MaybeMap, workloads: list[MaybeMap]) -> tuple[ProdMap, list[str]]:
    """The usage the workloads on the node add up to, and where the stored usage differs from it."""
    actual: ProdMap = {}
    for workload in workloads:
        actual = prodmap.add(actual, workload)
    diffs = []
    if prodmap.count(actual) != prodmap.count(stored):
        diffs.append(f"node.usage != sum(workload.request): {prodmap.count(stored)} != {prodmap.count(actual)}")
    usage = stored or {}
    for product, k in actual.items():
        if product not in usage:
            diffs.append(f"{product} not in usage")
        elif k != usage[product]:
            diffs.append(f"{product}: actual({k}) != usage({usage[product]})")
    return actual, diffs
