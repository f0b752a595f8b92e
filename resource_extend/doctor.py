"""``resource-<plugin> doctor``: read every record under the plugin's prefix at once and report what is wrong.

An operator's command, not a verb: core never calls it, ``verbs`` does not list it, it reads no stdin and
writes nothing. Exit 0 when every record is clean, 1 when anything was found, 128 when the store could
not be read at all (one stderr line, as a verb fails). The checks themselves are pure
(``diagnosis`` and ``<plugin>/checks.py``); this module only reads etcd and prints.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from resource_extend.diagnosis import Finding, examine, node_of
from resource_extend.errors import PluginError
from resource_extend.verb import Plugin

EXIT_CLEAN, EXIT_FOUND, EXIT_FAILED = 0, 1, 128


def run(plugin: Plugin[Any], config_flag: str | None, as_json: bool) -> int:
    try:
        directory, entries = _read_all(plugin, config_flag)
    except PluginError as exc:
        sys.stderr.write(f"resource-{plugin.name} doctor: {' '.join(str(exc).split())}\n")
        return EXIT_FAILED
    checks = importlib.import_module(f"resource_extend.{plugin.name}.checks")
    findings: list[Finding] = []
    record = plugin.record
    for key, value in entries:
        node = node_of(key, directory)
        findings += examine(node, value, record.decode, checks.GO_RECORD, checks.check_record, record.checked)
    write = report_json if as_json else report
    sys.stdout.write(write(directory, len(entries), findings))
    return EXIT_FOUND if findings else EXIT_CLEAN


def _read_all(plugin: Plugin[Any], config_flag: str | None) -> tuple[str, list[tuple[str, bytes]]]:
    """The plugin's directory and every (key, value) under it, in one range read."""
    from resource_extend import config, etcd
    from resource_extend.store import NodeStore

    settings = config.load(plugin.name, config_flag)
    kv = etcd.open(settings.etcd)
    directory = NodeStore(kv, settings.etcd.prefix, plugin.name, plugin.record).key("")
    entries = sorted((entry.key, entry.value) for entry in kv.scan(directory))
    return directory, entries


def report(directory: str, records: int, findings: list[Finding]) -> str:
    """A table a person reads: one row per finding, the verb that repairs it last."""
    if not findings:
        # No count here: the table reads the same whatever other nodes share the prefix (--json has it).
        return f"no problems found under {directory}\n"
    rows = [("NODE", "PROBLEM", "DETAIL", "REPAIR WITH")]
    rows += [(f.node, f.kind, f.detail, f.repair) for f in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3] for row in rows]
    nodes = len({f.node for f in findings})
    lines.append(f"{len(findings)} problem(s) on {nodes} node(s) under {directory}")
    return "\n".join(lines) + "\n"


def report_json(directory: str, records: int, findings: list[Finding]) -> str:
    doc = {"directory": directory, "records": records, "findings": [f.to_json() for f in findings]}
    return json.dumps(doc) + "\n"
