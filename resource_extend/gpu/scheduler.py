"""Where GPU workloads fit (pure: records and card counts in, counts and plans out).

Cards are not placed on devices, only counted per product model, so the schedule is arithmetic.
"""

from __future__ import annotations

from resource_extend.capacity import ratio, trunc_div
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap, ProdMap
from resource_extend.gpu.record import GpuRecord

# Deploy capacity of a node for a request that wants no GPU.
MAX_CAPACITY = 1000000


def node_deploy_capacity(record: GpuRecord, request: ProdMap) -> tuple[int, float, float]:
    """How many workloads of ``request`` fit on the node, with its usage and the request's rate."""
    capacity = MAX_CAPACITY
    if prodmap.count(request) > 0:
        available = record.available()
        for product, k in request.items():
            capacity = min(capacity, trunc_div(available.get(product, 0), k))
            if capacity <= 0:
                break
    total = prodmap.count(record.capacity)
    return capacity, ratio(prodmap.count(record.usage), total), ratio(prodmap.count(request), total)


def allocate(available: ProdMap, request: ProdMap, times: int) -> None:
    """Fail unless ``times`` workloads of ``request`` fit into ``available``."""
    for product, k in request.items():
        if available.get(product, 0) < k * times:
            raise PluginError(
                f"cannot alloc a plan, not enough resource: {product} wants {k} x {times}, "
                f"{max(available.get(product, 0), 0)} available"
            )


def realloc_plan(record: GpuRecord, current: MaybeMap, request: MaybeMap) -> tuple[ProdMap, ProdMap]:
    """The workload's new cards and the change to the node's usage, or ``not enough resource``."""
    # The workload's own cards count as free again while its new size is planned.
    available = prodmap.sub(record.capacity, prodmap.sub(record.usage, current))
    wanted = {p: k for p, k in prodmap.add(current, request).items() if k > 0}
    prodmap.validate(wanted)
    allocate(available, wanted, 1)
    return wanted, prodmap.sub(wanted, current)
