"""The verbs that plan, for both plugins: get-nodes-deploy-capacity, calculate-deploy and calculate-realloc.

Each reads its request with the plugin's payloads, the node's record (an unknown node reads as the empty
record, as the reference reads it), and hands both to the plugin's ``calculate`` module, whose functions
are pure (record and request in, answer out); a plan that fails on a node without a record says so first.
Nothing here writes: core applies the answer with set-node-resource-usage. How many workloads a call may
plan is read with the request (``envelope.deploy_count``). Imported only when one of these verbs runs."""

from __future__ import annotations

from resource_extend import errors
from resource_extend.command.verb import Call
from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    from resource_extend.bounds import Bounds
    from resource_extend.envelope.plans import Deploy
    from resource_extend.envelope.realloc import Realloc
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


def get_nodes_deploy_capacity(call: Call[R], node_capacity: Callable[[Any, Bounds], Callable[[R], Any]]) -> Any:
    # Each verb imports the request and answer code only it runs: a deploy creates neither class.
    from resource_extend.capacity import deploy_capacity_response
    from resource_extend.envelope.capacity import DeployCapacity
    from resource_extend.formats import bigdocs  # noqa: F401  (checks the answer: loaded with the verb's code)

    request = DeployCapacity.from_json(call.request, call.config.bounds, call.plugin.payloads)
    count = node_capacity(request.request, call.config.bounds)
    return deploy_capacity_response(call.store.iter_many(request.nodenames), count)


def calculate_deploy(
    call: Call[R],
    commit_precheck: Callable[[Deploy[Any], Bounds], None],
    plan_deploy: Callable[[R, Deploy[Any], Bounds, str], Any],
) -> Any:
    from resource_extend.envelope.plans import Deploy

    bounds = call.config.bounds
    request = Deploy.from_json(call.request, bounds, call.plugin.payloads)
    commit_precheck(request, bounds)
    record, known = target_record(call, request.nodename)
    try:
        return plan_deploy(record, request, bounds, call.plugin.name)
    except PluginError as cause:
        raise cause if known else unknown_node(call, request.nodename, cause) from None


def calculate_realloc(call: Call[R], plan_realloc: Callable[[R, Realloc[Any, Any]], Any]) -> Any:
    from resource_extend.envelope.realloc import Realloc

    request = Realloc.from_json(call.request, call.config.bounds, call.plugin.payloads)
    record, known = target_record(call, request.nodename)
    try:
        answer = plan_realloc(record, request)
    except PluginError as cause:
        raise cause if known else unknown_node(call, request.nodename, cause) from None
    # Core commits the delta, and sends the workload back in the next realloc: each must fit on stdin.
    from resource_extend.formats.jsonio import dumps

    largest = max(len(dumps(answer["delta_resource"]).encode()), len(dumps(answer["workload_resource"]).encode()))
    call.config.bounds.check_commit(largest, 1, request.nodename)
    return answer
