"""Decision 18 through the built executables, at the default limits: each exhaustion shape of issue 20
item 4 fails at once with one line naming what was asked, the limit and the key that raises it, etcd
untouched; a shape just within the limits completes under 512 MB (measured, not timed: the 30 s
subprocess timeout is only a guard, docs/reliability.md has the times).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from resource_extend.bounds import LIMITS
from resource_extend_dev.conformance import Outcome
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, PluginDir, bindings, padded, products

BIG = 1 << 50
STORAGE_NODE = {
    "capacity": {"volumes": {"/data0": BIG}, "disks": [], "storage": BIG},
    "usage": {"volumes": {}, "disks": [], "storage": 0},
}
GPU_NODE = {"capacity": {"prod_count_map": {f"p{i}": BIG for i in range(600)}}, "usage": {"prod_count_map": {}}}
MAX_STDIN = LIMITS["max_stdin_bytes"][0]
MAX_RSS_MB = 512
# Run the executable from a small Python whose only child it is, so RUSAGE_CHILDREN is the call's own peak.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
    "sys.stderr.buffer.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, len(done.stdout))\n"
)


@pytest.fixture
def storage(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    path = tmp_path / "storage"
    path.mkdir()
    plugin = PluginDir("storage", path, etcd, prefix)
    etcd.put(plugin.key("n1"), json.dumps(STORAGE_NODE))
    return plugin


@pytest.fixture
def gpu_node(gpu: PluginDir) -> PluginDir:
    gpu.etcd.put(gpu.key("n1"), json.dumps(GPU_NODE))
    return gpu


def refused(plugin: PluginDir, verb: str, request: Any, *needles: str, raw: bytes | None = None) -> str:
    """One clean line holding every needle, and the plugin's keyspace exactly as it was."""
    before = plugin.etcd.dump(plugin.prefix)
    out = plugin.call(verb, request, raw=raw, timeout=30)
    assert (out.status, out.stdout) == (128, ""), out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"resource-{plugin.plugin} {verb}: request too large: "), out.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    assert plugin.etcd.dump(plugin.prefix) == before
    return lines[0]


def within(plugin: PluginDir, verb: str, request: Any = None, raw: bytes | None = None) -> tuple[Outcome, int]:
    """A call that must complete: its outcome and its peak memory in MB."""
    stdin = raw if raw is not None else json.dumps(request).encode()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, plugin.exe, verb],
        input=stdin,
        cwd=plugin.path,
        capture_output=True,
        timeout=30,
    )
    status, maxrss_kb, _ = (int(part) for part in done.stdout.split())
    out = Outcome(status, "", done.stderr.decode(errors="replace"))
    assert (out.status, out.stderr) == (0, ""), out
    assert maxrss_kb // 1024 < MAX_RSS_MB
    return out, maxrss_kb // 1024


# -- calculate-deploy: bindings or products x deploy_count ------------------------------------------------


def test_storage_deploy_of_many_bindings_is_refused_per_workload(storage: PluginDir) -> None:
    # Issue 20: 10000 x 300 one-byte AUTO bindings took 114 s and 5.2 GB.
    request = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": bindings(300)}}
    refused(
        storage,
        "calculate-deploy",
        request,
        "300 volume bindings in one workload",
        "scheduler.max_workload_items of storage.yaml allows 100",
    )


def test_storage_deploy_past_the_work_limit_is_refused(storage: PluginDir) -> None:
    request = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": bindings(30)}}
    refused(
        storage,
        "calculate-deploy",
        request,
        "30 volume bindings x deploy_count 10000 = 300000",
        "scheduler.max_deploy_work of storage.yaml allows 50000",
    )


def test_storage_deploy_just_within_the_limits_completes(storage: PluginDir) -> None:
    # Within every limit, the commit's stdin included (10,000 x 5 is refused by it: below).
    request = {"nodename": "n1", "deploy_count": 3000, "workload_resource_request": {"volumes": bindings(5)}}
    within(storage, "calculate-deploy", request)
    request = {"nodename": "n1", "deploy_count": 150, "workload_resource_request": {"volumes": bindings(100)}}
    within(storage, "calculate-deploy", request)


# -- a plan core can commit: what calculate-deploy answers, set-node-resource-usage takes back --------------


def compact(doc: Any) -> bytes:
    """As core (Go's json.Marshal) sends it: no spaces."""
    return json.dumps(doc, separators=(",", ":")).encode()


def commit_stdin(workloads: list[Any]) -> bytes:
    """What core sends set-node-resource-usage to commit ``workloads`` (a plan's workloads_resource)."""
    doc = {"nodename": "n1", "workloads_resource": workloads, "resource": None, "resource_request": None}
    return compact({**doc, "delta": True, "incr": True})


def commit(plugin: PluginDir, workloads: list[Any]) -> Outcome:
    return plugin.call("set-node-resource-usage", raw=commit_stdin(workloads), timeout=30)


LIMIT_NAMED = re.compile(r"scheduler\.max_stdin_bytes of \S+ allows (\d+) ")


def largest_deploy(plugin: PluginDir, workload: Any, high: int) -> tuple[int, Any]:
    """The largest deploy_count up to ``high`` that calculate-deploy plans, and its answer: it plans and one
    more is refused naming scheduler.max_stdin_bytes (the refusal is monotone in the count, so it is the
    largest). A count that plans costs up to seconds, a refusal milliseconds: rather than halving (7 plans of
    14 calls), the plans of 1 and 2 workloads give the commit's size as a line in the count, and each count
    asked is where the line through the two largest plans meets the limit the refusal names (1 or 2 large
    plans), halving only if that has not closed in after a few guesses: the same count as halving finds."""
    plans: dict[int, tuple[int, Any]] = {}  # count -> (size of its commit, answer)
    refused, limit = high + 1, 0

    def ask(count: int) -> None:
        nonlocal refused, limit
        request = {"nodename": "n1", "deploy_count": count, "workload_resource_request": workload}
        out = plugin.call("calculate-deploy", raw=compact(request), timeout=30)
        if out.status == 0:
            answer = json.loads(out.stdout)
            plans[count] = (len(commit_stdin(answer["workloads_resource"])), answer)
            return
        named = LIMIT_NAMED.search(one_line(out))
        assert named, out
        refused, limit = min(refused, count), int(named.group(1))

    for count in (high, 1, 2):
        if count < refused and count not in plans:
            ask(count)
    guesses = 0
    while plans and refused - max(plans) > 1:
        low = max(plans)
        (c1, (s1, _)), (c2, (s2, _)) = sorted(plans.items())[-2:]  # 1 and 2 planned, or this is no loop
        guess = c2 + (limit - s2) * (c2 - c1) // (s2 - s1) if guesses < 4 and s2 > s1 else (low + refused) // 2
        ask(min(max(guess, low + 1), refused - 1))
        guesses += 1
    low = max(plans, default=0)
    return low, plans[low][1] if low else None


def one_line(out: Outcome) -> str:
    lines = out.stderr.splitlines()
    assert out.status == 128 and out.stdout == "" and len(lines) == 1, out
    return lines[0]


def test_storage_deploy_core_could_not_commit_is_refused_up_front(storage: PluginDir) -> None:
    # Issue 38: 10,000 x 5 bindings was planned (10.5 MB of workloads_resource), and then core's commit was
    # refused at the 4 MiB stdin bound. Now the plan is refused, naming the limit and its key.
    request = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": bindings(5)}}
    line = refused(storage, "calculate-deploy", request, "set-node-resource-usage", "scheduler.max_stdin_bytes")
    assert f"allows {MAX_STDIN}" in line


@pytest.mark.parametrize("stdin_limit", [MAX_STDIN, 1 << 16])
def test_storage_round_trip_at_the_largest_plan(storage: PluginDir, stdin_limit: int) -> None:
    if stdin_limit != MAX_STDIN:
        storage.configure(scheduler={"max_stdin_bytes": stdin_limit})
    count, answer = largest_deploy(storage, {"volumes": bindings(5)}, 10000)
    assert 0 < count < 10000
    assert len(compact(answer["workloads_resource"])) <= stdin_limit
    out = commit(storage, answer["workloads_resource"])
    assert (out.status, out.stderr) == (0, ""), out
    assert json.loads(out.stdout)["after"]["storage"] == count * 5


@pytest.mark.parametrize("stdin_limit", [MAX_STDIN, 1 << 14])
def test_gpu_round_trip_at_the_largest_plan(gpu_node: PluginDir, stdin_limit: int) -> None:
    workload = products(5)
    if stdin_limit == MAX_STDIN:  # the largest deploy the other limits allow commits
        count, answer = 10000, gpu_node.ok("calculate-deploy", {"nodename": "n1", "deploy_count": 10000,
                                                              "workload_resource_request": workload})  # fmt: skip
    else:
        gpu_node.configure(scheduler={"max_stdin_bytes": stdin_limit})
        count, answer = largest_deploy(gpu_node, workload, 10000)
        assert 0 < count < 10000
    out = commit(gpu_node, answer["workloads_resource"])
    assert (out.status, out.stderr) == (0, ""), out
    assert json.loads(out.stdout)["after"]["prod_count_map"]["p0"] == count


def test_gpu_deploy_of_many_products_is_refused(gpu_node: PluginDir) -> None:
    # Issue 20: 10000 x 500 products took 25 s.
    request = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": products(500)}
    refused(
        gpu_node,
        "calculate-deploy",
        request,
        "500 products in one workload",
        "scheduler.max_workload_items of gpu.yaml",
    )
    request["workload_resource_request"] = products(6)
    refused(gpu_node, "calculate-deploy", request, "6 products x deploy_count 10000 = 60000", "max_deploy_work")


def test_gpu_deploy_just_within_the_limits_completes(gpu_node: PluginDir) -> None:
    within(
        gpu_node,
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": products(5)},
    )
    within(
        gpu_node,
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 500, "workload_resource_request": products(100)},
    )


def test_raising_the_key_the_refusal_names_lets_the_call_through(gpu_node: PluginDir) -> None:
    request = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": products(6)}
    gpu_node.configure(scheduler={"max_deploy_work": 60000})
    assert len(gpu_node.ok("calculate-deploy", request)["engines_params"]) == 10000


# -- get-nodes-deploy-capacity: nodes, and nodes x bindings or products ----------------------------------


@pytest.mark.parametrize("plugin_name", PLUGINS)
def test_too_many_nodes_in_one_call_are_refused(tmp_path: Path, etcd: DevEtcd, prefix: str, plugin_name: str) -> None:
    plugin = PluginDir(plugin_name, tmp_path, etcd, prefix)
    names = [f"node-{i}" for i in range(10001)]
    for verb in ("get-nodes-deploy-capacity", "get-nodes-resource-info", "get-most-idle-node"):
        request = {"nodenames": names, "workload_resource": {}}
        refused(
            plugin, verb, request, "10001 nodenames", f"scheduler.max_nodes_per_call of {plugin_name}.yaml allows 10000"
        )


def test_capacity_over_many_nodes_and_bindings_is_refused(storage: PluginDir) -> None:
    request = {"nodenames": [f"n{i}" for i in range(1000)], "workload_resource": {"volumes": bindings(100)}}
    refused(
        storage, "get-nodes-deploy-capacity", request, "100 volume bindings x nodes 1000 = 100000", "max_deploy_work"
    )


def test_capacity_just_within_the_limits_completes(storage: PluginDir, gpu_node: PluginDir) -> None:
    names = ["n1", *(f"n{i}" for i in range(2, 501))]
    within(storage, "get-nodes-deploy-capacity", {"nodenames": names, "workload_resource": {"volumes": bindings(100)}})
    names = ["n1", *(f"n{i}" for i in range(2, 10001))]
    within(gpu_node, "get-nodes-deploy-capacity", {"nodenames": names, "workload_resource": products(5)})


# -- calculate-realloc: the change and the holdings, each a workload --------------------------------------


def held(count: int) -> dict[str, Any]:
    texts = bindings(count, "/data0:/d{}:rw:1")
    plan = {text: {"/data0": 1} for text in texts}
    return {"volumes_request": texts, "volumes_limit": texts, "volume_plan_request": plan, "volume_plan_limit": plan}


def test_realloc_of_many_bindings_is_refused(storage: PluginDir) -> None:
    request = {
        "nodename": "n1",
        "workload_resource_request": {"volumes": bindings(101, "AUTO:/e{}:rw:1")},
        "workload_resource": held(1),
    }
    refused(storage, "calculate-realloc", request, "101 volume bindings in one workload", "max_workload_items")
    request = {"nodename": "n1", "workload_resource_request": {}, "workload_resource": held(101)}
    refused(storage, "calculate-realloc", request, "101 volume bindings in one workload", "max_workload_items")


def test_realloc_just_within_the_limits_completes(storage: PluginDir) -> None:
    request = {
        "nodename": "n1",
        "workload_resource_request": {"volumes": bindings(100, "AUTO:/e{}:rw:1")},
        "workload_resource": held(100),
    }
    within(storage, "calculate-realloc", request)


# -- stdin ---------------------------------------------------------------------------------------------


def test_stdin_past_the_limit_is_refused_without_being_read(gpu_node: PluginDir) -> None:
    # Issue 20: 100 MB of stdin took 12.7 s and 583 MB; now only the limit and one byte are read.
    refused(
        gpu_node,
        "calculate-remap",
        None,
        f"more than {MAX_STDIN} bytes on stdin",
        "scheduler.max_stdin_bytes of gpu.yaml",
        raw=padded(MAX_STDIN + 1),
    )
    refused(
        gpu_node,
        "get-nodes-resource-info",
        None,
        "scheduler.max_stdin_bytes",
        raw=b'{"nodenames": [' + b'"a",' * 25_000_000 + b'"a"]}',
    )


def test_stdin_at_the_limit_is_read(gpu_node: PluginDir) -> None:
    within(gpu_node, "calculate-remap", raw=padded(MAX_STDIN))
    # The worst shape for memory within it: a list of empty objects, each a dict once decoded.
    raw = b'{"x": [' + b"{}," * (MAX_STDIN // 3 - 10) + b"{}]}"
    assert len(raw) <= MAX_STDIN
    within(gpu_node, "calculate-remap", raw=raw)
