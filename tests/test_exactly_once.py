"""Every write lands exactly once, or the call says it cannot know (decision 20, issue 35): two writers make
the same +1 on one node, and writer A's write is held by a proxy (tests/holdproxy.py) while the test plays
one interleaving, deterministically, through the built executables, for both plugins and both transports.

- (a) A's write never reaches etcd, B's +1 lands, then A's connection is reset: A must make its +1 again.
  Read back by its bytes, B's +1 from the same value looks like A's: two calls exited 0, one +1 stored.
- (b) A's write applies, its answer is dropped, B writes on top, then A reads back: A landed and must not
  make its +1 again. Read back by its bytes, A saw B's and wrote a third +1.
- (c) A's write is cut off unanswered before etcd has it, A finds the record unchanged and writes again; the
  first write then applies late (as etcd may commit a proposal it answered with an error), B writes on top,
  and A's second write fails its compare: the first one was A's +1.
- (d) as (b), but etcd compacts the history A would settle by: A fails saying the outcome is unknown, and
  nothing is applied twice.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from resource_extend_dev.conformance import Outcome
from resource_extend_dev.devetcd import DevEtcd
from tests.holdproxy import WAIT, HoldProxy, hold_proxy
from tests.support import INCREMENT, PLUGINS, SEED, executable, grpc_executable, one_clean_line, plugin_dir, used

TRANSPORTS = ["gateway", "grpc"]
# Long enough that only the proxy's steps decide what A sees, never a timeout of its own.
PATIENT = {"request_timeout": 30, "total_timeout": 40}


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def proxy(etcd: DevEtcd, transport: str) -> Iterator[HoldProxy]:
    with hold_proxy(transport, etcd.port) as held:
        yield held


class Writers:
    """A behind the proxy (over ``transport``), B straight to etcd over the gateway."""

    def __init__(self, plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: HoldProxy, transport: str,
                 grpc_build: Path | None) -> None:  # fmt: skip
        self.plugin, self.etcd, self.prefix = plugin, etcd, prefix
        etcd.put(self.key, json.dumps(SEED[plugin]))
        self.a_exe = executable(plugin) if grpc_build is None else grpc_executable(grpc_build, plugin)
        extra = {} if grpc_build is None else {"transport": "grpc"}
        self.a_dir = plugin_dir(tmp_path / "a", plugin, {"machines": [proxy.url], "prefix": prefix, **PATIENT, **extra})
        self.b_dir = plugin_dir(tmp_path / "b", plugin, {"machines": [etcd.url], "prefix": prefix})
        self.request = json.dumps(INCREMENT[plugin]).encode()
        self.a: subprocess.Popen[bytes] | None = None

    @property
    def key(self) -> str:
        return f"{self.prefix}/resource/{self.plugin}/n1"

    def start_a(self, verb: str = "set-node-resource-usage", request: bytes | None = None) -> None:
        self.a = subprocess.Popen(
            [self.a_exe, verb],
            cwd=self.a_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self.a.stdin is not None
        self.a.stdin.write(self.request if request is None else request)
        self.a.stdin.close()
        self.a.stdin = None  # sent whole: communicate() only reads

    def finish_a(self) -> Outcome:
        assert self.a is not None
        try:
            out, err = self.a.communicate(timeout=WAIT + 30)
        finally:
            self.a.kill()
        return Outcome(self.a.returncode, out.decode(), err.decode())

    def run_b(self, verb: str = "set-node-resource-usage", request: bytes | None = None) -> None:
        done = subprocess.run(
            [executable(self.plugin), verb],
            input=self.request if request is None else request, cwd=self.b_dir, capture_output=True, timeout=30,
        )  # fmt: skip
        assert (done.returncode, done.stderr) == (0, b""), done

    def usage(self) -> int:
        stored = self.etcd.get(self.key)
        assert stored is not None
        return used(self.plugin, json.loads(stored))


@pytest.fixture
def writers(
    request: pytest.FixtureRequest, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: HoldProxy, transport: str
) -> Writers:
    plugin = request.node.callspec.params["plugin"]
    build = request.getfixturevalue("grpc_build") if transport == "grpc" else None
    return Writers(plugin, tmp_path, etcd, prefix, proxy, transport, build)


def succeeded(out: Outcome) -> None:
    assert (out.status, out.stderr) == (0, ""), out
    assert isinstance(json.loads(out.stdout), dict)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_that_never_reached_etcd_is_made_again_though_another_writer_stored_the_same_bytes(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    proxy.hold(1)
    writers.start_a()
    held = proxy.next()
    writers.run_b()  # B's +1 from the same value: the very bytes A would have written
    held.drop()
    succeeded(writers.finish_a())
    assert writers.usage() == 2


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_that_applied_and_lost_its_answer_is_not_made_again_though_another_wrote_on_top(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    proxy.hold(1)
    writers.start_a()
    held = proxy.next()
    held.apply()
    writers.run_b()
    held.drop()
    succeeded(writers.finish_a())
    assert writers.usage() == 2


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_found_not_applied_that_applies_late_under_another_write_is_the_calls_one_change(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    proxy.hold(2)
    writers.start_a()
    first = proxy.next()
    first.drop()  # not sent to etcd yet: A reads the record unchanged and writes again, on the same guard
    second = proxy.next()
    first.apply()  # late, as a proposal committed after its client was told it failed
    writers.run_b()
    second.answer()  # its compare fails: the first write was A's +1
    succeeded(writers.finish_a())
    assert writers.usage() == 2


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_whose_settling_history_is_compacted_fails_saying_the_outcome_is_unknown(
    plugin: str, writers: Writers, proxy: HoldProxy, etcd: DevEtcd
) -> None:
    proxy.hold(1)
    writers.start_a()
    held = proxy.next()
    held.apply()
    writers.run_b()
    revision = etcd.call("/v3/kv/range", {"key": "AA=="})["header"]["revision"]
    etcd.call("/v3/kv/compaction", {"revision": revision, "physical": True})
    held.drop()
    line = one_clean_line(writers.finish_a())
    assert "set-node-resource-usage" in line and "whether the write applied is unknown" in line, line
    assert "compacted" in line, line
    assert writers.usage() == 2  # A's once and B's once: nothing applied twice


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_remove_node_that_applied_and_lost_its_answer_never_removes_the_node_added_after_it(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    # Sent again, a plain delete removed the node B added once A's delete had landed.
    node = json.dumps({"nodename": "n1"}).encode()
    added = json.dumps({"nodename": "n1", "resource": SEED[plugin]["capacity"], "info": None}).encode()
    proxy.hold(1)
    writers.start_a("remove-node", node)
    held = proxy.next()
    held.apply()
    writers.run_b("add-node", added)
    held.drop()
    succeeded(writers.finish_a())
    assert writers.etcd.get(writers.key) is not None  # B's node stands


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_restore_that_applied_and_lost_its_answer_never_overwrites_the_change_made_after_it(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    # set-node-resource-info (core's RemoveNode rollback) writes the record as given; sent again after B's
    # +1, a plain put lost that +1.
    restore = json.dumps({"nodename": "n1", **{side: SEED[plugin][side] for side in ("capacity", "usage")}}).encode()
    proxy.hold(1)
    writers.start_a("set-node-resource-info", restore)
    held = proxy.next()
    held.apply()
    writers.run_b()
    held.drop()
    succeeded(writers.finish_a())
    assert writers.usage() == 1


@pytest.mark.parametrize("plugin", PLUGINS)
def test_an_add_node_that_applied_and_lost_its_answer_succeeds_though_another_wrote_on_top(
    plugin: str, writers: Writers, proxy: HoldProxy
) -> None:
    # A create is settled at the record's creation: A's token there. Read back by bytes, B's +1 on top
    # made A's create look lost, and A's second try answered "node already exists".
    added = json.dumps({"nodename": "n2", "resource": SEED[plugin]["capacity"], "info": None}).encode()
    increment = json.dumps(INCREMENT[plugin]).replace('"n1"', '"n2"').encode()
    proxy.hold(1)
    writers.start_a("add-node", added)
    held = proxy.next()
    held.apply()
    writers.run_b("set-node-resource-usage", increment)
    held.drop()
    succeeded(writers.finish_a())
    stored = writers.etcd.get(f"{writers.prefix}/resource/{plugin}/n2")
    assert stored is not None and used(plugin, json.loads(stored)) == 1
