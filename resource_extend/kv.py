"""The key-value operations the node store needs, and their transport over etcd's v3 JSON gateway.

The gateway speaks HTTP/1.1 with JSON bodies, so the whole client is the standard library's socket,
json and base64; a gRPC client's imports alone cost more than a whole call here (core spawns a
process per call). A second transport only has to implement ``KV``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import socket
import time
from dataclasses import dataclass
from typing import Any, Protocol

from resource_extend.config import EtcdConfig
from resource_extend.errors import AmbiguousWrite, PluginError, StoreUnavailable


@dataclass(frozen=True)
class Entry:
    key: str
    value: bytes
    mod_revision: int


class KV(Protocol):
    def get(self, key: str) -> Entry | None: ...

    def scan(self, prefix: str) -> list[Entry]: ...

    def put(self, key: str, value: bytes) -> None: ...

    def put_if(self, key: str, value: bytes, mod_revision: int) -> bool:
        """Write only if the key's mod_revision still equals ``mod_revision`` (0: the key is absent)."""
        ...

    def delete(self, key: str) -> None: ...


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with ``prefix`` (etcd's range_end)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"  # every key


class GatewayKV:
    """``KV`` over ``POST /v3/kv/*`` on the first endpoint of ``machines`` that answers."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self._endpoints = [_Endpoint.parse(url) for url in config.machines]
        self._conn: _Connection | None = None
        self._token: str | None = None
        self._deadline = 0.0

    # -- KV ------------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        reply = self._call("/v3/kv/range", {"key": _b64(key.encode())})
        entries = _entries(reply)
        if len(entries) > 1:
            raise PluginError(f"key: {key}: bad `Count` value, entity count invalid")
        return entries[0] if entries else None

    def scan(self, prefix: str) -> list[Entry]:
        raw = prefix.encode()
        return _entries(self._call("/v3/kv/range", {"key": _b64(raw), "range_end": _b64(prefix_end(raw))}))

    def put(self, key: str, value: bytes) -> None:
        self._call("/v3/kv/put", {"key": _b64(key.encode()), "value": _b64(value)})

    def put_if(self, key: str, value: bytes, mod_revision: int) -> bool:
        k = _b64(key.encode())
        reply = self._call(
            "/v3/kv/txn",
            {
                "compare": [{"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}],
                "success": [{"request_put": {"key": k, "value": _b64(value)}}],
            },
            resend=False,
        )
        return bool(reply.get("succeeded"))

    def delete(self, key: str) -> None:
        self._call("/v3/kv/deleterange", {"key": _b64(key.encode())})

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transport ----------------------------------------------------------------------------------

    def _call(self, path: str, body: dict[str, Any], resend: bool = True) -> dict[str, Any]:
        """POST to the first endpoint that answers. ``resend=False`` (a guarded write): once etcd may
        have the request, a lost or transient answer is an ``AmbiguousWrite``, never a second send."""
        # One deadline per process call: endpoints and retries never add up past it.
        if not self._deadline:
            self._deadline = time.monotonic() + self._config.total_timeout
        payload = json.dumps(body).encode()
        failures: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            if attempt and time.monotonic() >= self._deadline:
                break
            conn = self._connection(failures)
            try:
                status, data = conn.post(path, payload, self._token, self._timeout())
                if status == 401 and self._config.username and self._token is not None:
                    self._token = None  # an expired token: authenticate again
                    self._authenticate(conn)
                    status, data = conn.post(path, payload, self._token, self._timeout())
            except OSError as exc:
                failures.append(f"{conn.endpoint.url}: {_reason(exc)}")
                self._give_up_on(conn)
                if not resend and conn.sent:
                    raise AmbiguousWrite(f"etcd {conn.endpoint.url}{path}: no answer: {_reason(exc)}") from None
                continue
            if _transient(status, data) and not resend:
                raise AmbiguousWrite(f"etcd {conn.endpoint.url}{path}: HTTP {status}: {_message(data)}")
            if _transient(status, data):
                # A member that lost its leader or quorum: another member, or this one after the
                # election, can answer. Pause briefly so an election can finish.
                failures.append(f"{conn.endpoint.url}: HTTP {status}: {_message(data)}")
                self._give_up_on(conn)
                time.sleep(min(0.05 * 2**attempt, 0.5, max(self._deadline - time.monotonic(), 0)))
                continue
            return _reply(conn.endpoint.url, path, status, data)
        raise StoreUnavailable(f"etcd unavailable: {'; '.join(failures[-4:])}")

    def _give_up_on(self, conn: _Connection) -> None:
        self.close()
        self._rotate(conn.endpoint)

    def _timeout(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise StoreUnavailable("etcd unavailable: timed out")
        return min(self._config.request_timeout, left)

    def _connection(self, failures: list[str]) -> _Connection:
        if self._conn is not None:
            return self._conn
        for endpoint in list(self._endpoints):
            left = self._deadline - time.monotonic()
            if left <= 0:
                failures.append("timed out")
                break
            try:
                conn = _Connection.open(endpoint, self._config, min(self._config.dial_timeout, left))
                if self._config.username and self._token is None:
                    self._authenticate(conn)
            except OSError as exc:  # a member that drops us while we log in counts as unreachable
                failures.append(f"{endpoint.url}: {_reason(exc)}")
                continue
            self._conn = conn
            return conn
        tried = ", ".join(e.url for e in self._endpoints)
        raise StoreUnavailable(f"etcd unavailable (tried {tried}): {'; '.join(failures)}")

    def _rotate(self, failed: _Endpoint) -> None:
        # The next connection starts with the endpoints that have not just failed.
        if failed in self._endpoints:
            self._endpoints.remove(failed)
            self._endpoints.append(failed)

    def _authenticate(self, conn: _Connection) -> None:
        body = json.dumps({"name": self._config.username, "password": self._config.password}).encode()
        status, data = conn.post("/v3/auth/authenticate", body, None, self._timeout())
        if status != 200:
            # Never echo the reply: it is about the credentials.
            raise PluginError(f"etcd authentication failed for user {self._config.username!r} at {conn.endpoint.url}")
        token = json.loads(data or b"{}").get("token")
        if not isinstance(token, str) or not token:
            raise PluginError(f"etcd authentication at {conn.endpoint.url} returned no token")
        self._token = token


def _entries(reply: dict[str, Any]) -> list[Entry]:
    return [
        Entry(
            key=base64.b64decode(kv["key"]).decode("utf-8", errors="replace"),
            value=base64.b64decode(kv.get("value", "")),
            mod_revision=int(kv.get("mod_revision", 0)),
        )
        for kv in reply.get("kvs") or ()
    ]


# Bounded by the call's deadline too; enough to ride out one leader election on a small cluster.
MAX_ATTEMPTS = 12
_TRANSIENT = ("leader changed", "no leader", "request timed out", "too many requests", "not capable")


def _transient(status: int, data: bytes) -> bool:
    if status in (502, 503, 504):
        return True
    return status >= 500 and any(text in _message(data) for text in _TRANSIENT)


def _message(data: bytes) -> str:
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        doc = None
    message = (doc.get("message") or doc.get("error")) if isinstance(doc, dict) else None
    return message if isinstance(message, str) else data[:200].decode("utf-8", errors="replace")


def _reply(url: str, path: str, status: int, data: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        doc = None
    if status == 200 and isinstance(doc, dict):
        return doc
    raise StoreUnavailable(f"etcd {url}{path}: HTTP {status}: {_message(data)}")


def _reason(exc: OSError) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    return exc.strerror or str(exc) or type(exc).__name__


def backoff(attempt: int) -> None:
    """Sleep a jittered, growing pause before retrying a lost guarded write."""
    import random  # only a lost race pays for it

    time.sleep(random.uniform(0, min(0.1, 0.005 * (2**attempt))))  # jitter, not crypto


# scheme://host[:port][/]; a bare host:port means http, as etcd clients read it.
_URL = re.compile(
    r"(?:(?P<scheme>[Hh][Tt][Tt][Pp][Ss]?)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^/:\[\]\s]+)(?::(?P<port>[0-9]{1,5}))?/?\Z"
)


@dataclass(frozen=True)
class _Endpoint:
    url: str
    scheme: str
    host: str
    port: int

    @classmethod
    def parse(cls, url: str) -> _Endpoint:
        match = _URL.match(url)
        port = int(match["port"]) if match and match["port"] else 2379
        if match is None or not 0 < port < 65536:
            raise PluginError(f"config: etcd.machines: {url!r} is not an http(s)://host[:port] URL")
        host = match["host"].strip("[]")
        return cls(url=url, scheme=(match["scheme"] or "http").lower(), host=host, port=port)


class _Connection:
    """One kept-alive HTTP/1.1 connection: enough of the protocol for the gateway's JSON replies."""

    def __init__(self, endpoint: _Endpoint, sock: socket.socket) -> None:
        self.endpoint = endpoint
        self.sent = False
        self._sock = sock
        self._buf = b""

    @classmethod
    def open(cls, endpoint: _Endpoint, config: EtcdConfig, timeout: float) -> _Connection:
        # An ASCII host name goes down as bytes: a str makes the socket module import the idna codec.
        host: str | bytes = endpoint.host.encode("ascii") if endpoint.host.isascii() else endpoint.host
        sock = socket.create_connection((host, endpoint.port), timeout=timeout)  # type: ignore[arg-type]
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if endpoint.scheme == "https" or config.tls:
            sock = _wrap_tls(sock, endpoint, config)
        return cls(endpoint, sock)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def post(self, path: str, body: bytes, token: str | None, timeout: float) -> tuple[int, bytes]:
        self._sock.settimeout(timeout)
        auth = f"Authorization: {token}\r\n" if token else ""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.endpoint.host}:{self.endpoint.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{auth}\r\n"
        )
        self.sent = False
        self._sock.sendall(head.encode("latin-1") + body)
        self.sent = True  # from here on etcd may act on the request even if its answer is lost
        return self._response()

    def _response(self) -> tuple[int, bytes]:
        head = self._until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split(" ", 2)[1])
        except (IndexError, ValueError):
            raise ConnectionError(f"malformed HTTP status line {lines[0][:80]!r}") from None
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._chunked()
        elif "content-length" in headers:
            body = self._exactly(int(headers["content-length"]))
        else:
            body = self._rest()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, body

    def _fill(self) -> None:
        data = self._sock.recv(65536)
        if not data:
            raise ConnectionError("etcd closed the connection")
        self._buf += data

    def _until(self, marker: bytes) -> bytes:
        while True:
            at = self._buf.find(marker)
            if at >= 0:
                head, self._buf = self._buf[:at], self._buf[at + len(marker) :]
                return head
            self._fill()

    def _exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self._until(b"\r\n").split(b";")[0], 16)
            if size == 0:
                self._until(b"\r\n")  # end of the (empty) trailer section
                return b"".join(parts)
            parts.append(self._exactly(size))
            self._exactly(2)

    def _rest(self) -> bytes:
        while True:
            try:
                self._fill()
            except ConnectionError:
                data, self._buf = self._buf, b""
                return data


def _wrap_tls(sock: socket.socket, endpoint: _Endpoint, config: EtcdConfig) -> socket.socket:
    import ssl  # only TLS clusters pay for ssl

    context = ssl.create_default_context(cafile=config.ca or None)
    if config.cert and config.key:
        try:
            context.load_cert_chain(config.cert, config.key)
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise PluginError(f"config: etcd.cert/etcd.key: cannot load the client certificate: {exc}") from None
    try:
        return context.wrap_socket(sock, server_hostname=endpoint.host)
    except ssl.SSLError as exc:
        sock.close()
        raise ConnectionError(f"TLS handshake failed: {exc.reason or exc}") from None
