"""Malformed bytes from etcd and from stdin, through the built executables (issue 20, decisions 2, 9, 11, 17).

Every call runs the executable as core does: a fresh interpreter that has not imported the json package.
In-process tests cannot see what these pin: on 3.10 and 3.11 the C scanner's error path raised
``SystemError`` there (``internal error``), so one truncated record stopped every bulk read. Each bad record
must read as a node without capacity in the bulk verbs and fail single-node reads naming the node and why;
bad stdin must fail as ``decode plugin input: …``; and no refusal may change anything in etcd.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.devetcd import DevEtcd
from tests.support import (
    GOOD_RECORDS,
    MALFORMED_KINDS,
    MALFORMED_STDIN,
    PLUGINS,
    SEED,
    SURROGATE_RECORDS,
    PluginDir,
    b64,
    one_clean_line,
    put_raw,
    raw_record,
    snapshot,
    spoiled_record,
)

# What the single-node reads say about each (after "node bad: stored record is unreadable: invalid JSON: ").
WHY = {
    "truncated": "Expecting ',' delimiter at offset ",
    "control-character": "Invalid control character at offset 6",
    "bad-escape": "Invalid \\escape at offset 6",
    "trailing-comma": "Expecting property name enclosed in double quotes at offset ",  # on 3.13 too (jsonio.reason)
    "extra-data": "Extra data at offset ",
    "nan": "invalid number literal NaN",
    "utf8-bom": "starts with a UTF-8 byte-order mark",
    "utf16": "not UTF-8 (byte 0xff at offset 0)",
    "utf16-without-bom": "Expecting property name enclosed in double quotes at offset 1",
    "utf32": "not UTF-8 (byte 0xff at offset 0)",
    "not-utf8": "not UTF-8 (byte 0xff at offset 6)",
}
CASES = [(plugin, kind) for plugin in PLUGINS for kind in MALFORMED_KINDS]


def bulk_answers(space: PluginDir) -> list[Any]:
    """The four bulk reads of nodes ``good`` and ``bad``, as core asks them."""
    wants = {"gpu": {"prod_count_map": {"nvidia-3090": 1}}, "storage": {"storage": "1"}}[space.plugin]
    names = ["good", "bad"]
    return [
        space.ok("get-nodes-deploy-capacity", {"nodenames": names, "workload_resource": wants}),
        space.ok("get-nodes-resource-info", {"nodenames": names}),
        space.ok("get-most-idle-node", {"nodenames": names}),
        space.ok("get-metrics", {"nodes": [{"podname": "p", "nodename": name} for name in names]}),
        space.ok("get-metrics", {"podname": "p", "nodename": "bad"}),
    ]


# What the bulk reads answer when ``bad`` has no record at all, per plugin: a malformed record must read the same.
_WITHOUT_BAD: dict[str, list[Any]] = {}


@pytest.fixture
def space(request: pytest.FixtureRequest, etcd: DevEtcd, prefix: str, tmp_path: Path) -> PluginDir:
    plugin_dir = PluginDir(request.param, tmp_path, etcd, prefix)
    put_raw(plugin_dir, "good", GOOD_RECORDS[request.param].encode())
    return plugin_dir


@pytest.mark.parametrize(("space", "kind"), CASES, indirect=["space"], ids=[f"{p}-{k}" for p, k in CASES])
def test_a_malformed_record_is_a_node_without_capacity_in_every_bulk_read(space: PluginDir, kind: str) -> None:
    if space.plugin not in _WITHOUT_BAD:
        _WITHOUT_BAD[space.plugin] = bulk_answers(space)
    put_raw(space, "bad", spoiled_record(space.plugin, kind))
    before = snapshot(space)
    assert bulk_answers(space) == _WITHOUT_BAD[space.plugin]
    assert snapshot(space) == before


@pytest.mark.parametrize(("space", "kind"), CASES, indirect=["space"], ids=[f"{p}-{k}" for p, k in CASES])
def test_a_malformed_record_fails_single_node_reads_naming_the_node_and_why(space: PluginDir, kind: str) -> None:
    put_raw(space, "bad", spoiled_record(space.plugin, kind))
    before = snapshot(space)
    for verb, extra in (
        ("get-node-resource-info", {}),
        ("set-node-resource-usage", {"resource": {}, "delta": True, "incr": True}),
    ):
        line = one_clean_line(space.call(verb, {"nodename": "bad", **extra}))
        prefix = f"resource-{space.plugin} {verb}: node bad: stored record is unreadable: invalid JSON: "
        assert line.startswith(prefix), line
        assert WHY[kind] in line, line
        assert line.endswith("(set-node-resource-info or remove-node replaces it)"), line
        assert snapshot(space) == before


@pytest.mark.parametrize(("space", "kind"), CASES[:: len(MALFORMED_KINDS) // 3], indirect=["space"])
def test_a_malformed_record_is_replaced_by_set_node_resource_info(space: PluginDir, kind: str) -> None:
    put_raw(space, "bad", spoiled_record(space.plugin, kind))
    space.ok("set-node-resource-info", {"nodename": "bad", **SEED[space.plugin]})
    assert json.loads(raw_record(space, "bad").decode("utf-8")) == SEED[space.plugin]


# -- stdin -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("stdin", list(MALFORMED_STDIN), ids=range(len(MALFORMED_STDIN)))
def test_malformed_stdin_is_a_decode_error_and_touches_nothing(
    plugin: str, stdin: bytes, etcd: DevEtcd, prefix: str, tmp_path: Path
) -> None:
    space = PluginDir(plugin, tmp_path, etcd, prefix)
    put_raw(space, "n1", GOOD_RECORDS[plugin].encode())
    before = snapshot(space)
    for verb in ("get-node-resource-info", "set-node-resource-usage", "calculate-deploy"):
        line = one_clean_line(space.call(verb, raw=stdin))
        assert line.startswith(f"resource-{plugin} {verb}: {MALFORMED_STDIN[stdin]}"), line
    assert snapshot(space) == before


# -- decision 17: a lone surrogate escape in a stored string ---------------------------------------------


@pytest.mark.parametrize("space", PLUGINS, indirect=True)
def test_a_lone_surrogate_escape_in_a_record_reads_as_u_fffd_and_the_node_stays_writable(space: PluginDir) -> None:
    stored, name = SURROGATE_RECORDS[space.plugin]
    put_raw(space, "n1", stored.encode())
    info = space.ok("get-node-resource-info", {"nodename": "n1"})
    assert name in json.dumps(info, ensure_ascii=False)
    change = {"gpu": {"prod_count_map": {"a100": 1}}, "storage": {"storage": 1}}[space.plugin]
    space.ok("set-node-resource-usage", {"nodename": "n1", "resource": change, "delta": True, "incr": True})
    written = raw_record(space, "n1").decode("utf-8")  # strict: a write stores valid UTF-8
    assert name in written and "\\ud" not in written.lower()


# -- decision 2: add-node's info.Resources["gpu"] -----------------------------------------------------------

DEEP = b"[" * 100000 + b"]" * 100000


@pytest.mark.skipif("gpu" not in PLUGINS, reason="the GPU plugin is not in this repo")
@pytest.mark.parametrize(
    ("entry", "capacity"),
    [
        (b64(b'{"prod_count_map":{"a100":2}}'), {"a100": 2}),  # the engine's report is the capacity
        (b64(DEEP), {}),
        (b64(b'{"prod_count_map":' + DEEP + b"}"), {}),
        (b64(b"\xef\xbb\xbf" + b'{"prod_count_map":{"a100":2}}'), {}),
        (b64(b'{"prod_count_map":{"a100":2}'), {}),
        (b64(b'{"prod_count_map":{"a\xff":2}}'), {}),
    ],
    ids=["control", "deep", "deep-inside", "bom", "truncated", "not-utf8"],
)
def test_an_engine_report_that_does_not_read_is_ignored_by_add_node(
    etcd: DevEtcd, prefix: str, tmp_path: Path, entry: str, capacity: dict[str, int]
) -> None:
    space = PluginDir("gpu", tmp_path, etcd, prefix)
    answer = space.ok("add-node", {"nodename": "n1", "info": {"Resources": {"gpu": entry}}})
    assert answer["capacity"] == {"prod_count_map": capacity}


@pytest.mark.skipif("gpu" not in PLUGINS, reason="the GPU plugin is not in this repo")
def test_a_request_nested_too_deeply_for_the_decoder_is_refused_cleanly(
    etcd: DevEtcd, prefix: str, tmp_path: Path
) -> None:
    space = PluginDir("gpu", tmp_path, etcd, prefix)
    stdin = b'{"nodename":"n1","info":{"Resources":{"gpu":' + DEEP + b"}}}"
    line = one_clean_line(space.call("add-node", raw=stdin))
    assert line == "resource-gpu add-node: decode plugin input: nested too deeply"
    assert snapshot(space) == {}
