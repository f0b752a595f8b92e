"""What calculate-deploy of both plugins shares beyond its request: the node it plans on, and how a plan on
a node without a record fails. How many workloads a call may plan is read with the request
(``requests.deploy_count``)."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.command.verb import Call
from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)


def target_record(call: Call[R], node: str) -> tuple[R, bool]:
    """The node's record (empty when it has none, as the reference reads it) and whether it has one."""
    try:
        return call.store.get(node), True
    except errors.NodeNotExists:
        return call.plugin.record.empty(), False


def unknown_node(call: Call[Any], node: str, cause: PluginError) -> PluginError:
    """A failed plan on a node the store has no record of: say so first, it is the likelier fix. The key and
    the prefix come first: a wrong etcd.prefix reads as every node missing, and add-node would then register
    the node again under the wrong one."""
    where = f"{call.store.key(node)} (etcd.prefix {call.config.etcd.prefix!r})"
    return PluginError(
        f"node {node!r} has no {call.plugin.name} record at {where}: check the config's etcd.prefix,"
        f" else register the node with add-node: {cause}"
    )
