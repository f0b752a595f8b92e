"""Replies a member or a proxy may send that are well formed and endless, or well formed and false (issue 30),
through the built executables at the default timeouts: a loopback proxy (tests/faultproxy.py) in front of
the test etcd sends them. An endless reply fails a read in one line naming the member, holding the call's
peak memory (measured with wait4, the child's own) under 200 MB; a write whose reply is endless or older
than what the call read is read back and decided, never applied twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend.config import DEFAULT_TOTAL_TIMEOUT
from resource_extend_dev.conformance import Outcome
from resource_extend_dev.devetcd import DevEtcd
from tests import support
from tests.faultproxy import FORGED, LATE, STALE, FaultProxy, Rule
from tests.support import INCREMENT, PLUGINS, SEED, executable, one_clean_line, plugin_dir, used

MAX_RSS_MB = 200
HTTP1_ENDLESS = ["endless-length", "endless-chunks", "endless-close"]


@pytest.fixture
def proxy(etcd: DevEtcd) -> Iterator[FaultProxy]:
    with FaultProxy(etcd.port) as server:
        yield server


def measured(plugin: str, work: Path, verb: str, request: Any) -> tuple[Outcome, int]:
    """The call's outcome and its peak RSS in MB (support.measured), checking that it ended within
    etcd.total_timeout (the default) + 1 s and without a traceback."""
    out, peak_mb, took = support.measured(executable(plugin), verb, request, work, DEFAULT_TOTAL_TIMEOUT + 30)
    assert took < DEFAULT_TOTAL_TIMEOUT + 1, (verb, took, out)
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out
    return out, peak_mb


def stored_usage(etcd: DevEtcd, plugin: str, prefix: str) -> int:
    stored = etcd.get(f"{prefix}/resource/{plugin}/n1")
    assert stored is not None
    return used(plugin, json.loads(stored))


def at_defaults(tmp_path: Path, plugin: str, proxy: FaultProxy, prefix: str) -> Path:
    return plugin_dir(tmp_path, plugin, {"machines": [proxy.url], "prefix": prefix})


@pytest.mark.parametrize("fault", HTTP1_ENDLESS)
def test_an_endless_reply_to_a_read_fails_the_call_in_one_line_naming_the_member_under_200_mb(
    fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps(SEED["gpu"]))
    proxy.rules.append(Rule(fault, "/v3/kv/range"))
    out, peak_mb = measured(
        "gpu", at_defaults(tmp_path, "gpu", proxy, prefix), "get-node-resource-info", {"nodename": "n1"}
    )
    line = one_clean_line(out)  # exit 128, one line
    assert "bad reply" in line and proxy.url in line, line
    assert peak_mb < MAX_RSS_MB, (fault, peak_mb)


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("fault", HTTP1_ENDLESS)
def test_an_endless_reply_to_a_write_is_read_back_and_the_write_applied_once_under_200_mb(
    plugin: str, fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    proxy.rules.append(Rule(fault, "/v3/kv/txn", holding=b"request_put", times=1))
    out, peak_mb = measured(
        plugin, at_defaults(tmp_path, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin]
    )
    assert proxy.spoiled == [fault]
    assert out.status == 0 and out.stderr == "", out  # read back: it had landed
    assert stored_usage(etcd, plugin, prefix) == 1
    assert peak_mb < MAX_RSS_MB, (fault, peak_mb)


def test_endless_header_blocks_on_a_span_read_over_h2_cost_no_memory_and_the_gateway_answers(
    tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    names = [f"n{i:02}" for i in range(20)]  # more than a few keys: their span is read over h2
    for node in names:
        etcd.put(f"{prefix}/resource/gpu/{node}", json.dumps(SEED["gpu"]))
    proxy.rules.append(Rule("endless-headers", "*"))
    out, peak_mb = measured(
        "gpu", at_defaults(tmp_path, "gpu", proxy, prefix), "get-nodes-resource-info", {"nodenames": names}
    )
    assert "endless-headers" in proxy.spoiled  # the h2 read was tried, and answered so
    assert out.status == 0, out
    infos = json.loads(out.stdout)["node_resource_info_map"]
    assert [infos[node]["capacity"] for node in names] == [SEED["gpu"]["capacity"]] * len(names)
    assert peak_mb < MAX_RSS_MB, peak_mb


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_answered_as_a_failed_compare_older_than_the_read_is_read_back_not_written_twice(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    proxy.rules.append(Rule(STALE, "/v3/kv/txn", holding=b"request_put", times=1))
    out, _ = measured(
        plugin, at_defaults(tmp_path, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin]
    )
    assert proxy.spoiled == [STALE]
    assert out.status == 0 and out.stderr == "", out
    assert stored_usage(etcd, plugin, prefix) == 1  # applied once: the forged "compare failed" sent nothing again


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_read_back_as_not_applied_that_applies_later_is_not_applied_twice(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    # The write's connection closes unanswered; the write applies just before the call's first read after
    # it (the chaos test's doubled increment, once in three 45 s runs: a proposal etcd answered "leader
    # changed" for, committed afterwards): its token says it is this call's. test_exactly_once.py plays the
    # harder orders: applied late under another writer's change, after the call wrote again.
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    proxy.rules.append(Rule(LATE, "/v3/kv/txn", holding=b"request_put", times=1))
    out, _ = measured(
        plugin, at_defaults(tmp_path, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin]
    )
    assert proxy.spoiled == [LATE]
    assert out.status == 0 and out.stderr == "", out
    assert stored_usage(etcd, plugin, prefix) == 1


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("forged", sorted(FORGED))
def test_a_write_that_applied_and_was_answered_with_a_lie_is_the_calls_one_change(
    forged: str, plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    # A failed compare without its ranges, a second "succeeded" that disagrees, an error's JSON on a 200,
    # a revision no int64 holds: each a bad reply, settled by the write's token (it landed), never an
    # internal error, a write sent again until the deadline, or "gave up after 64 conflicting writes".
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    proxy.rules.append(Rule(forged, "/v3/kv/txn", holding=b"request_put"))  # every write's answer, were there more
    out, _ = measured(
        plugin, at_defaults(tmp_path, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin]
    )
    assert proxy.spoiled == [forged]
    assert out.status == 0 and out.stderr == "", out
    assert stored_usage(etcd, plugin, prefix) == 1


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_call_none_of_whose_writes_is_ever_answered_says_its_outcome_is_unknown_not_a_conflict(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    # Every write is swallowed (never sent to etcd, the connection closed): each attempt is settled as not
    # landed yet, written again on the same guard, until the deadline. No other writer was ever in the way.
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    proxy.rules.append(Rule("swallow", "/v3/kv/txn", holding=b"request_put"))
    out, _ = measured(
        plugin, at_defaults(tmp_path, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin]
    )
    line = one_clean_line(out)
    assert "whether the write applied is unknown" in line and "conflicting" not in line, line
    assert stored_usage(etcd, plugin, prefix) == 0


@pytest.mark.parametrize("plugin", PLUGINS)
def test_an_add_node_answered_with_a_stale_failed_compare_after_a_removal_is_settled_not_an_internal_error(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    # The node was added and removed (its tombstone stands); the create applies and its answer is a lie
    # older than add-node's read: a bad reply, settled by the token (it landed), never an AssertionError.
    work = at_defaults(tmp_path, plugin, proxy, prefix)
    added = {"nodename": "n1", "resource": SEED[plugin]["capacity"], "info": None}
    for verb, request in (("add-node", added), ("remove-node", {"nodename": "n1"})):
        out, _ = measured(plugin, work, verb, request)
        assert out.status == 0, out
    proxy.rules.append(Rule("stale-empty-ranges", "/v3/kv/txn", holding=b"request_put", times=1))
    out, _ = measured(plugin, work, "add-node", added)
    assert proxy.spoiled == ["stale-empty-ranges"]
    assert out.status == 0 and out.stderr == "", out
    assert etcd.get(f"{prefix}/resource/{plugin}/n1") is not None
