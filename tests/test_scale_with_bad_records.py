"""5,000 nodes with a few malformed records scattered among them, through the built executables (issue 30):
every bulk verb answers for the other nodes as if the malformed ones had no record (docs/reliability.md,
decision 9), and each call of 5,000 nodes stays under 512 MB (peak RSS from wait4, support.measured).
The wall times are in docs/reliability.md, not asserted here: speed targets live in `make bench`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import (
    GOOD_RECORDS,
    PLUGINS,
    PluginDir,
    b64,
    executable,
    measured,
    spoiled_record,
)

NODES = 5000
# Where the malformed records sit, and how each is spoiled: the first chunk, the middle, the last key.
BAD = {17: "truncated", 1290: "not-utf8", 2500: "nan", 3999: "utf16", NODES - 1: "extra-data"}
MAX_RSS_MB = 512
# Puts per transaction while seeding: etcd's --max-txn-ops is 128.
BATCH = 128


def names() -> list[str]:
    return [f"node{i:04}" for i in range(NODES)]


def seed(space: PluginDir, records: dict[str, bytes]) -> None:
    items = list(records.items())
    for at in range(0, len(items), BATCH):
        puts = [
            {"request_put": {"key": b64(space.key(node).encode()), "value": b64(data)}}
            for node, data in items[at : at + BATCH]
        ]
        space.etcd.call("/v3/kv/txn", {"success": puts})


def bulk_calls(plugin: str) -> list[tuple[str, Any]]:
    wants = {"gpu": {"prod_count_map": {"nvidia-3090": 1}}, "storage": {"storage": "1"}}[plugin]
    every = names()
    return [
        ("get-nodes-deploy-capacity", {"nodenames": every, "workload_resource": wants}),
        ("get-nodes-resource-info", {"nodenames": every}),
        ("get-most-idle-node", {"nodenames": every}),
        ("get-metrics", {"nodes": [{"podname": "p", "nodename": name} for name in every]}),
    ]


def answers(space: PluginDir) -> list[tuple[Any, int, float]]:
    """Each bulk verb's answer over all the nodes, with its peak RSS (MB) and wall time."""
    found = []
    for verb, request in bulk_calls(space.plugin):
        out, peak_mb, took = measured(executable(space.plugin), verb, request, space.path, 60)
        assert out.status == 0 and out.stderr == "", (verb, out)
        found.append((json.loads(out.stdout), peak_mb, took))
    return found


@pytest.mark.parametrize("plugin", PLUGINS)
def test_bulk_verbs_over_5000_nodes_read_scattered_malformed_records_as_absent_under_512_mb(
    plugin: str, etcd: DevEtcd, prefix: str, tmp_path: Path
) -> None:
    space = PluginDir(plugin, tmp_path, etcd, prefix)
    good = GOOD_RECORDS[plugin].encode()
    bad_names = {names()[at] for at in BAD}
    seed(space, {name: good for name in names() if name not in bad_names})
    without = answers(space)  # the malformed nodes not stored at all
    seed(space, {names()[at]: spoiled_record(plugin, kind) for at, kind in BAD.items()})
    with_bad = answers(space)
    for (verb, _), (expected, _, _), (answer, peak_mb, took) in zip(bulk_calls(plugin), without, with_bad):
        assert answer == expected, verb
        assert peak_mb < MAX_RSS_MB, (verb, peak_mb)
        print(f"{plugin} {verb} over {NODES} nodes, {len(BAD)} malformed: {took:.2f} s, {peak_mb} MB")
