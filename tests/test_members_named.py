"""With several members configured, a read goes on to the others within the deadline, and a call that gives
up names each member: the ones it tried with what each did, the others as not tried (issue 35).

Over gRPC a member whose work on a request outlived the deadline sent with it answers UNKNOWN "context
deadline exceeded"; that call failed at once with the gRPC jargon (``Range: UNKNOWN: context deadline
exceeded``) after 6.3 s without trying the two healthy members. And with either transport a call whose
first member took all the time left failed naming that one alone (``etcd unavailable: http://…:2379: timed
out``). The member that misbehaves is the test's own: a gRPC server answering the race's probe and then
stalling or failing a read, or, for the gateway, tests/faultproxy.py delaying the second read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.errors import StoreUnavailable
from resource_extend_dev.conformance import run_plugin
from resource_extend_dev.devetcd import DevEtcd, free_port
from tests.faultproxy import FaultProxy, Rule
from tests.support import SEED, grpc_executable, plugin_dir


class Member:
    """A gRPC member of the test's own: it answers Status (the race's probe) at once, and every Range after
    ``stall`` seconds with ``fail`` (a gRPC status code's name and details), else a record."""

    def __init__(self, stall: float, fail: tuple[str, str] | None) -> None:
        import grpc
        from pyetcd.etcdrpc import rpc_pb2, rpc_pb2_grpc

        member = self
        self.ranges = 0

        class KV(rpc_pb2_grpc.KVServicer):  # type: ignore[misc]
            def Range(self, request: Any, context: Any) -> Any:
                member.ranges += 1
                time.sleep(stall)
                if fail is not None:
                    context.abort(getattr(grpc.StatusCode, fail[0]), fail[1])
                return rpc_pb2.RangeResponse()

        class Maintenance(rpc_pb2_grpc.MaintenanceServicer):  # type: ignore[misc]
            def Status(self, request: Any, context: Any) -> Any:
                return rpc_pb2.StatusResponse(version="3.5.0")

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        rpc_pb2_grpc.add_KVServicer_to_server(KV(), self.server)
        rpc_pb2_grpc.add_MaintenanceServicer_to_server(Maintenance(), self.server)
        self.url = f"http://127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    def stop(self) -> None:
        self.server.stop(0)


@pytest.fixture
def member_with_etcd_s_timeout() -> Iterator[Member]:
    member = Member(0.3, ("UNKNOWN", "context deadline exceeded"))
    yield member
    member.stop()


@pytest.fixture
def stalling_member() -> Iterator[Member]:
    member = Member(30, None)
    yield member
    member.stop()


def test_a_grpc_read_answered_with_etcd_s_own_timeout_goes_on_to_a_healthy_member(
    tmp_path: Path, etcd: DevEtcd, prefix: str, member_with_etcd_s_timeout: Member, grpc_build: Path
) -> None:
    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps(SEED["gpu"]))
    member = member_with_etcd_s_timeout
    work = plugin_dir(tmp_path, "gpu", {"machines": [member.url, etcd.url], "prefix": prefix, "transport": "grpc"})
    out = run_plugin(grpc_executable(grpc_build, "gpu"), "get-node-resource-info", b'{"nodename":"n1"}', str(work))
    assert member.ranges >= 1  # the first member won the race and was asked
    assert (out.status, out.stderr) == (0, ""), out
    assert json.loads(out.stdout)["capacity"] == SEED["gpu"]["capacity"]


def test_a_gateway_read_answered_with_etcd_s_own_timeout_goes_on_to_a_healthy_member(
    tmp_path: Path, etcd: DevEtcd, prefix: str
) -> None:
    # The JSON gateway answers etcd's own timeout HTTP 500 "context deadline exceeded": that call failed
    # at once naming the one member, the healthy one untried.
    from resource_extend_dev.conformance import run_plugin as run
    from tests.faultproxy import ETCD_DEADLINE
    from tests.support import executable

    etcd.put(f"{prefix}/resource/gpu/n1", json.dumps(SEED["gpu"]))
    with FaultProxy(etcd.port) as proxy:
        proxy.rules.append(Rule(ETCD_DEADLINE, "/v3/kv/range"))
        work = plugin_dir(tmp_path, "gpu", {"machines": [proxy.url, etcd.url], "prefix": prefix})
        out = run(executable("gpu"), "get-node-resource-info", b'{"nodename":"n1"}', str(work))
        assert proxy.spoiled  # the proxy answered first
    assert (out.status, out.stderr) == (0, ""), out
    assert json.loads(out.stdout)["capacity"] == SEED["gpu"]["capacity"]


def test_a_grpc_call_that_gives_up_names_each_member_and_says_timed_out_not_unknown(
    tmp_path: Path, member_with_etcd_s_timeout: Member, grpc_build: Path
) -> None:
    other = Member(0.3, ("UNKNOWN", "context deadline exceeded"))
    try:
        urls = [member_with_etcd_s_timeout.url, other.url]
        work = plugin_dir(tmp_path, "gpu", {"machines": urls, "prefix": "/p", "transport": "grpc", "total_timeout": 3})
        out = run_plugin(grpc_executable(grpc_build, "gpu"), "get-node-resource-info", b'{"nodename":"n1"}', str(work))
    finally:
        other.stop()
    assert out.status == 128 and len(out.stderr.splitlines()) == 1, out
    assert "UNKNOWN" not in out.stderr and "context deadline" not in out.stderr, out.stderr
    for url in urls:
        assert f"{url}: timed out" in out.stderr, out.stderr


def _kv(transport: str, machines: tuple[str, ...]) -> Any:
    from resource_extend.store.etcd import transport as transports

    config = EtcdConfig(machines=machines, prefix="/p", transport=transport, request_timeout=5, total_timeout=1.5)
    return transports.open(config)


@pytest.mark.parametrize("transport", ["gateway", "grpc"])
def test_a_call_whose_first_member_took_all_its_time_names_the_others_as_not_tried(
    transport: str, etcd: DevEtcd, prefix: str, stalling_member: Member
) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    with FaultProxy(etcd.port) as proxy:
        if transport == "gateway":
            # The first read is the race's probe, answered; the second stalls on the connection kept.
            proxy.rules.append(Rule("delay", "/v3/kv/range", after=1))
            first = proxy.url
        else:
            first = stalling_member.url  # the race's probe (Status) answered, then every read stalls
        kv = _kv(transport, (first, etcd.url, refused))
        try:
            if transport == "gateway":
                kv.get(f"{prefix}/k")
            with pytest.raises(StoreUnavailable) as failed:
                kv.get(f"{prefix}/k")
        finally:
            kv.close()
    line = str(failed.value)
    assert line.startswith("etcd unavailable: "), line
    assert f"{first}: timed out" in line, line
    assert f"{etcd.url}, {refused}: not tried, the call's etcd.total_timeout (1.5 s) ran out first" in line, line
