"""``resource-<plugin> explain``: how many workloads of a request each node takes, and what stops the rest.

An operator's command beside ``doctor``: core never calls it, ``verbs`` does not list it, and it writes
nothing. stdin is get-nodes-deploy-capacity's request (``workload_resource``; ``nodenames`` and a
``deploy_count`` optional); the nodes are ``--node`` names, else ``nodenames``, else every node under the
plugin's prefix. Each node's count comes from the scheduler functions the verb runs, which also say
which limit they reached first (the manifest's ``calculate.explainer``): there is no second model here,
only the reading of raw records (so that an unreadable one is shown, where the verb reads it as empty)
and the printing.

Exit 0 with the report; 128 with one stderr line when the request, the config or the store fails.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from resource_extend.capacity import Limit
from resource_extend.errors import PluginError
from resource_extend.plugin import Plugin

EXIT_OK, EXIT_FAILED = 0, 128

# How explain's summary names each kind of limit: "2 short of volume space, 1 unreadable".
UNREADABLE, MISSING = "unreadable", "no record"
_SUMMARY = {
    "cap": "at the scheduler's cap",
    UNREADABLE: "unreadable",
    MISSING: "without a record",
}


class Row:
    """One node's answer: its count (``None`` when its record cannot be read) and, when the count is
    under the asked one, the first limit the scheduler reached."""

    __slots__ = ("capacity", "limit", "node", "record")

    def __init__(self, node: str, record: str, capacity: int | None, limit: Limit | None) -> None:
        self.node, self.record, self.capacity, self.limit = node, record, capacity, limit

    def to_json(self) -> dict[str, Any]:
        limit = None if self.limit is None else self.limit.to_json()
        return {"node": self.node, "record": self.record, "capacity": self.capacity, "limit": limit}


def run(
    plugin: Plugin[Any], config_flag: str | None, as_json: bool, nodes: list[str], stdin: Callable[[int], bytes]
) -> int:
    try:
        directory, rows, asked = _explain(plugin, config_flag, nodes, stdin)
    except PluginError as exc:
        sys.stderr.write(f"resource-{plugin.name} explain: {' '.join(str(exc).split())}\n")
        return EXIT_FAILED
    sys.stdout.write((report_json if as_json else report)(directory, asked, rows))
    return EXIT_OK


def _explain(
    plugin: Plugin[Any], config_flag: str | None, nodes: list[str], stdin: Callable[[int], bytes]
) -> tuple[str, list[Row], int]:
    from resource_extend import config
    from resource_extend.formats import jsonio, validation
    from resource_extend.store.etcd import transport
    from resource_extend.store.nodes import NodeStore

    settings = config.load(plugin.name, config_flag)
    bounds = settings.bounds  # the verbs' bounds (decision 18): stdin, nodes per call, deploy_count
    data = stdin(bounds.max_stdin_bytes)
    bounds.check_stdin(len(data))
    if not data.strip():  # run by hand, without the pipe: say what goes on stdin, not "EOF"
        raise PluginError(
            "stdin is empty: explain reads get-nodes-deploy-capacity's request there, e.g. echo"
            f" '{{\"workload_resource\":{{...}}}}' | resource-{plugin.name} explain (resource-{plugin.name}"
            " get-nodes-deploy-capacity --help shows its keys)"
        )
    doc = jsonio.loads_request(data)
    bounds.check_request(doc)
    # The verb's own request checks (deploy_count is explain's key, which the verb would refuse as unknown:
    # decision 19), then explain's own.
    verb_doc = {key: value for key, value in doc.items() if key != "deploy_count"}
    validation.check(plugin.name, "get-nodes-deploy-capacity", "request", verb_doc, plugin.schemas)
    asked = _asked(doc, settings)
    if not nodes and doc.get("nodenames"):
        from resource_extend import envelope

        nodes = envelope.nodenames(doc)
    capacity_of = plugin.calculate.explainer(plugin.payloads.request(doc, "workload_resource"), bounds)
    _check_count(len(nodes), "named", bounds.max_nodes_per_call)
    kv = transport.open(settings.etcd)
    directory = NodeStore(kv, settings.etcd.prefix, plugin.name, plugin.record).key("")
    raw = _read(kv, directory, nodes, bounds.max_nodes_per_call)
    if not raw:
        raise PluginError(f"0 records under {directory}: is etcd.prefix right?")
    return directory, explain_records(raw, plugin.record, capacity_of, asked, directory), asked


def _asked(doc: dict[str, Any], settings: Any) -> int:
    """``deploy_count`` when given (bounded as calculate-deploy bounds it), else 1."""
    value = doc.get("deploy_count")
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PluginError(f"deploy_count {json.dumps(value)}: want a non-negative integer")
    from resource_extend.envelope import deploy_count

    return deploy_count(doc, settings.bounds)


def _check_count(count: int, which: str, bound: int) -> None:
    if count > bound:
        raise PluginError(
            f"{count} nodes {which}: explain reads at most scheduler.max_nodes_per_call ({bound}) per call;"
            " name fewer with --node, or raise it in the config"
        )


def _read(kv: Any, directory: str, nodes: list[str], bound: int) -> dict[str, bytes | None]:
    """Each node's stored bytes (``None``: no record), in the order asked (sorted when all are)."""
    if not nodes:
        entries = kv.scan(directory)
        _check_count(len(entries), f"under {directory}", bound)
        return {entry.key[len(directory) :]: entry.value for entry in sorted(entries, key=lambda e: e.key)}
    from resource_extend.store.etcd.chunks import CHUNK_KEYS

    # The wanted keys only, as the bulk verbs read them (store.get_many): never the span between them.
    wanted = list(dict.fromkeys(nodes))
    ordered = sorted(directory + node for node in wanted)
    chunks = [ordered[i : i + CHUNK_KEYS] for i in range(0, len(ordered), CHUNK_KEYS)]
    found: dict[str, bytes] = {}
    for chunk, entries in zip(chunks, kv.reads(chunks)):
        for key, entry in zip(chunk, entries):
            if entry is not None:
                found[key] = entry.value
    return {node: found.get(directory + node) for node in wanted}


def explain_records(
    raw: dict[str, bytes | None],
    record_type: Any,
    capacity_of: Callable[[Any], tuple[int, Limit]],
    asked: int,
    directory: str = "",
) -> list[Row]:
    """Pure: one row per node, from its stored bytes. A missing record is scheduled as the empty one, as
    the verb reads it; an unreadable one is shown with the decoder's words (the verb reads it as empty)."""
    rows = []
    for node, data in raw.items():
        if data is None:
            record, state = record_type.empty(), MISSING
        else:
            try:
                record, state = record_type.decode(data), "ok"
            except PluginError as exc:
                why = " ".join(str(exc).split())
                rows.append(Row(node, UNREADABLE, None, Limit(UNREADABLE, f"record unreadable: {why} (run doctor)")))
                continue
        capacity, limit = capacity_of(record)
        capacity = max(capacity, 0)  # an over-committed node takes none; its limit says why, never "-7"
        if capacity >= asked:
            rows.append(Row(node, state, capacity, None))
            continue
        if state == MISSING:
            # The key it looked at: a wrong etcd.prefix makes every node read as missing.
            where = f" at {directory}{node}" if directory else ""
            limit = Limit(MISSING, f"no record{where} (read as empty; check etcd.prefix, else add-node): {limit.text}")
        rows.append(Row(node, state, capacity, limit))
    return rows


def summary(asked: int, rows: list[Row]) -> str:
    """``0/3 nodes can take 2: 2 short of volume space, 1 unreadable``."""
    can = sum(1 for row in rows if row.limit is None)
    counts: dict[str, int] = {}
    for row in rows:
        if row.limit is not None:
            counts[row.limit.kind] = counts.get(row.limit.kind, 0) + 1
    head = f"{can}/{len(rows)} node{'' if len(rows) == 1 else 's'} can take {asked}"
    if not counts:
        return head
    # The scheduler's limits first, most nodes first (ties in the nodes' order); records it cannot read last.
    kinds = sorted(counts, key=lambda kind: (kind in (UNREADABLE, MISSING), -counts[kind]))
    return head + ": " + ", ".join(f"{counts[kind]} {_SUMMARY.get(kind, f'short of {kind}')}" for kind in kinds)


def report(directory: str, asked: int, rows: list[Row]) -> str:
    """A table a person reads: node, workloads it takes, and what stops more when that is under ``asked``."""
    table = [("NODE", "FITS", "FIRST LIMIT REACHED")]
    table += [(row.node, "—" if row.capacity is None else str(row.capacity), _limit_text(row)) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(2)]
    lines = [f"{line[0]:<{widths[0]}}  {line[1]:<{widths[1]}}  {line[2]}".rstrip() for line in table]
    return "\n".join([*lines, summary(asked, rows)]) + "\n"


def _limit_text(row: Row) -> str:
    return "" if row.limit is None else row.limit.text


def report_json(directory: str, asked: int, rows: list[Row]) -> str:
    doc = {
        "directory": directory,
        "asked": asked,
        "nodes": [row.to_json() for row in rows],
        "can_take": sum(1 for row in rows if row.limit is None),
        "summary": summary(asked, rows),
    }
    return json.dumps(doc, ensure_ascii=False) + "\n"
