"""etcd's answers delayed, trickled, cut short, garbled or reset on the way, through the built executables.

A loopback proxy (tests/faultproxy.py) stands between the executable and a real etcd and spoils chosen
answers. Whatever it does: no `internal error`, one clean stderr line, a write never applied twice (the
stored usage is checked after the spoiled call and after a retry), and no call longer than
`etcd.total_timeout` + 1 s (issue 20).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin
from resource_extend_dev.devetcd import DevEtcd
from tests.faultproxy import FAULTS, FaultProxy, Rule
from tests.support import INCREMENT, PLUGINS, SEED, executable, one_clean_line, plugin_dir, used

TOTAL_TIMEOUT = 3
SLOW_TOTAL_TIMEOUT = 1.5
# Every fault but the two that only slow an answer down: those are the deadline's tests.
SPOILING = [fault for fault in FAULTS if fault not in ("trickle", "delay")]


@pytest.fixture
def proxy(etcd: DevEtcd) -> Iterator[FaultProxy]:
    with FaultProxy(etcd.port) as server:
        yield server


def work(tmp_path: Path, plugin: str, proxy: FaultProxy, prefix: str, total_timeout: float = TOTAL_TIMEOUT) -> Path:
    # One request's time is two thirds of the call's: the call's deadline, not a request's, ends the second.
    settings = {"machines": [proxy.url], "prefix": prefix, "request_timeout": total_timeout * 2 / 3,
                "total_timeout": total_timeout}  # fmt: skip
    return plugin_dir(tmp_path, plugin, settings)


def timed(path: Path, plugin: str, verb: str, request: Any, total_timeout: float = TOTAL_TIMEOUT) -> Outcome:
    started = time.monotonic()
    out = run_plugin(executable(plugin), verb, json.dumps(request).encode(), str(path))
    took = time.monotonic() - started
    assert took < total_timeout + 1, (verb, took, out)
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out
    return out


def stored_usage(etcd: DevEtcd, plugin: str, prefix: str) -> int:
    stored = etcd.get(f"{prefix}/resource/{plugin}/n1")
    assert stored is not None
    return used(plugin, json.loads(stored))


# -- writes: the guarded write's answer spoiled ------------------------------------------------------


@pytest.mark.parametrize("fault", [*SPOILING, "trickle"])
@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_whose_answer_is_spoiled_is_decided_and_never_doubled(
    plugin: str, fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    path = work(tmp_path, plugin, proxy, prefix)
    proxy.rules.append(Rule(fault, "/v3/kv/txn", holding=b"request_put", times=1))
    out = timed(path, plugin, "set-node-resource-usage", INCREMENT[plugin])
    assert proxy.spoiled == [fault]
    # The write landed (or, swallowed, was sent again once it was known not to have): read back, it is
    # the call's success. A failure would have to say the outcome is unknown.
    if out.status:
        assert "whether the write applied is unknown" in one_clean_line(out)
    else:
        assert out.stderr == ""
    assert stored_usage(etcd, plugin, prefix) == 1
    again = timed(path, plugin, "set-node-resource-usage", INCREMENT[plugin])
    assert again.status == 0, again
    assert stored_usage(etcd, plugin, prefix) == 2


@pytest.mark.parametrize("fault", ["cut-after-head", "garbled-body", "reset", "swallow"])
def test_an_add_node_whose_answer_is_spoiled_is_created_once_and_says_so(
    fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    path = work(tmp_path, "gpu", proxy, prefix)
    proxy.rules.append(Rule(fault, "/v3/kv/txn", holding=b"request_put", times=1))
    request = {"nodename": "n1", "resource": {"prod_count_map": {"a100": 8}}, "info": None}
    out = timed(path, "gpu", "add-node", request)
    assert out.status == 0, out  # read back: our record is there (or, swallowed, was created after)
    stored = etcd.get(f"{prefix}/resource/gpu/n1")
    assert stored is not None and json.loads(stored)["capacity"]["prod_count_map"] == {"a100": 8}
    assert "node already exists" in one_clean_line(timed(path, "gpu", "add-node", request))


def test_a_write_whose_answer_is_spoiled_and_cannot_be_read_back_fails_saying_so(
    tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps(SEED["gpu"]))
    path = work(tmp_path, "gpu", proxy, prefix)
    # The read before the write passes; the write's answer is reset, and so is every read after it (the
    # reads that would settle it are transactions of ranges).
    proxy.rules.append(Rule("reset", "/v3/kv/txn", holding=b"request_put", times=1))
    proxy.rules.append(Rule("reset", "/v3/kv/txn"))
    line = one_clean_line(timed(path, "gpu", "set-node-resource-usage", INCREMENT["gpu"]))
    assert "whether the write applied is unknown" in line and proxy.url in line
    assert stored_usage(etcd, "gpu", prefix) == 1  # it had landed: the line said it might have


# -- reads: a spoiled answer fails the call cleanly, naming the endpoint ------------------------------


@pytest.mark.parametrize("fault", SPOILING)
def test_a_read_whose_answers_are_all_spoiled_fails_clean_naming_the_endpoint(
    fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps(SEED["gpu"]))
    path = work(tmp_path, "gpu", proxy, prefix)
    proxy.rules.append(Rule(fault, "/v3/kv/range"))
    line = one_clean_line(timed(path, "gpu", "get-node-resource-info", {"nodename": "n1"}))
    assert "etcd" in line and proxy.url in line
    if fault not in ("reset", "swallow", "cut-short"):
        assert "bad reply" in line


# A bulk read of 2 nodes is one transaction of point reads; of 12, a transaction counting their span and
# then (the span holding no other key) one range read, pipelined on the counting's connection.
BULK = [(2, "/v3/kv/txn"), (12, "/v3/kv/txn"), (12, "/v3/kv/range")]


@pytest.mark.parametrize(("nodes", "path"), BULK)
@pytest.mark.parametrize("fault", SPOILING)
def test_a_bulk_read_whose_answer_is_spoiled_once_is_read_again(
    fault: str, nodes: int, path: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    names = [f"n{i:02}" for i in range(nodes)]
    for node in names:
        etcd.put(f"{prefix}/resource/gpu/{node}", json.dumps(SEED["gpu"]))
    work_dir = work(tmp_path, "gpu", proxy, prefix)
    proxy.rules.append(Rule(fault, path, times=1))
    out = timed(work_dir, "gpu", "get-nodes-resource-info", {"nodenames": names})
    assert out.status == 0, out
    assert proxy.spoiled == [fault]
    infos = json.loads(out.stdout)["node_resource_info_map"]
    assert [infos[node]["capacity"] for node in names] == [SEED["gpu"]["capacity"]] * nodes


# -- one deadline for the whole call ----------------------------------------------------------------


@pytest.mark.parametrize("fault", ["trickle", "delay"])
@pytest.mark.parametrize(
    ("verb", "request_", "path"),
    [
        ("get-node-resource-info", {"nodename": "n1"}, "/v3/kv/range"),
        ("get-nodes-resource-info", {"nodenames": ["n1", "n2"]}, "/v3/kv/txn"),
        ("get-nodes-resource-info", {"nodenames": [f"n{i}" for i in range(12)]}, "/v3/kv/range"),
    ],
)
def test_a_slow_answer_never_outlasts_the_total_timeout(
    fault: str, verb: str, request_: Any, path: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    for node in ("n1", "n2"):
        etcd.put(f"{prefix}/resource/gpu/{node}", json.dumps(SEED["gpu"]))
    # Each case waits out the call's deadline: a short one, its requests two thirds of it as everywhere here.
    work_dir = work(tmp_path, "gpu", proxy, prefix, SLOW_TOTAL_TIMEOUT)
    proxy.rules.append(Rule(fault, path))
    line = one_clean_line(timed(work_dir, "gpu", verb, request_, SLOW_TOTAL_TIMEOUT))  # within total_timeout + 1 s
    assert "timed out" in line and proxy.url in line


# -- sparse bulk reads -------------------------------------------------------------------------------


@pytest.mark.parametrize("wanted", [["a", "z"], [*(f"a{i}" for i in range(6)), *(f"z{i}" for i in range(6))]])
def test_a_sparse_bulk_read_fetches_the_wanted_records_not_those_between(
    wanted: list[str], tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    directory = f"{prefix}/resource/gpu/"
    for node in wanted:
        etcd.put(directory + node, json.dumps(SEED["gpu"]))
    filler = json.dumps({**SEED["gpu"], "pad": "x" * 100_000})
    for i in range(100):  # 10 MB of other nodes' records between the wanted ones
        etcd.put(directory + f"m{i:03}", filler)
    path = work(tmp_path, "gpu", proxy, prefix)
    out = timed(path, "gpu", "get-nodes-resource-info", {"nodenames": wanted})
    assert out.status == 0, out
    infos = json.loads(out.stdout)["node_resource_info_map"]
    assert [infos[node]["capacity"] for node in wanted] == [SEED["gpu"]["capacity"]] * len(wanted)
    assert proxy.sent < 30_000  # the wanted records and their headers, not the 10 MB between them


def test_a_dev_etcd_that_died_says_so_with_its_log() -> None:
    # The suite's own etcd dying under a test reads as that, not as a bare "connection refused".
    with DevEtcd() as etcd:
        assert etcd._proc is not None
        etcd._proc.kill()
        etcd._proc.wait()
        with pytest.raises(ConnectionError, match=r"etcd \(pid \d+\) exited with status -9"):
            etcd.get("/any")
