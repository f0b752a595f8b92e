"""One kept-alive HTTP/1.1 connection to an etcd member: enough of the protocol for the gateway's JSON replies.

The C half of the standard library's socket module (``_socket``) and nothing more: ``http.client`` costs
more to import than it would save here, and the ``socket`` wrapper imports ``enum`` and ``selectors`` (with
``collections``), several milliseconds every call pays for nothing. A TLS member's connection is made by
the ``socket`` module and wrapped by tls.py, imported only then, since ``ssl`` wraps nothing else.
"""

from __future__ import annotations

import _socket
import time

from resource_extend.store.etcd import dial, http1

TYPE_CHECKING = False
if TYPE_CHECKING:
    from socket import socket

    from resource_extend.config import EtcdConfig
    from resource_extend.endpoints import Endpoint


# h2/client.py bounds a header block by this too.
MAX_HEAD = http1.MAX_HEAD


class Connection:
    """One kept-alive connection; ``sent`` says whether etcd may have acted on the last request even if its
    answer is lost, which decides whether a guarded write may be sent again."""

    def __init__(self, endpoint: Endpoint, sock: _socket.socket | socket) -> None:
        self.endpoint = endpoint
        self.sent = False
        self.answered = False
        self.closed = False
        self._sock = sock
        # When the answers now awaited must have arrived (time.monotonic()): every recv gets only what is
        # left of it, so a reply trickled a few bytes at a time cannot restart the clock with each byte.
        self._end = 0.0
        self._parser = http1.Parser()

    @classmethod
    def open(cls, endpoint: Endpoint, config: EtcdConfig, timeout: float) -> Connection:
        # An ASCII host name goes down as bytes: a str makes the socket module import the idna codec.
        host: str | bytes = endpoint.host.encode("ascii") if endpoint.host.isascii() else endpoint.host
        if endpoint.tls:
            from resource_extend.store.etcd import tls  # only TLS clusters pay for ssl

            return cls(endpoint, tls.connect(host, endpoint, config, timeout))
        return cls(endpoint, dial.connect(host, endpoint.port, timeout))

    def close(self) -> None:
        self.closed = True
        try:  # noqa: SIM105 -- contextlib would be one more import on every call
            self._sock.close()
        except OSError:
            pass

    def await_answer(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, until the member sends anything or closes; never raises. Nothing is
        read into the answer buffer: the connection is to be closed after this."""
        if self._parser.buffered:
            return
        try:
            self._sock.settimeout(timeout)
            self._sock.recv(1)
        except OSError:  # a timeout, a reset: the member is slow or gone
            pass

    def settimeout(self, timeout: float) -> None:
        """Allow ``timeout`` seconds from now for what is sent and read until the next call of this."""
        self._end = time.monotonic() + timeout
        self._sock.settimeout(timeout)

    def post(self, path: str, body: bytes, token: str | None, timeout: float) -> tuple[int, bytes]:
        self.send([(path, body)], token, timeout)
        return self.receive()

    def send(self, requests: list[tuple[str, bytes]], token: str | None, timeout: float) -> None:
        """POST each (path, body) in one write. More than one is HTTP/1.1 pipelining: etcd answers them in
        order, one ``receive`` each, and works on the next while this side reads the last. ``timeout``
        bounds the sending and the reading of every answer to these requests together."""
        self.settimeout(timeout)
        auth = f"Authorization: {token}\r\n" if token else ""
        host = self.endpoint.authority
        data = b"".join(
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{auth}\r\n".encode("latin-1")
            + body
            for path, body in requests
        )
        self.sent = False
        self._sock.sendall(data)
        self.sent = True  # from here on etcd may act on the request even if its answer is lost

    def receive(self) -> tuple[int, bytes]:
        """The next answer's status and body; failing.py's ``BadReply`` (an ``OSError``) when the bytes are
        not an HTTP/1.1 answer, or one past http1.py's bound."""
        parser = self._parser
        try:
            reply = parser.next()
            while reply is None:
                try:
                    parser.feed(self._recv())
                except ConnectionError:
                    # A body read until close ends here; any other reply was cut short.
                    reply = parser.eof()
                    if reply is None:
                        raise
                    break
                reply = parser.next()
        except http1.Malformed as exc:
            raise _bad_reply(str(exc)) from None
        if reply.close:
            self.close()
        return reply.status, reply.body

    def _recv(self) -> bytes:
        left = self._end - time.monotonic()
        if left <= 0:
            raise _socket.timeout("timed out")
        self._sock.settimeout(left)
        data = self._sock.recv(65536)
        if not data:
            from resource_extend.store.etcd import failing

            raise failing.closed(self.endpoint, self.answered)
        self.answered = True
        return data


def _bad_reply(why: str) -> OSError:
    """failing.py's ``BadReply``, created only when a reply is bad."""
    from resource_extend.store.etcd import failing

    return failing.bad_reply(why)
