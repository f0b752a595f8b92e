"""Loopback proxies in front of the test etcd that hold a guarded write (a transaction with a compare) until
the test says what becomes of it: forwarded to etcd now or later, answered, or cut off unanswered. One
speaks the v3 JSON gateway (HTTP/1.1), one gRPC (a generic grpcio server passing raw bytes), with the
same ``Held`` steps, so the exactly-once tests (test_exactly_once.py) script one interleaving of two
writers on both transports.

Not a test module. Every other request passes through untouched. Both listen on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import struct
import threading
from concurrent import futures
from typing import Any

from tests.faultproxy import _close, _framed, _Reader, forward, request_of

WAIT = 20.0  # the longest a step waits for the plugin under test: far more than any call takes


class Held:
    """A guarded write the proxy holds, its client waiting. ``apply`` sends it to etcd now (it lands, or
    fails its compare, as etcd decides); ``answer`` gives the client etcd's answer (applying it first if it
    was not); ``drop`` cuts the client off unanswered (a reset, or gRPC's UNAVAILABLE), whether or not the
    write was applied."""

    def __init__(self, send: Any) -> None:
        self._send = send  # () -> etcd's answer, in the proxy's own form
        self._answer: Any = None
        self._applied = False
        self._done = threading.Event()
        self.dropped = False

    def apply(self) -> None:
        assert not self._applied, "applied twice"
        self._answer, self._applied = self._send(), True

    def answer(self) -> None:
        if not self._applied:
            self.apply()
        self._done.set()

    def drop(self) -> None:
        self.dropped = True
        self._done.set()

    def wait(self) -> Any:
        """The proxy's side: etcd's answer to send, or None to cut the client off."""
        if not self._done.wait(WAIT):
            return None
        return None if self.dropped else self._answer


class HoldProxy:
    """What both proxies share: how many guarded writes to hold, and the queue the test takes them from."""

    url = ""

    def __init__(self) -> None:
        self._holds = 0
        self._lock = threading.Lock()
        self.held: queue.Queue[Held] = queue.Queue()

    def hold(self, count: int) -> None:
        """Hold the next ``count`` guarded writes."""
        with self._lock:
            self._holds += count

    def next(self) -> Held:
        """The next held write, once its client has sent it."""
        return self.held.get(timeout=WAIT)

    def _take(self) -> bool:
        with self._lock:
            if not self._holds:
                return False
            self._holds -= 1
            return True


class GatewayHoldProxy(HoldProxy):
    """The v3 JSON gateway's HTTP/1.1, each request forwarded on a connection of its own."""

    def __init__(self, upstream_port: int) -> None:
        super().__init__()
        self.upstream = ("127.0.0.1", upstream_port)
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._closed = False
        self._clients: list[socket.socket] = []

    def __enter__(self) -> GatewayHoldProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._server.close()
        for client in self._clients:
            _close(client)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        reader = _Reader(client.recv)
        try:
            while not self._closed:
                asked = request_of(reader)
                if asked is None:
                    return
                lines, path, body = asked
                if path == "/v3/kv/txn" and b'"compare"' in body and self._take():
                    held = Held(lambda lines=lines, body=body: forward(self.upstream, lines, body))
                    self.held.put(held)
                    answer = held.wait()
                    if answer is None:
                        # A reset: the client learns nothing of the write.
                        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        return
                    client.sendall(_framed(*answer))
                    continue
                client.sendall(_framed(*forward(self.upstream, lines, body)))
        except OSError:
            return
        finally:
            _close(client)


class GrpcHoldProxy(HoldProxy):
    """etcd's gRPC API, every method passed through as raw bytes by a generic grpcio server."""

    def __init__(self, upstream_port: int) -> None:
        import grpc

        super().__init__()
        self._grpc = grpc
        self._upstream = grpc.insecure_channel(f"127.0.0.1:{upstream_port}")
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self._server.add_generic_rpc_handlers((_Passing(self),))  # type: ignore[arg-type]
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.url = f"http://127.0.0.1:{port}"

    def __enter__(self) -> GrpcHoldProxy:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=None)
        self._upstream.close()

    def unary(self, method: str, request: bytes, context: Any) -> bytes:
        forward: Any = self._upstream.unary_unary(method)
        if method == "/etcdserverpb.KV/Txn" and _guarded_write(request) and self._take():
            held = Held(lambda: forward(request, timeout=30))
            self.held.put(held)
            answer = held.wait()
            if answer is None:
                context.abort(self._grpc.StatusCode.UNAVAILABLE, "Connection reset by peer")
            return bytes(answer)
        try:
            return bytes(forward(request, timeout=30))
        except self._grpc.RpcError as exc:
            context.abort(exc.code(), exc.details() or "")
            raise  # abort raises; never reached


def _guarded_write(request: bytes) -> bool:
    from pyetcd import etcdrpc

    return bool(etcdrpc.TxnRequest.FromString(request).compare)


class _Passing:
    """grpcio's generic handler: every method, unary, bytes in and out."""

    def __init__(self, proxy: GrpcHoldProxy) -> None:
        self._proxy = proxy

    def service(self, details: Any) -> Any:
        import grpc

        method = details.method

        def handle(request: bytes, context: Any) -> bytes:
            return self._proxy.unary(method, request, context)

        return grpc.unary_unary_rpc_method_handler(handle)


@contextlib.contextmanager
def hold_proxy(transport: str, upstream_port: int) -> Any:
    proxy: HoldProxy = GatewayHoldProxy(upstream_port) if transport == "gateway" else GrpcHoldProxy(upstream_port)
    with proxy:  # type: ignore[attr-defined]
        yield proxy
