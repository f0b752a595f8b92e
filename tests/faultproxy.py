"""A loopback HTTP proxy in front of a real etcd that spoils chosen replies: the tests of what the gateway
transport does when etcd's answer is delayed, trickled, cut short, garbled or reset (issue 20).

Not a test module: test_etcd_faults.py imports it. It listens on 127.0.0.1 only. Each request is read whole
(head and Content-Length body), forwarded to etcd on a connection of its own (``Connection: close``, so
etcd's whole answer is what it sends before closing), and etcd's answer is sent back, reframed with a
Content-Length, unless a rule spoils it. A write is forwarded before its answer is spoiled, so it lands in
etcd as it would behind a flaky network; ``swallow`` is the one fault that never forwards the request.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from typing import Callable

import hpack

# Every way of spoiling an answer, by name: the status, headers and body etcd sent → the bytes sent back,
# and whether the connection is then closed. "reset", "swallow" and "trickle" are handled apart.
FAULTS = (
    "cut-after-head",  # Connection: close, no Content-Length, half the body, closed
    "cut-short",  # a Content-Length, half the body, closed
    "garbled-body",  # the body's bytes scrambled, length kept
    "not-json",  # a 200 whose body is an HTML error page
    "bad-chunk-size",  # chunked, with a chunk size that is not hex
    "bad-content-length",  # Content-Length: twelve
    "garbage-status",  # not an HTTP status line
    "two-lengths",  # two Content-Lengths that disagree (the body's and one more), kept alive: RFC 9112 refuses it
    "reset",  # the connection reset (RST) instead of an answer
    "swallow",  # the request never forwarded, the connection closed without an answer
    "trickle",  # the right answer, 16 bytes a second
    "delay",  # the right answer, after 10 s
)
# The right answer, framed in a way RFC 9112 allows and a client must read (issue 35): spoiling nothing.
HARMLESS = (
    "interim-first",  # a 100 Continue, then the answer (RFC 9110 15.2: the client skips it)
    "bare-lf-head",  # the answer, its head's lines ended by bare LFs (RFC 9112 2.2)
)
# Replies that never end, each well formed as far as it goes (issue 30): sent until the client goes away, for
# ENDLESS_SECONDS at most. "endless-headers" answers an h2c connection (path "*", HTTP/2's preface) with
# SETTINGS, then HEADERS frames on stream 1, each a legal 16 KB header block, none ending the stream.
ENDLESS = (
    "endless-length",  # Content-Length: 999999999999999, then zeros
    "endless-chunks",  # chunked, chunk size fffffffffffffff, then zeros
    "endless-close",  # a 200 with neither length nor chunking, zeros until close
    "endless-headers",
)
ENDLESS_SECONDS = 20
# A write forwarded (it lands), then answered as a compare that failed, at revision 1: older than anything
# the caller read before it (a lying member or proxy, issue 30).
STALE = "stale-compare-failed"
STALE_ANSWER = b'{"header":{"cluster_id":"1","member_id":"1","revision":"1","raft_term":"2"}}'
# etcd's own timeout for a request, as its JSON gateway answers it (gRPC's UNKNOWN, HTTP 500): a member cut
# off from its leader whose linearizable read outlived its deadline. Not forwarded.
ETCD_DEADLINE = "etcd-deadline"
ETCD_DEADLINE_ANSWER = b'{"error":"context deadline exceeded","code":2,"message":"context deadline exceeded"}'
# A write held back and its connection closed unanswered (the caller cannot know whether it applied), then
# applied after all, just before the caller's first read after it is answered: as a proposal etcd answered
# "leader changed" for and still committed, forwarded by a member that lost the lead.
LATE = "late-write"
# A write forwarded (it lands), then answered with a lie (issue 35), each a 200: a failed compare without
# the ranges it answers with; etcd's answer with a second "succeeded" that says false; an error's JSON; the
# header's revision as the JSON constant Infinity, or as 1e999 (no int64 holds either).
FORGED: dict[str, Callable[[bytes], bytes]] = {
    "false-without-ranges": lambda answer: b'{"header":' + _header(answer) + b"}",
    "duplicate-succeeded": lambda answer: answer[:-1] + b',"succeeded":false}',
    "error-on-200": lambda answer: b'{"error":"etcdserver: request timed out","code":14,"message":"timed out"}',
    "infinite-revision": lambda answer: answer.replace(b'"revision":"', b'"revision":Infinity,"x":"', 1),
    "huge-revision": lambda answer: answer.replace(b'"revision":"', b'"revision":1e999,"x":"', 1),
    # a failed compare well formed, found nothing, at revision 1: older than anything the caller read
    "stale-empty-ranges": lambda answer: (
        b'{"header":{"revision":"1"},"responses":[{"response_range":{}},{"response_range":{}}]}'
    ),
}


def _header(answer: bytes) -> bytes:
    """The header object of one of etcd's answers, as etcd wrote it."""
    start = answer.index(b'"header":') + len(b'"header":')
    return answer[start : answer.index(b"}", start) + 1]


def _spoiled(fault: str, status: int, body: bytes) -> tuple[bytes, bool]:
    half = body[: len(body) // 2]
    ok = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n".encode()
    if fault == "cut-after-head":
        return ok + b"Connection: close\r\n\r\n" + half, True
    if fault == "cut-short":
        return ok + f"Content-Length: {len(body)}\r\n\r\n".encode() + half, True
    if fault == "garbled-body":
        scrambled = bytes(b ^ 0x5A for b in body)
        return ok + f"Content-Length: {len(body)}\r\n\r\n".encode() + scrambled, False
    if fault == "not-json":
        page = b"<html><body>502 upstream hiccup</body></html>"
        return f"HTTP/1.1 200 OK\r\nContent-Length: {len(page)}\r\n\r\n".encode() + page, False
    if fault == "bad-chunk-size":
        return ok + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + b"\r\n0\r\n\r\n", True
    if fault == "bad-content-length":
        return ok + b"Content-Length: twelve\r\n\r\n" + body, True
    if fault == "garbage-status":
        return b"HTTP/1.1 OK-ish\r\n\r\n" + body, True
    if fault == "two-lengths":
        return ok + f"Content-Length: {len(body)}\r\nContent-Length: {len(body) + 1}\r\n\r\n".encode() + body, False
    if fault == "interim-first":
        return b"HTTP/1.1 100 Continue\r\n\r\n" + _framed(status, body), False
    if fault == "bare-lf-head":
        head, _, rest = _framed(status, body).partition(b"\r\n\r\n")
        return head.replace(b"\r\n", b"\n") + b"\n\n" + rest, False
    raise ValueError(fault)


class Rule:
    """Spoil the answers to requests whose path is ``path`` and whose body holds ``holding``: after the
    first ``after`` of them, the next ``times`` (None: all)."""

    def __init__(self, fault: str, path: str, holding: bytes = b"", times: int | None = None, after: int = 0) -> None:
        if fault not in (*FAULTS, *HARMLESS, *ENDLESS, STALE, LATE, ETCD_DEADLINE, *FORGED):
            raise ValueError(fault)
        self.fault, self.path, self.holding, self.left, self.after = fault, path, holding, times, after

    def take(self, path: str, body: bytes) -> bool:
        if path != self.path or self.holding not in body or self.left == 0:
            return False
        if self.after:
            self.after -= 1
            return False
        if self.left is not None:
            self.left -= 1
        return True


class FaultProxy:
    """``with FaultProxy(etcd_port) as proxy``: ``proxy.url`` for etcd.machines, ``proxy.rules`` to spoil
    answers, ``proxy.sent`` the bytes sent back to clients, ``proxy.spoiled`` the faults applied."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.rules: list[Rule] = []
        self.sent = 0
        self.spoiled: list[str] = []
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._closed = False
        self._clients: list[socket.socket] = []
        # LATE's write held back, and how many reads are still to pass before it is applied.
        self._late: tuple[list[bytes], bytes] | None = None
        self._late_after = 0

    def __enter__(self) -> FaultProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._server.close()
        with self._lock:
            for client in self._clients:
                _close(client)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _rule(self, path: str, body: bytes) -> str | None:
        with self._lock:
            for rule in self.rules:
                if rule.take(path, body):
                    self.spoiled.append(rule.fault)
                    return rule.fault
        return None

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(60)
        reader = _Reader(client.recv)
        try:
            while not self._closed:
                asked = request_of(reader)
                if asked is None:
                    return
                lines, path, body = asked
                fault = self._rule(path, body)
                if fault == "swallow":
                    return
                if fault == LATE:
                    with self._lock:
                        self._late, self._late_after = (lines, body), 1
                    return
                if fault == ETCD_DEADLINE:
                    self._send(client, _framed(500, ETCD_DEADLINE_ANSWER))
                    continue
                if path == "/v3/kv/range" or (path == "/v3/kv/txn" and b'"request_put"' not in body):
                    self._release_late()
                if fault in ENDLESS:
                    # A write is forwarded first, as with every other spoiled answer: it lands in etcd.
                    if fault != "endless-headers":
                        self._forward(lines, body)
                    self._endless(client, fault)
                    return
                status, reply = self._forward(lines, body)
                if fault == STALE:
                    self._send(client, _framed(200, STALE_ANSWER))
                elif fault in FORGED:
                    self._send(client, _framed(200, FORGED[fault](reply)))
                elif fault is None:
                    self._send(client, _framed(status, reply))
                elif fault == "reset":
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                elif fault in ("trickle", "delay"):
                    data = _framed(status, reply)
                    if fault == "delay":
                        time.sleep(10)
                        self._send(client, data)
                        continue
                    for at in range(0, len(data), 16):  # bounded by the answer's length
                        self._send(client, data[at : at + 16])
                        time.sleep(1)
                else:
                    data, close = _spoiled(fault, status, reply)
                    self._send(client, data)
                    if close:
                        return
        except OSError:
            return  # the client went away (timed out, as it should)
        finally:
            _close(client)

    def _release_late(self) -> None:
        with self._lock:
            if self._late is None:
                return
            self._late_after -= 1
            if self._late_after:
                return
            late, self._late = self._late, None
        self._forward(*late)

    def _endless(self, client: socket.socket, fault: str) -> None:
        """Send ``fault``'s reply until the client goes away (an OSError ends the caller), ENDLESS_SECONDS at most."""
        if fault == "endless-headers":
            head = _h2_frame(4, 0, 0, b"")  # SETTINGS, none changed
            field = b"x-filler"
            value = b"v" * 16000
            # A literal the decoder must read and never index, so each repeat is decoded in full.
            block = hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(field, value)], huffman=False)
            piece = _h2_frame(1, 0x4, 1, block)  # HEADERS, END_HEADERS, stream 1, never END_STREAM
        else:
            head = {
                "endless-length": b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999999\r\n\r\n",
                "endless-chunks": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n",
                "endless-close": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n",
            }[fault]
            piece = b"0" * 65536
        client.settimeout(5)
        self._send(client, head)
        ends = time.monotonic() + ENDLESS_SECONDS
        while time.monotonic() < ends:
            self._send(client, piece)

    def _send(self, client: socket.socket, data: bytes) -> None:
        client.sendall(data)
        with self._lock:
            self.sent += len(data)

    def _forward(self, lines: list[bytes], body: bytes) -> tuple[int, bytes]:
        return forward(self.upstream, lines, body)


def request_of(reader: _Reader) -> tuple[list[bytes], str, bytes] | None:
    """The next request a client sent: its head's lines, its path and its body; None once it has gone."""
    head = reader.until(b"\r\n\r\n")
    if head is None:
        return None
    lines = head.split(b"\r\n")
    length = next((int(v) for n, _, v in (h.partition(b":") for h in lines[1:])
                   if n.strip().lower() == b"content-length"), 0)  # fmt: skip
    body = reader.exactly(length)
    return None if body is None else (lines, lines[0].split(b" ")[1].decode(), body)


def forward(upstream: tuple[str, int], lines: list[bytes], body: bytes) -> tuple[int, bytes]:
    """etcd's status and body for this request, on a connection of its own."""
    kept = [line for line in lines[1:] if line.partition(b":")[0].strip().lower() != b"connection"]
    request = b"\r\n".join([lines[0], *kept, b"Connection: close"]) + b"\r\n\r\n" + body
    with socket.create_connection(upstream, timeout=30) as connection:
        connection.sendall(request)
        reader = _Reader(connection.recv)
        head = reader.until(b"\r\n\r\n") or b""
        status = int(head.split(b" ")[1])
        headers = {n.strip().lower(): v.strip() for n, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])}
        if headers.get(b"transfer-encoding") == b"chunked":
            parts = []
            while True:
                size = int((reader.until(b"\r\n") or b"0").split(b";")[0], 16)
                if size == 0:
                    break
                parts.append(reader.exactly(size) or b"")
                reader.exactly(2)
            return status, b"".join(parts)
        if b"content-length" in headers:
            return status, reader.exactly(int(headers[b"content-length"])) or b""
        return status, reader.rest()


def _framed(status: int, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    )


def _h2_frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()


class _Reader:
    """Buffered reads off a socket's recv; None once the peer has closed before the wanted bytes came."""

    def __init__(self, recv: Callable[[int], bytes]) -> None:
        self._recv = recv
        self._buf = b""

    def _more(self) -> bool:
        data = self._recv(65536)
        self._buf += data
        return bool(data)

    def until(self, marker: bytes) -> bytes | None:
        while marker not in self._buf:
            if not self._more():
                return None
        head, _, self._buf = self._buf.partition(marker)
        return head

    def exactly(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            if not self._more():
                return None
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def rest(self) -> bytes:
        while self._more():
            pass
        data, self._buf = self._buf, b""
        return data
