"""The early read: a verb's first read of etcd, sent as soon as the request is parsed, before the plugin's
manifest and the verb's code load, so that etcd answers meanwhile.

The one interface of it: ``send(config, plugin, verb, request)`` returns the etcd client the read went out on
(``cli`` hands it to the verb's ``Call``), or None. The transport keeps the pending answer and gives it to
the first read that asks for the same bytes (``KV.prefetch``, ``KV.prefetch_reads``); a read nobody takes is
awaited when the client closes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.config import Config
    from resource_extend.store.etcd.protocol import KV


# The verbs whose first store operation reads the record of the request's `nodename` (add-node reads it with its
# write token, in a transaction of its own: NodeStore.read): the call asks etcd for it
# as soon as the request is parsed (cli.parsed), before it loads the plugin's manifest and the verb's code, so
# etcd answers meanwhile. A name, not a flag of the verb: the executable decides before any manifest loads.
PREFETCHING = frozenset(
    (
        "get-node-resource-info",
        "set-node-resource-capacity",
        "set-node-resource-usage",
        "fix-node-resource",
        "remove-node",
        "set-node-resource-info",
        "calculate-deploy",
        "calculate-realloc",
    )
)


# The verbs that read their nodes' records in bulk first (NodeStore.get_many or iter_many): the first request
# of that read (the count of the nodes' keys, or the point reads of a few) goes out as early.
BULK_PREFETCHING = frozenset(("get-metrics", "get-nodes-deploy-capacity", "get-nodes-resource-info"))


def send(config: Config, plugin: str, verb: str, request: object) -> KV | None:
    """Send the first read the verb makes (``PREFETCHING``: its node's record; ``BULK_PREFETCHING``: the
    first request of its nodes' records), and return the etcd client it went out on; None when there is
    none to send: another verb, no node named, or the gRPC transport, whose import alone is most of a call.
    The request is not checked yet: this is a read, and any failure of it is silent (``KV.prefetch``); a
    request the verb reads its nodes from otherwise, or refuses, only sends a read nobody takes."""
    if config.etcd.transport == "grpc" or not isinstance(request, dict):
        return None
    if verb in BULK_PREFETCHING:
        return _send_bulk(config, plugin, verb, request)
    node = request.get("nodename") if verb in PREFETCHING else None
    if not isinstance(node, str):
        return None
    from resource_extend.store.etcd import transport
    from resource_extend.store.nodes import MAX_NODE_NAME, node_key

    if not 0 < len(node) <= MAX_NODE_NAME:  # a name no key may have: the verb refuses it
        return None

    kv = transport.open(config.etcd)
    kv.prefetch(node_key(config.etcd.prefix, plugin, node))
    return kv


def _send_bulk(config: Config, plugin: str, verb: str, request: dict[str, Any]) -> KV | None:
    """``send`` of a bulk verb (``BULK_PREFETCHING``): the first request of the read of the nodes the
    request names, sent on a new etcd client, which is returned; None when it names none."""
    try:  # the names as the verb reads them; what it refuses, it refuses itself, with its own words
        if verb == "get-metrics":
            from resource_extend.metrics import metrics_nodes

            nodes = [name for _, name in metrics_nodes(request)]
        else:
            from resource_extend.envelope import bulk_nodenames

            nodes = bulk_nodenames(request)
    except Exception:
        return None
    if not nodes:
        return None
    from resource_extend.store.etcd import transport
    from resource_extend.store.nodes import node_key

    kv = transport.open(config.etcd)
    send_reads(kv, node_key(config.etcd.prefix, plugin, ""), nodes)
    return kv


def send_reads(source: KV, directory: str, nodes: list[str]) -> None:
    """Send the first request of the read of ``nodes``' records under ``directory`` (``get_many``,
    ``iter_many``) now, before the verb's code loads: ``KV.prefetch`` of the one key, or
    ``KV.prefetch_reads`` of the chunks ``store.iter_many`` reads."""
    wanted = dict.fromkeys(nodes)
    if len(wanted) == 1:
        source.prefetch(directory + nodes[0])
    elif wanted:
        from resource_extend.store.nodes import chunked

        source.prefetch_reads(chunked(directory + node for node in wanted))
