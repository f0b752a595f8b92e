"""A bulk read's span reads over etcd's gRPC API on h2c (store/etcd/h2/), against a real etcd: they find exactly
what the gateway finds, and any way the h2 side can fail (refused, not HTTP/2, GOAWAY, a reset stream, an
error status, garbled or truncated frames, frames beyond the bounds, silence) leaves the call's answer
as it was: the reads go the gateway's way instead, and nothing surfaces."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hpack import Encoder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.config import EtcdConfig
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.store.etcd import gatewaybulk
from resource_extend.store.etcd.chunks import FEW_KEYS
from resource_extend.store.etcd.gateway import GatewayKV
from resource_extend.store.etcd.h2 import client as h2
from resource_extend.store.etcd.kv import Entry
from resource_extend.store.etcd.messages import RANGE
from resource_extend.store.nodes import NodeStore
from resource_extend_dev.conformance import Outcome, run_plugin, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import executable

_prefixes = itertools.count()


def put(etcd: DevEtcd, key: bytes, value: bytes) -> None:
    etcd.call("/v3/kv/put", {"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()})


class Spy(GatewayKV):
    """The gateway client, counting the span reads it sends the gateway's way (one by one, after h2 failed)."""

    def __init__(self, config: EtcdConfig) -> None:
        super().__init__(config)
        self.gateway_spans = 0

    def _call(self, path: str, body: dict[str, Any], parse: Any, read: bool = False, resend: bool = True) -> Any:
        self.gateway_spans += path == RANGE
        return super()._call(path, body, parse, read, resend)


def read_all(kv: GatewayKV, chunks: list[list[str]]) -> list[Entry | None]:
    try:
        return [entry for entries in kv.reads(chunks) for entry in entries]
    finally:
        kv.close()


def without_h2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gatewaybulk, "_spans_over_h2", lambda *_: None)


NAMES = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x2FF), min_size=1, max_size=8)
# Big values from a few drawn bytes repeated: hypothesis draws little data per example.
BIG = st.builds(lambda seed, size: (seed * size)[:size], st.binary(min_size=1, max_size=8), st.integers(16385, 40000))
VALUES = st.one_of(st.binary(max_size=64), st.just(b""), BIG)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(NAMES, VALUES, min_size=2, max_size=24),
    st.dictionaries(st.binary(min_size=1, max_size=6), VALUES, max_size=12),
    st.sets(NAMES, max_size=4),
    st.integers(1, 9),
)
def test_span_reads_over_h2_find_what_the_gateway_finds(
    etcd: DevEtcd,
    monkeypatch: pytest.MonkeyPatch,
    stored: dict[str, bytes],
    others: dict[bytes, bytes],
    absent: set[str],
    per_chunk: int,
) -> None:
    # Wanted keys, keys between them that are not UTF-8 (or hold U+FFFD's bytes), values empty, small and
    # beyond a DATA frame (16 KiB) and together beyond HTTP/2's default window (64 KiB).
    directory = f"/h2diff/{next(_prefixes)}/"
    written = {(directory + name).encode(): value for name, value in stored.items()}
    written.update({directory.encode() + suffix: value for suffix, value in others.items()})
    for key, value in written.items():
        put(etcd, key, value)
    wanted = sorted({directory + name for name in stored} | {directory + name for name in absent})
    chunks = [wanted[i : i + per_chunk] for i in range(0, len(wanted), per_chunk)]
    config = EtcdConfig(machines=(etcd.url,), prefix="/h2diff")
    kv = Spy(config)
    over_h2 = read_all(kv, chunks)
    assert kv.gateway_spans == 0  # every span read answered over h2
    scanner = Spy(config)
    scanned = scanner.scan(directory)
    scanner.close()
    assert scanner.gateway_spans == (1 if len(written) > FEW_KEYS else 2)  # counted, then read over h2 if many
    with monkeypatch.context() as patch:
        without_h2(patch)
        assert over_h2 == read_all(GatewayKV(config), chunks)
        assert scanned == GatewayKV(config).scan(directory)
    assert [entry and entry.value for entry in over_h2] == [written.get(key.encode()) for key in wanted]


# -- a member whose h2c side misbehaves --------------------------------------------------------------------


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload


def headers(stream: int, fields: list[tuple[str, str]], end_stream: bool = True) -> bytes:
    return frame(h2.HEADERS, h2.END_HEADERS | (h2.END_STREAM if end_stream else 0), stream, Encoder().encode(fields))


SETTINGS = frame(h2.SETTINGS, 0, 0, b"")
OK = [(":status", "200"), ("content-type", "application/grpc")]
# What the member sends a client that opens with HTTP/2's preface, by fault; None: pass it to etcd.
H2_FAULTS: dict[str, bytes | None] = {
    "closed": b"",
    "not HTTP/2": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    "garbage": b"\x17\x03\x03\x00\x20" + bytes(range(32)),
    "GOAWAY": SETTINGS + frame(h2.GOAWAY, 0, 0, bytes(8)),
    "RST_STREAM": SETTINGS + frame(h2.RST_STREAM, 0, 1, (2).to_bytes(4, "big")),
    "grpc-status 8": SETTINGS + headers(1, [*OK, ("grpc-status", "8"), ("grpc-message", "too big")]),
    "HTTP 500": SETTINGS + headers(1, [(":status", "500")]),
    "a truncated frame": SETTINGS + frame(h2.DATA, 0, 1, bytes(100))[:20],
    "a frame beyond the bound": SETTINGS + ((1 << 24) - 1).to_bytes(3, "big") + bytes(6),
    "a bad header block": SETTINGS + frame(h2.HEADERS, h2.END_HEADERS, 1, b"\x80"),
    "a bad message": SETTINGS
    + headers(1, OK, False)
    + frame(h2.DATA, 0, 1, b"\0\0\0\0\3\x12\x05a")
    + headers(1, [("grpc-status", "0")]),
    "DATA on a stream never opened": SETTINGS + frame(h2.DATA, h2.END_STREAM, 7, b"x"),
    "silence": b"...",
    "a message beyond the bound": None,
}


class H2FaultProxy:
    """A member on 127.0.0.1 whose HTTP/1.1 connections are etcd's (bytes passed both ways), and whose h2c
    connections get ``fault``'s bytes (etcd's too for "pass", or when the fault's are None); ``h2_seen``
    counts the h2c connections, ``gateway_requests`` the requests sent on the others."""

    def __init__(self, upstream_port: int, fault: str) -> None:
        self.upstream, self.answer = upstream_port, None if fault == "pass" else H2_FAULTS[fault]
        self.h2_seen = self.gateway_requests = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for sock in self.held:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        first = b""
        while len(first) < len(h2.PREFACE) and (data := client.recv(len(h2.PREFACE) - len(first))):
            first += data
            if not h2.PREFACE.startswith(first):
                break
        if first == h2.PREFACE:
            self.h2_seen += 1
            if self.answer == b"...":  # silence: the connection is held open, unanswered
                return
            if self.answer is not None:
                client.recv(65536)
                client.sendall(self.answer)
                client.close()
                return
        upstream = socket.create_connection(("127.0.0.1", self.upstream))
        self.held.append(upstream)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream, first, None if first == h2.PREFACE else self)


def _pipe(source: socket.socket, sink: socket.socket, first: bytes = b"", counter: H2FaultProxy | None = None) -> None:
    try:
        data = first or source.recv(65536)
        while data:
            if counter is not None:
                counter.gateway_requests += data.count(b"POST /v3/")
            sink.sendall(data)
            data = source.recv(65536)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def h2_fault(request: pytest.FixtureRequest, etcd: DevEtcd) -> Iterator[H2FaultProxy]:
    proxy = H2FaultProxy(int(etcd.url.rsplit(":", 1)[1]), request.param)
    yield proxy
    proxy.close()


def seeded(etcd: DevEtcd, count: int) -> tuple[str, list[list[str]]]:
    directory = f"/h2faults/{next(_prefixes)}/"
    for i in range(count):
        put(etcd, f"{directory}n{i:03}".encode(), f"record {i}".encode() * (i % 5))
    keys = [f"{directory}n{i:03}" for i in range(count)] + [f"{directory}zz"]
    return directory, [keys[i : i + 5] for i in range(0, len(keys), 5)]


@pytest.mark.parametrize("h2_fault", list(H2_FAULTS), indirect=True)
def test_any_failure_of_the_h2_side_reads_the_spans_over_the_gateway(
    etcd: DevEtcd, h2_fault: H2FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(h2, "MAX_MESSAGE", 100)  # "a message beyond the bound": etcd's answer is ~150 bytes
    directory, chunks = seeded(etcd, 24)
    kv = Spy(EtcdConfig(machines=(h2_fault.url,), prefix="/h2faults", dial_timeout=0.5, request_timeout=5.0))
    started = time.monotonic()
    found = read_all(kv, chunks)
    assert time.monotonic() - started < 3  # silence after the preface costs the dial timeout, not the request's
    assert h2_fault.h2_seen == 1 and kv.gateway_spans == len(chunks)  # tried once, then every span read again
    scanner = Spy(EtcdConfig(machines=(h2_fault.url,), prefix="/h2faults", dial_timeout=0.5, request_timeout=5.0))
    scanned = scanner.scan(directory)
    scanner.close()
    assert h2_fault.h2_seen == 2 and scanner.gateway_spans == 2  # counted, tried over h2, read over the gateway
    with monkeypatch.context() as patch:
        without_h2(patch)
        assert found == read_all(GatewayKV(EtcdConfig(machines=(etcd.url,), prefix="/h2faults")), chunks)
        assert scanned == GatewayKV(EtcdConfig(machines=(etcd.url,), prefix="/h2faults")).scan(directory)
    assert [entry.key[-4:] for entry in found if entry] == [f"n{i:03}" for i in range(24)]
    assert [entry.key[-4:] for entry in scanned] == [f"n{i:03}" for i in range(24)]


@pytest.mark.parametrize("h2_fault", ["garbage", "GOAWAY", "silence"], indirect=True)
def test_the_h2_reader_raises_only_its_own_errors(h2_fault: H2FaultProxy) -> None:
    # What gatewaybulk.py catches to fall back: ValueError (h2.Failed is one) and OSError (a timeout is one).
    from resource_extend.endpoints import parse_endpoint
    from resource_extend.store.etcd.h2 import protobuf as rangewire

    client = h2.Client(parse_endpoint(h2_fault.url), None, 1.0)
    try:
        with pytest.raises((ValueError, OSError)):
            stream = client.send(rangewire.PATH, [rangewire.range_request(b"a", b"b", 0)], 1.0)[0]
            client.answer(stream, 0.5)
    finally:
        client.close()


def test_get_metrics_answers_alike_over_h2_and_after_it_failed(etcd: DevEtcd, tmp_path: Path) -> None:
    # Through the built executable, 300 nodes (three chunks of etcd/chunks.py's 128): through a member that
    # passes both protocols to etcd, the span reads go over h2 (the gateway carries the counting alone);
    # through one whose h2c side answers garbage, they go over the gateway.
    prefix = f"/h2metrics/{next(_prefixes)}"
    config = EtcdConfig(machines=(etcd.url,), prefix=prefix)
    store = NodeStore(GatewayKV(config), prefix, "gpu", GpuRecord)
    names = [f"node-{i:03}" for i in range(300)]
    for i, name in enumerate(names):
        store.put(name, GpuRecord({"nvidia-3070": i % 4 + 2}, {"nvidia-3070": i % 2 + 1}))
    request = json.dumps({"nodes": [{"podname": "p", "nodename": name} for name in [*names, "ghost"]]}).encode()
    proxies = [H2FaultProxy(int(etcd.url.rsplit(":", 1)[1]), fault) for fault in ("pass", "garbage")]
    outcomes: list[Outcome] = []
    try:
        for proxy in proxies:
            work = tmp_path / str(len(outcomes))
            work.mkdir()
            write_config(str(work), "gpu", proxy.url, prefix)
            outcomes.append(run_plugin(executable("gpu"), "get-metrics", request, str(work)))
    finally:
        for proxy in proxies:
            proxy.close()
    over_h2, fallen_back = outcomes
    assert over_h2.status == 0 and over_h2.stderr == "" and len(json.loads(over_h2.stdout)) > 300
    assert fallen_back == over_h2
    assert [proxy.h2_seen for proxy in proxies] == [1, 1]
    assert [proxy.gateway_requests for proxy in proxies] == [1, 4]  # the counting; and the three spans again


def test_the_h2_reader_takes_what_a_server_may_send_around_an_answer() -> None:
    # A scripted member: its SETTINGS and a PING (each acknowledged), PRIORITY and an unknown frame type
    # (ignored), the answer's header block padded, with priority and split over CONTINUATION, the message
    # in two DATA frames (one padded), trailers, a reset of the answered stream (NO_ERROR), then the
    # second stream's answer.
    from pyetcd.etcdrpc import rpc_pb2

    from resource_extend.endpoints import parse_endpoint
    from resource_extend.store.etcd.h2 import protobuf as rangewire

    reply = rpc_pb2.RangeResponse()
    reply.header.revision = 9
    reply.kvs.add(key=b"a\xff", value=b"v" * 20000, mod_revision=5)
    reply.count = 1  # as etcd answers: every record of the range, counted
    message = b"\0" + len(reply.SerializeToString()).to_bytes(4, "big") + reply.SerializeToString()
    block = Encoder().encode(OK)
    padded_priority = bytes((3,)) + bytes(5) + block[:2] + bytes(3)  # pad length, priority, a piece, padding
    script = (
        SETTINGS
        + frame(h2.PING, 0, 0, b"12345678")
        + frame(h2.PRIORITY, 0, 1, bytes(5))
        + frame(h2.HEADERS, h2.PADDED | h2.PRIORITY_FLAG, 1, padded_priority)
        + frame(h2.CONTINUATION, h2.END_HEADERS, 1, block[2:])
        + frame(h2.DATA, h2.PADDED, 1, bytes((4,)) + message[:10000] + bytes(4))
        + frame(0x20, 0, 0, b"an extension frame")
        + frame(h2.WINDOW_UPDATE, 0, 0, (1000).to_bytes(4, "big"))
        + frame(h2.DATA, 0, 1, message[10000:])
        + headers(1, [("grpc-status", "0")])
        + frame(h2.RST_STREAM, 0, 1, bytes(4))
        + headers(3, OK, end_stream=False)
        + frame(h2.DATA, 0, 3, message[:16384])
        + frame(h2.DATA, 0, 3, message[16384:])
        + headers(3, [("grpc-status", "0")])
    )
    listener = socket.create_server(("127.0.0.1", 0))
    received = bytearray()

    def serve() -> None:
        conn, _ = listener.accept()
        conn.settimeout(2)
        with contextlib.suppress(OSError):
            while len(received) < len(h2.PREFACE) + 9:
                received.extend(conn.recv(65536))
            conn.sendall(script)
            while data := conn.recv(65536):
                received.extend(data)
        conn.close()

    server = threading.Thread(target=serve)
    server.start()
    client = h2.Client(parse_endpoint(f"http://127.0.0.1:{listener.getsockname()[1]}"), "tok", 2.0)
    try:
        streams = client.send(rangewire.PATH, [rangewire.range_request(b"a", b"b", 0)] * 2, 2.0)
        answers = [client.answer(stream, 2.0) for stream in streams]
    finally:
        client.close()
        server.join()
        listener.close()
    for answer in answers:
        assert rangewire.range_response(rangewire.unframe(answer)) == (9, [(b"a\xff", b"v" * 20000, 5)])
    assert frame(h2.SETTINGS, h2.ACK, 0, b"") in received
    assert frame(h2.PING, h2.ACK, 0, b"12345678") in received
    assert b"\0\x05token\x03tok" in received  # the auth token as gRPC metadata
