"""What calculate-deploy of both plugins shares: how many workloads a call may plan, and the node it plans on.

A call plans every workload in memory and answers them all at once, so the count is bounded where the
answer still fits core's 30 s call timeout comfortably (docs/protocol.md "Huge counts").
"""

from __future__ import annotations

from resource_extend.errors import NodeNotExists, PluginError
from resource_extend.verb import Call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from resource_extend.store import Record

    R = TypeVar("R", bound=Record)

# 100000 identical storage plans took 3.3 s and 250 MB on the 2-core reference machine (docs/reliability.md);
# ten times that took 95 s and 2.3 GB. No config raises a call above this.
HARD_LIMIT = 100000


def deploy_count(call: Call[Any]) -> int:
    """``deploy_count`` (its shape already checked by the request schema: decision 14), bounded by the
    config's ``scheduler.max_deploy_count`` and ``HARD_LIMIT``."""
    value = call.request.get("deploy_count")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PluginError(f"deploy_count {value!r}: want a non-negative integer")
    count = int(value)
    bound = min(call.config.max_deploy_count, HARD_LIMIT)
    if count < 0:
        raise PluginError(f"deploy_count {count}: want a non-negative integer")
    if count > bound:
        raise PluginError(
            f"deploy_count {count} is more than one call plans ({bound}: scheduler.max_deploy_count of "
            f"{call.config.path} is {call.config.max_deploy_count}, and never above {HARD_LIMIT}): "
            f"not enough resource; deploy at most {bound} workloads per node and call"
        )
    return count


def target_record(call: Call[R], node: str) -> tuple[R, bool]:
    """The node's record (empty when it has none, as the reference reads it) and whether it has one."""
    try:
        return call.store.get(node), True
    except NodeNotExists:
        return call.plugin.record.empty(), False


def unknown_node(call: Call[Any], node: str, cause: PluginError) -> PluginError:
    """A failed plan on a node the store has no record of: say so first, it is the likelier fix."""
    return PluginError(f"node {node!r} has no {call.plugin.name} record (register it with add-node first): {cause}")
