"""Where a counted plugin's workloads fit (pure: records and counts in, counts and plans out).

Cards (or NICs) are not placed on devices, only counted per product model, so the schedule is arithmetic.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.goarith import ratio, trunc_div
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import CountedRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.capacity import Limit

# Deploy capacity of a node for a request that wants none of the plugin's resource.
MAX_CAPACITY = 1000000


def node_deploy_capacity(record: CountedRecord, request: ProdMap) -> tuple[int, float, float]:
    """How many workloads of ``request`` fit on the node, with its usage and the request's rate."""
    capacity, _ = _fit(record, request)
    total = prodmap.count(record.capacity)
    return capacity, ratio(prodmap.count(record.usage), total), ratio(prodmap.count(request), total)


def node_deploy_limit(record: CountedRecord, request: ProdMap) -> tuple[int, Limit]:
    """``node_deploy_capacity``'s count and what set it, from the same pass (for ``explain``)."""
    from resource_extend.capacity import Limit  # explain's only: a calculate verb never creates the class

    capacity, product = _fit(record, request)
    if product is None:
        return capacity, Limit("cap", f"no {record.NOUN} asked: the scheduler's cap of {MAX_CAPACITY} per node")
    free, wanted = record.available().get(product, 0), request[product]
    if product not in (record.capacity or {}):
        return capacity, Limit(product, f"{product}: none on the node, {wanted} per workload")
    if free < 0:  # not "-7 free": usage above capacity, which doctor checks
        has = (record.capacity or {}).get(product, 0)
        return 0, Limit(product, f"{product}: over-committed, {has - free} used of {has} ({-free} over; run doctor)")
    return capacity, Limit(product, f"{product}: {free} free, {wanted} per workload")


def _fit(record: CountedRecord, request: ProdMap) -> tuple[int, str | None]:
    """The count, and the product that set it (``None``: the request wants none)."""
    capacity, limiting = MAX_CAPACITY, None
    if prodmap.count(request) > 0:
        available = record.available()
        for product, k in request.items():
            fit = trunc_div(available.get(product, 0), k)
            if fit < capacity or limiting is None:
                capacity, limiting = min(capacity, fit), product
            if capacity <= 0:
                break
    return capacity, limiting


def allocate(available: ProdMap, request: ProdMap, times: int) -> None:
    """Fail unless ``times`` workloads of ``request`` fit into ``available``."""
    for product, k in request.items():
        if available.get(product, 0) < k * times:
            raise PluginError(
                f"cannot alloc a plan, not enough resource: {product} wants {k} x {times}, "
                f"{max(available.get(product, 0), 0)} available"
            )


def realloc_plan(record: CountedRecord, current: MaybeMap, request: MaybeMap) -> tuple[ProdMap, ProdMap]:
    """The workload's new cards and the change to the node's usage, or ``not enough resource``."""
    # The workload's own cards count as free again while its new size is planned.
    available = prodmap.sub(record.capacity, prodmap.sub(record.usage, current))
    wanted = {p: k for p, k in prodmap.add(current, request).items() if k > 0}
    prodmap.validate(wanted, record.NAME)
    allocate(available, wanted, 1)
    return wanted, prodmap.sub(wanted, current)
