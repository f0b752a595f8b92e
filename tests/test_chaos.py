"""A three-member cluster partitioned, losing its leader and hanging a member under concurrent writers loses
and doubles nothing (issues 30 and 35), through the built executable: four `set-node-resource-usage` delta
loops on one node while, in turn, the leader is isolated from the other members (every link through a proxy
of resource_extend_dev/links.py, cut and healed), the clients are cut from the member they talk to first
and one link between the two others is cut, the leader is killed and restarted, and another member is
stopped (SIGSTOP) for a while, all on 127.0.0.1, bounded in time.

Afterwards the usage stored equals the increments whose calls exited 0, exactly (decision 20: a write whose
answer was lost is settled by its token, so no call may fail saying its outcome is unknown short of etcd
compacting its history, which nothing here does), and no call ran past etcd.total_timeout + 1 s. `make
test` runs the short form (a 16 s run, each fault 2 s); `make test-deep` the long one (48 s, 6 s).
docs/reliability.md has the figures.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from resource_extend.config import DEFAULT_TOTAL_TIMEOUT
from resource_extend_dev.devetcd import DevCluster
from tests.support import DEEP, INCREMENT, executable, plugin_dir, used

WRITERS = 4
# (seconds the writers run, seconds each fault lasts)
RUN, FAULT = (48.0, 6.0) if DEEP else (16.0, 2.0)
UNKNOWN = "whether the write applied is unknown"
PLUGIN = "gpu"
NODE = {"capacity": {"prod_count_map": {"nvidia-3090": 1_000_000}}, "usage": {"prod_count_map": {}}}


class Call:
    __slots__ = ("status", "stderr", "took")

    def __init__(self, status: int, stderr: str, took: float) -> None:
        self.status, self.stderr, self.took = status, stderr, took


def writer(work: Path, until: float, calls: list[Call]) -> None:
    request = json.dumps(INCREMENT[PLUGIN]).encode()
    while time.monotonic() < until:
        started = time.monotonic()
        done = subprocess.run(
            [executable(PLUGIN), "set-node-resource-usage"],
            input=request, cwd=work, capture_output=True, timeout=DEFAULT_TOTAL_TIMEOUT + 30,
        )  # fmt: skip
        calls.append(Call(done.returncode, done.stderr.decode(errors="replace"), time.monotonic() - started))


def chaos(cluster: DevCluster, started: float, events: list[str]) -> None:
    """Each fault in turn, healed before the next: the leader isolated, the clients cut from their first
    member with a link between the others cut, the leader killed and restarted, another member stopped."""

    def at(fraction: float) -> None:
        time.sleep(max(0.0, started + RUN * fraction - time.monotonic()))

    def event(what: str) -> None:
        events.append(f"{time.monotonic() - started:.1f}s: {what}")

    # The leader is the member the writers talk to (the first of etcd.machines): cutting it off or killing
    # it cuts writes it may have taken, which the calls must settle, not send again.
    at(0.1)
    cluster.lead(0)
    leader = cluster.leader()
    cluster.isolate(leader)
    event(f"isolated the leader m{leader} from the other members")
    time.sleep(FAULT)
    cluster.heal()
    event("healed")
    at(0.3)
    first, others = 0, [1, 2]
    cluster.cut_clients(first)
    cluster.cut(*others)
    event(f"cut the clients from m{first}, and m{others[0]} from m{others[1]}")
    time.sleep(FAULT)
    cluster.heal()
    event("healed")
    at(0.5)
    cluster.lead(0)
    leader = cluster.leader()
    cluster.stop_member(leader)
    event(f"killed the leader m{leader}")
    time.sleep(FAULT)
    cluster.restart_member(leader)
    event(f"m{leader} restarted and serving")
    other = (leader + 1) % cluster.size
    at(0.75)
    cluster.signal_member(other, signal.SIGSTOP)
    event(f"stopped m{other}")
    try:
        time.sleep(FAULT)
    finally:
        cluster.signal_member(other, signal.SIGCONT)
    event(f"m{other} continued")


def test_a_cluster_partitioned_and_losing_its_leader_under_four_writers_loses_and_doubles_no_increment(
    tmp_path: Path, prefix: str
) -> None:
    with DevCluster(3, partitionable=True) as cluster:
        key = f"{prefix}/resource/{PLUGIN}/n1"
        cluster.member(0).put(key, json.dumps(NODE))
        work = plugin_dir(tmp_path, PLUGIN, {"machines": cluster.urls, "prefix": prefix})
        calls: list[list[Call]] = [[] for _ in range(WRITERS)]
        events: list[str] = []
        started = time.monotonic()
        threads = [threading.Thread(target=writer, args=(work, started + RUN, mine)) for mine in calls]
        for thread in threads:
            thread.start()
        try:
            chaos(cluster, started, events)
        finally:
            for thread in threads:
                thread.join()
        every = [call for mine in calls for call in mine]
        stored = cluster.member(0).get(key)
        assert stored is not None
        usage = used(PLUGIN, json.loads(stored))
        report = summary(every, usage, events)
        print(report)  # the figures docs/reliability.md quotes (pytest -s shows them)

        ok = sum(1 for call in every if call.status == 0)
        # 0 lost (every exit 0 is in etcd), 0 doubled, and no outcome left unknown.
        assert usage == ok, report
        assert not any(UNKNOWN in call.stderr for call in every), report
        for call in every:
            assert call.took < DEFAULT_TOTAL_TIMEOUT + 1, report
            if call.status:
                assert call.status == 128, report
                lines = call.stderr.strip().splitlines()
                assert len(lines) == 1 and "Traceback" not in call.stderr, call.stderr
            else:
                assert call.stderr == "", call.stderr
        assert ok > 0, report


def summary(calls: list[Call], usage: int, events: list[str]) -> str:
    ok = [call for call in calls if call.status == 0]
    failed: dict[str, int] = {}
    for call in calls:
        if call.status:
            # The failure's kind: the line without its endpoints' ports.
            kind = call.stderr.strip().split(": ", 1)[-1][:120]
            failed[kind] = failed.get(kind, 0) + 1
    slowest = max((call.took for call in calls), default=0.0)
    lines: list[Any] = [
        f"{len(calls)} calls in {RUN:g} s ({WRITERS} writers), {len(ok)} exited 0, stored usage {usage}, "
        f"slowest {slowest:.2f} s",
        *events,
        *(f"  {count} x {kind}" for kind, count in sorted(failed.items())),
    ]
    return "\n".join(map(str, lines))
