"""Many nodes' records at once, for the verbs that weigh nodes in bulk (``NodeStore.get_many``, ``iter_many``).

Imported when such a verb reads, so a single-node call never loads this code.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.etcd import chunks as plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any, TypeVar

    from resource_extend.config import Config
    from resource_extend.etcd.protocol import KV
    from resource_extend.kind import Record
    from resource_extend.store import NodeStore

    R = TypeVar("R", bound=Record)


def get_many(store: NodeStore[R], source: KV, record: type[R], nodes: list[str]) -> dict[str, R]:
    """One record per distinct node, in request order.

    A node without a record reads as empty, and so does one whose record cannot be read (decision 9):
    one bad record must not fail the answer for every other node. Single-node reads still fail on it.
    """
    wanted = list(dict.fromkeys(nodes))
    decoded = dict(_read_many(store, source, record, wanted))
    return {node: decoded[node] for node in wanted}


def iter_many(store: NodeStore[R], source: KV, record: type[R], nodes: list[str]) -> Iterator[tuple[str, R]]:
    """``get_many``'s records, each distinct node once, in the order of their names (code point order,
    which is etcd's order of their keys) and as the reads arrive: a caller that weighs each node in
    turn (get-nodes-deploy-capacity) holds one chunk's records at a time, not every node's (10,000
    nodes: ~22 MiB at the peak instead of ~45)."""
    return _read_many(store, source, record, list(dict.fromkeys(nodes)))


def _read_many(store: NodeStore[R], source: KV, record: type[R], wanted: list[str]) -> Iterator[tuple[str, R]]:
    """``iter_many`` of distinct nodes."""
    if not wanted:
        return
    if len(wanted) == 1:
        entry = source.get(store.key(wanted[0]))
        yield wanted[0], _decode_or_empty(record, None if entry is None else entry.value)
        return
    # Reads of the whole keys (decision 10: the reference's last-segment index let "rack7/n1" answer for
    # "n1"), in chunks of keys in etcd's order, each read as its span or as point reads (chunks.py's dense):
    # never the directory, nor many records between two wanted keys. The transport reads the next
    # chunk while this decodes the last.
    by_key = {store.key(node): node for node in wanted}
    chunks = _chunks(by_key)
    for chunk, entries in zip(chunks, source.reads(chunks)):
        for key, entry in zip(chunk, entries):
            yield by_key[key], _decode_or_empty(record, None if entry is None else entry.value)


def _chunks(keys: Iterable[str]) -> list[list[str]]:
    """The distinct ``keys`` in etcd's order (code point order is its byte order for UTF-8 keys), in chunks."""
    ordered = sorted(keys)
    return [ordered[i : i + plan.CHUNK_KEYS] for i in range(0, len(ordered), plan.CHUNK_KEYS)]


def prefetch_for(config: Config, plugin: str, verb: str, request: dict[str, Any]) -> KV | None:
    """verb.prefetch of a bulk verb (``verb.BULK_PREFETCHING``): the first request of the read of the nodes the
    request names, sent on a new etcd client, which is returned; None when it names none."""
    try:  # the names as the verb reads them; what it refuses, it refuses itself, with its own words
        if verb == "get-metrics":
            from resource_extend.metrics import metrics_nodes

            nodes = [name for _, name in metrics_nodes(request)]
        else:
            from resource_extend.params import bulk_nodenames

            nodes = bulk_nodenames(request)
    except Exception:
        return None
    if not nodes:
        return None
    from resource_extend import etcd
    from resource_extend.store import node_key

    kv = etcd.open(config.etcd)
    prefetch(kv, node_key(config.etcd.prefix, plugin, ""), nodes)
    return kv


def prefetch(source: KV, directory: str, nodes: list[str]) -> None:
    """Send the first request of the read of ``nodes``' records under ``directory`` (``get_many``,
    ``iter_many``) now, before the verb's code loads: ``KV.prefetch`` of the one key, or
    ``KV.prefetch_reads`` of the chunks ``_read_many`` reads."""
    wanted = dict.fromkeys(nodes)
    if len(wanted) == 1:
        source.prefetch(directory + nodes[0])
    elif wanted:
        source.prefetch_reads(_chunks(directory + node for node in wanted))


def _decode_or_empty(record: type[R], data: bytes | None) -> R:
    if data is None:
        return record.empty()
    try:
        return record.decode(data)
    except PluginError:
        return record.empty()
