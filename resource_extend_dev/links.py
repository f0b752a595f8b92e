"""Loopback TCP proxies that stand for the network between etcd members and their clients, so a test can cut
one link and heal it: a partition without a network namespace (DevCluster(partitionable=True)).

Each member gets two: one in front of its client port (what the plugin's etcd.machines name) and one in
front of its peer port (the URL it advertises to the others). Peer traffic is told apart by who sends it:
etcd's raft transport names its own member in every request's ``X-Server-From`` header (stream readers,
pipelines and snapshots alike), so the proxy in front of member ``b`` knows a connection comes from ``a``
and can cut the link ``a``-``b`` alone. Everything listens and dials on 127.0.0.1 only, and each proxy
stops with the cluster.
"""

from __future__ import annotations

import contextlib
import socket
import threading

CLIENT = -1  # the "member" a client connection comes from


class Link:
    """A TCP proxy to ``upstream`` on 127.0.0.1 whose connections can be cut by where they come from."""

    def __init__(self, upstream: int, peer: bool) -> None:
        self.upstream = upstream
        self._peer = peer
        self._cut: set[int] = set()  # the senders refused now (CLIENT for a client proxy)
        # Each open connection, with its sender's raft id ("" for a client): read as an index only when a
        # link is cut, since the streams connect before the cluster's ids are known.
        self._open: list[tuple[str, socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(128)
        self.port = int(self._server.getsockname()[1])
        self.ids: dict[str, int] = {}  # a member's raft id (hex, as X-Server-From writes it) → its index
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, sender: int) -> None:
        """Refuse ``sender``'s connections (CLIENT: every client's), and reset those open now."""
        with self._lock:
            self._cut.add(sender)
            doomed = [(a, b) for who, a, b in self._open if self._index(who) == sender]
        for a, b in doomed:
            _reset(a)
            _reset(b)

    def heal(self, sender: int) -> None:
        with self._lock:
            self._cut.discard(sender)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.close()
        with self._lock:
            for _, a, b in self._open:
                _reset(a)
                _reset(b)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        first = b""
        sender = ""
        try:
            if self._peer:
                client.settimeout(10)
                while b"\r\n\r\n" not in first and len(first) < 65536:
                    data = client.recv(65536)
                    if not data:
                        raise OSError("closed before its request")
                    first += data
                client.settimeout(None)
                sender = self._sender(first)
            with self._lock:
                if self._index(sender) in self._cut or self._closed:
                    raise OSError("cut")
            upstream = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
            upstream.settimeout(None)
        except OSError:
            _reset(client)
            return
        with self._lock:
            self._open.append((sender, client, upstream))
        if first:
            with contextlib.suppress(OSError):
                upstream.sendall(first)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)
        with self._lock:
            self._open = [entry for entry in self._open if entry[1] is not client]

    def _index(self, sender: str) -> int:
        return self.ids.get(sender, CLIENT)

    @staticmethod
    def _sender(head: bytes) -> str:
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"x-server-from":
                return value.strip().decode(errors="replace")
        return ""  # not raft's (version checks and the like): cut only with the clients


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _reset(sink)
        _reset(source)


def _reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        sock.close()
