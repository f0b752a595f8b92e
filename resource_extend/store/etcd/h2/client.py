"""Unary gRPC calls over HTTP/2 with prior knowledge (h2c): the span reads of a bulk read, several in flight.

etcd serves its gRPC API and the JSON gateway on the same client URL. The gateway costs etcd ~13 ms to
answer 1000 storage records (it turns each answer into JSON), gRPC ~2.8 ms; grpcio costs a call ~90 ms
to import. So a bulk read's span reads go out here, on the C half of the socket module: one connection,
one stream per read (1, 3, 5, ...), several in flight (gatewaybulk.py sends a few ahead of the one it
decodes), so etcd answers the next while the caller decodes the last. Enough of HTTP/2 for that (RFC
9113): the client's windows opened wide at once so etcd never waits for this side; the server's
SETTINGS acknowledged, its PINGs answered; HEADERS with CONTINUATION, padding and priority; a reset of
a stream already answered ignored. HPACK is hpack.py's, the messages protobuf.py's.

Anything else (GOAWAY, RST_STREAM, a non-zero grpc-status, a frame or message beyond the bounds, bytes
that break the protocol, no answer within the request timeout) raises ``Failed``, a ``ValueError``, or an
``OSError``; gatewaybulk.py then reads what is left over the gateway. Reads are idempotent, so nothing
is lost by asking twice, and this module is an optimisation, never a new way for a call to fail.
"""

from __future__ import annotations

import time

from resource_extend.store.etcd.dial import connect
from resource_extend.store.etcd.h2.hpack import Decoder
from resource_extend.store.etcd.http1 import MAX_HEAD, MAX_REPLY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.endpoints import Endpoint

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# What this client accepts: frames of HTTP/2's default size (16 KiB, SETTINGS_MAX_FRAME_SIZE left as is),
# header blocks as big as connection.py allows an HTTP/1.1 head, and one answer's message up to
# MAX_MESSAGE (http1.py's bound of a gateway reply): a span read is of at most 2 x 128 records (chunks.py),
# and a bigger answer is read over the gateway instead.
MAX_FRAME = 16384
MAX_MESSAGE = MAX_REPLY
# The flow-control window this client grants (2**31 - 1, the most HTTP/2 allows), per stream
# (SETTINGS_INITIAL_WINDOW_SIZE) and for the connection (a WINDOW_UPDATE of the rest over the default).
WINDOW = (1 << 31) - 1
DEFAULT_WINDOW = 65535

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20


class Failed(ValueError):
    """An answer that is not a readable one: the span reads left go over the gateway."""


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload


def _literal(name: bytes, value: bytes) -> bytes:
    """A header field as a literal without indexing, its name and value plain (HPACK 6.2.2), both < 127 bytes
    or coded with HPACK's integer continuation."""
    return b"\0" + _length(name) + name + _length(value) + value


def _length(text: bytes) -> bytes:
    n = len(text)
    if n < 127:
        return bytes((n,))
    out = bytearray((127,))
    n -= 127
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class Stream:
    """One call's answer as it arrives: its DATA, its header blocks, whether the server ended it."""

    __slots__ = ("data", "done", "fields")

    def __init__(self) -> None:
        self.data = bytearray()
        self.fields: list[list[tuple[bytes, bytes]]] = []  # the header blocks: the answer's, then trailers
        self.done = False


class Client:
    """One h2c connection to ``endpoint``: unary calls sent with ``send``, their answers taken with ``answer``."""

    def __init__(self, endpoint: Endpoint, token: str | None, dial_timeout: float) -> None:
        host: str | bytes = endpoint.host.encode("ascii") if endpoint.host.isascii() else endpoint.host
        self._sock = connect(host, endpoint.port, dial_timeout)
        # Until the server's SETTINGS (an HTTP/2 server's first frame, sent at once) arrive, an answer is
        # waited for no longer than a connection: a member or proxy that accepts h2c and then stays silent
        # costs a bulk read the dial timeout, not the request timeout, before the gateway reads instead.
        self._dial = dial_timeout
        self._greeted = False
        self._answer_end = 0.0
        self._authority = endpoint.authority.encode()
        self._token = token.encode() if token else None
        self._streams: dict[int, Stream] = {}
        self._buffered = 0  # DATA held for the streams in flight: MAX_MESSAGE bounds it all
        self._next = 1
        self._buf = bytearray()
        self._at = 0
        self._end = 0.0
        self._decoder = Decoder()
        self._out = [
            PREFACE,
            _frame(SETTINGS, 0, 0, b"\0\x02\0\0\0\0" + b"\0\x04" + WINDOW.to_bytes(4, "big")),  # no push; the window
            _frame(WINDOW_UPDATE, 0, 0, (WINDOW - DEFAULT_WINDOW).to_bytes(4, "big")),
        ]
        # What this side may still send: the server's connection window (its default; requests are tiny,
        # and more than it holds is refused rather than waited for).
        self._window = DEFAULT_WINDOW

    def close(self) -> None:
        try:  # noqa: SIM105 -- contextlib would be one more import
            self._sock.close()
        except OSError:
            pass

    def send(self, path: str, messages: list[bytes], timeout: float) -> list[int]:
        """Start a unary call of ``path`` per message, all in one write; their stream ids, in order."""
        fields = _literal(b":method", b"POST") + _literal(b":scheme", b"http") + _literal(b":path", path.encode())
        fields += _literal(b":authority", self._authority) + _literal(b"content-type", b"application/grpc")
        fields += _literal(b"te", b"trailers")
        if self._token is not None:
            fields += _literal(b"token", self._token)
        if len(fields) > MAX_FRAME:
            raise Failed("request headers too long")
        ids = []
        out = self._out
        for message in messages:
            if len(message) > min(MAX_FRAME, self._window):
                raise Failed("request larger than the server's window")
            self._window -= len(message)
            stream, self._next = self._next, self._next + 2
            self._streams[stream] = Stream()
            out.append(_frame(HEADERS, END_HEADERS, stream, fields))
            out.append(_frame(DATA, END_STREAM, stream, message))
            ids.append(stream)
        self._flush(timeout)
        return ids

    def answer(self, stream: int, timeout: float) -> bytes:
        """The DATA of a call's successful answer (HTTP 200, grpc-status 0); ``Failed`` otherwise."""
        now = time.monotonic()
        self._answer_end = now + timeout
        self._end = self._answer_end if self._greeted else min(self._answer_end, now + self._dial)
        state = self._streams[stream]
        while not state.done:
            self._frame()
        del self._streams[stream]
        self._buffered -= len(state.data)
        if not state.fields:
            raise Failed("an answer without headers")
        head = dict(state.fields[0])
        if head.get(b":status") != b"200":
            raise Failed(f"HTTP status {head.get(b':status', b'none')!r}")
        last = dict(state.fields[-1])  # the trailers, or a trailers-only answer's headers
        status = last.get(b"grpc-status")
        if status != b"0":
            message = last.get(b"grpc-message", b"")[:200].decode("utf-8", errors="replace")
            raise Failed(f"grpc-status {status!r}: {message}")
        return bytes(state.data)

    # -- frames ---------------------------------------------------------------------------------------

    def _flush(self, timeout: float) -> None:
        if self._out:
            self._sock.settimeout(timeout)
            data = b"".join(self._out)
            self._out = []
            self._sock.sendall(data)

    def _frame(self) -> None:
        """Read and act on one frame."""
        head = self._read(9)
        length = int.from_bytes(head[:3], "big")
        kind, flags = head[3], head[4]
        stream = int.from_bytes(head[5:], "big") & 0x7FFFFFFF
        if length > MAX_FRAME:
            raise Failed(f"a frame of {length} bytes")
        payload = self._read(length)
        if kind == DATA:
            state = self._stream(stream)
            # Bounded over the connection: every stream in flight buffers, not only the one awaited.
            data = _unpadded(payload, flags)
            self._buffered += len(data)
            if self._buffered > MAX_MESSAGE:
                raise Failed("answers beyond the message bound")
            state.data += data
            if flags & END_STREAM:
                state.done = True
        elif kind == HEADERS:
            state = self._stream(stream)
            block = _unpadded(payload, flags)
            if flags & PRIORITY_FLAG:
                if len(block) < 5:
                    raise Failed("a HEADERS frame too short for its priority")
                block = block[5:]
            while not flags & END_HEADERS:
                more = self._read(9)
                size = int.from_bytes(more[:3], "big")
                if more[3] != CONTINUATION or int.from_bytes(more[5:], "big") & 0x7FFFFFFF != stream:
                    raise Failed("a header block not continued")
                if size > MAX_FRAME or len(block) + size > MAX_HEAD:
                    raise Failed("a header block beyond the bound")
                flags |= more[4] & END_HEADERS  # CONTINUATION defines no other flag
                block += self._read(size)
            if len(state.fields) == 2:
                # A gRPC answer has its headers and its trailers, no more: blocks without end (each a legal
                # 16 KiB) would otherwise be kept until the request timeout, hundreds of MB.
                raise Failed(f"a third header block on stream {stream}")
            state.fields.append(self._decoder.decode(block))
            if flags & END_STREAM:
                state.done = True
        elif kind == SETTINGS:
            if stream or length % 6 or (flags & ACK and length):
                raise Failed("a malformed SETTINGS frame")
            if not flags & ACK:
                if not self._greeted:
                    self._greeted = True
                    self._end = self._answer_end
                self._out.append(_frame(SETTINGS, ACK, 0, b""))
                self._flush(self._left())
        elif kind == PING:
            if stream or length != 8:
                raise Failed("a malformed PING frame")
            if not flags & ACK:
                self._out.append(_frame(PING, ACK, 0, payload))
                self._flush(self._left())
        elif kind == WINDOW_UPDATE:
            if length != 4:
                raise Failed("a malformed WINDOW_UPDATE frame")
            if not stream:
                self._window += int.from_bytes(payload, "big") & 0x7FFFFFFF
        elif kind == RST_STREAM:
            if length != 4:
                raise Failed("a malformed RST_STREAM frame")
            if stream in self._streams:  # a stream already answered may be reset (NO_ERROR) at no loss
                raise Failed(f"stream {stream} reset, code {int.from_bytes(payload, 'big')}")
        elif kind == GOAWAY:
            raise Failed(f"GOAWAY, code {int.from_bytes(payload[4:8], 'big')}")
        elif kind in (PUSH_PROMISE, CONTINUATION):
            raise Failed(f"an unexpected frame of type {kind}")
        # PRIORITY and unknown types are ignored, as RFC 9113 asks

    def _stream(self, stream: int) -> Stream:
        state = self._streams.get(stream)
        if state is None or state.done:
            raise Failed(f"a frame on stream {stream}, not open")
        return state

    def _left(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        return left

    def _read(self, n: int) -> bytes:
        buf, at = self._buf, self._at
        while len(buf) - at < n:
            if at:
                del buf[:at]
                at = self._at = 0
            self._sock.settimeout(self._left())
            data = self._sock.recv(262144)
            if not data:
                raise ConnectionError("etcd closed the connection")
            buf += data
        self._at = at + n
        return bytes(buf[at : at + n])


def _unpadded(payload: bytes, flags: int) -> bytes:
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise Failed("padding longer than its frame")
    return payload[1 : len(payload) - payload[0]]
