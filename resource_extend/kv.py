"""The key-value operations the node store needs, and their transport over etcd's v3 JSON gateway.

The gateway speaks HTTP/1.1 with JSON bodies, so the whole client is the standard library's socket,
json and base64; a gRPC client's imports alone cost more than a whole call here (core spawns a
process per call). A second transport only has to implement ``KV``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import time

from resource_extend.config import Endpoint, EtcdConfig
from resource_extend.errors import AmbiguousWrite, PluginError, StoreUnavailable
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    from resource_extend.typeshim import Protocol


class Entry(Fields):
    """One key as read, never changed afterwards (hashable, like the frozen record it was)."""

    __slots__ = ("key", "mod_revision", "value")

    def __init__(self, key: str, value: bytes, mod_revision: int) -> None:
        self.key = key
        self.value = value
        self.mod_revision = mod_revision

    def __hash__(self) -> int:
        return hash((self.key, self.value, self.mod_revision))


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
        self._endpoints = list(config.endpoints)
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
            # A read may race to several endpoints at once: its answer from the first to reply is used.
            conn, early = self._connection(failures, (path, payload) if path in _READS else None)
            try:
                status, data = early if early is not None else conn.post(path, payload, self._token, self._timeout())
                if status == 401 and self._config.username and self._token is not None:
                    self._token = None  # an expired token: authenticate again
                    self._token = self._authenticate(conn)
                    status, data = conn.post(path, payload, self._token, self._timeout())
            except OSError as exc:
                failures.append(f"{conn.endpoint.url}: {self._why(exc)}")
                self._give_up_on(conn)
                if not resend and conn.sent:
                    raise AmbiguousWrite(f"etcd {conn.endpoint.url}{path}: no answer: {self._why(exc)}") from None
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
        raise StoreUnavailable(f"etcd unavailable: {_summary(failures[-4:])}")

    def _why(self, exc: OSError) -> str:
        return _reason(exc, self._config.client_certificate)

    def _give_up_on(self, conn: _Connection) -> None:
        self.close()
        self._rotate(conn.endpoint)

    def _timeout(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise StoreUnavailable("etcd unavailable: timed out")
        return min(self._config.request_timeout, left)

    def _connection(
        self, failures: list[str], read: tuple[str, bytes] | None
    ) -> tuple[_Connection, tuple[int, bytes] | None]:
        """The kept connection, or a new one to the first endpoint that answers, and that endpoint's
        answer to ``read`` when it was sent while connecting."""
        if self._conn is not None:
            return self._conn, None
        if len(self._endpoints) == 1:
            endpoint = self._endpoints[0]
            try:
                conn, token, _ = self._greet(endpoint, None)
            except OSError as exc:
                failures.append(f"{endpoint.url}: {self._why(exc)}")
                raise StoreUnavailable(f"etcd unavailable: {_summary(failures)}") from None
            self._conn, self._token = conn, token
            return conn, None
        race = _Race(self, list(self._endpoints), read)
        found = race.run()
        failures.extend(race.failures)
        if found is None:
            tried = ", ".join(e.url for e in self._endpoints)
            raise StoreUnavailable(f"etcd unavailable (tried {tried}): {_summary(failures) or 'timed out'}")
        conn, token, early = found
        self._conn, self._token = conn, token
        return conn, early

    def _greet(
        self, endpoint: Endpoint, read: tuple[str, bytes] | None
    ) -> tuple[_Connection, str | None, tuple[int, bytes] | None]:
        """Connect to ``endpoint`` and get its first answer: the auth token when a user is configured,
        else ``read``'s reply, else (several endpoints racing) a status request's. The connection
        counts as answering only then: a port that accepts and never answers must lose the race."""
        conn = _Connection.open(endpoint, self._config, min(self._config.dial_timeout, self._left()))
        try:
            token = self._authenticate(conn) if self._config.username else None
            early = None
            if read is not None and token is None:
                early = conn.post(read[0], read[1], None, self._timeout())
            elif read is None and token is None and len(self._endpoints) > 1:
                status, data = conn.post("/v3/maintenance/status", b"{}", None, self._timeout())
                if status != 200:
                    raise ConnectionError(_explain(status, _message(data)))
        except BaseException:
            conn.close()
            raise
        return conn, token, early

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        return left

    def _rotate(self, failed: Endpoint) -> None:
        # The next connection starts with the endpoints that have not just failed.
        if failed in self._endpoints:
            self._endpoints.remove(failed)
            self._endpoints.append(failed)

    def _authenticate(self, conn: _Connection) -> str:
        body = json.dumps({"name": self._config.username, "password": self._config.password}).encode()
        status, data = conn.post("/v3/auth/authenticate", body, None, self._timeout())
        if status != 200:
            message = _message(data)
            if "authentication is not enabled" in message:
                raise PluginError(
                    f"etcd {conn.endpoint.url}: authentication is not enabled on this cluster: "
                    "remove etcd.auth from the config"
                )
            # Never echo the reply: it is about the credentials.
            raise PluginError(f"etcd authentication failed for user {self._config.username!r} at {conn.endpoint.url}")
        token = json.loads(data or b"{}").get("token")
        if not isinstance(token, str) or not token:
            raise PluginError(f"etcd authentication at {conn.endpoint.url} returned no token")
        return token


# How long the first endpoint has to answer before the next one is tried as well (happy eyeballs):
# a silent member costs a call this much, not dial_timeout + request_timeout.
STAGGER = 0.25
_READS = ("/v3/kv/range",)


class _Race:
    """Connect to several endpoints in staggered parallel: the first to answer wins.

    Endpoint i starts when every earlier attempt has failed or STAGGER after the previous start,
    whichever is first; all within the call's deadline. Losers are closed when they finish; a loser
    still waiting when the call ends is a daemon thread and never delays the exit."""

    def __init__(self, kv: GatewayKV, endpoints: list[Endpoint], read: tuple[str, bytes] | None) -> None:
        import threading  # only a first connection with several endpoints pays for it

        self._kv, self._endpoints, self._read = kv, endpoints, read
        self._threading = threading
        self._cond = threading.Condition()
        self._winner: tuple[_Connection, str | None, tuple[int, bytes] | None] | None = None
        self._error: PluginError | None = None
        self._finished = 0
        self.failures: list[str] = []

    def run(self) -> tuple[_Connection, str | None, tuple[int, bytes] | None] | None:
        started = 0
        next_start = time.monotonic()
        with self._cond:
            while True:
                if self._error is not None:
                    raise self._error
                if self._winner is not None:
                    return self._winner
                now = time.monotonic()
                left = self._kv._deadline - now
                if left <= 0 or (started == len(self._endpoints) and self._finished == started):
                    # Attempts still waiting are named too; when they end they close their connections.
                    failed = {f.partition(": ")[0] for f in self.failures}
                    self.failures += [f"{e.url}: timed out" for e in self._endpoints[:started] if e.url not in failed]
                    self._error = _CLOSED
                    return None
                if started < len(self._endpoints) and (now >= next_start or self._finished == started):
                    endpoint = self._endpoints[started]
                    started += 1
                    next_start = now + STAGGER
                    self._threading.Thread(target=self._attempt, args=(endpoint,), daemon=True).start()
                    continue
                wait = left if started == len(self._endpoints) else min(left, next_start - now)
                self._cond.wait(wait)

    def _attempt(self, endpoint: Endpoint) -> None:
        try:
            found = self._kv._greet(endpoint, self._read)
        except (OSError, StoreUnavailable) as exc:  # StoreUnavailable: the call's deadline passed
            why = self._kv._why(exc) if isinstance(exc, OSError) else "timed out"
            with self._cond:
                self.failures.append(f"{endpoint.url}: {why}")
                self._finished += 1
                self._cond.notify()
            return
        except PluginError as exc:  # an answer that settles the call (bad credentials, a TLS file)
            with self._cond:
                if self._error is None and self._winner is None:
                    self._error = exc
                self._finished += 1
                self._cond.notify()
            return
        with self._cond:
            self._finished += 1
            if self._winner is None and self._error is None:
                self._winner = found
                self._cond.notify()
                return
        found[0].close()


_CLOSED = PluginError("the race is over")


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
    raise StoreUnavailable(f"etcd {url}{path}: {_explain(status, _message(data))}")


def _explain(status: int, message: str) -> str:
    """An error answer in etcd's words, and what to change when the config is the cause."""
    message = message.strip()
    if status == 404 and "page not found" in message:
        return (
            f"HTTP 404: {message}: this member's v3 JSON gateway is off (--enable-grpc-gateway=false); "
            "set etcd.transport: grpc to reach it over gRPC"
        )
    if "HTTP request to an HTTPS server" in message:
        return f"HTTP {status}: this member serves TLS: use https:// in etcd.machines"
    if "user name is empty" in message:
        return (
            f"HTTP {status}: {message}: authentication is enabled on this cluster: "
            "set etcd.auth.username and etcd.auth.password"
        )
    return f"HTTP {status}: {message}"


def _summary(failures: list[str]) -> str:
    """The failures once each, in order: a retried endpoint is named once, not once per try."""
    return "; ".join(dict.fromkeys(failures))


def _reason(exc: OSError, client_certificate: bool = False) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    alert = _tls_alert(getattr(exc, "reason", None), client_certificate)  # ssl.SSLError: what the peer said
    return alert or exc.strerror or str(exc) or type(exc).__name__


def _tls_alert(reason: object, client_certificate: bool) -> str | None:
    if not isinstance(reason, str):
        return None
    if not client_certificate and reason in ("SSLV3_ALERT_BAD_CERTIFICATE", "TLSV13_ALERT_CERTIFICATE_REQUIRED"):
        # etcd answers "bad certificate" when none was sent, too.
        return _TLS_ALERTS["TLSV13_ALERT_CERTIFICATE_REQUIRED"]
    return _TLS_ALERTS.get(reason)


# TLS failures after the handshake (TLS 1.3 reports a refused client certificate on the first read).
_TLS_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "TLS: this member requires a client certificate: set etcd.cert and etcd.key",
    "SSLV3_ALERT_BAD_CERTIFICATE": "TLS: this member refused the client certificate in etcd.cert",
    "TLSV1_ALERT_UNKNOWN_CA": "TLS: this member does not trust the CA that signed etcd.cert",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "TLS: this member says the client certificate in etcd.cert has expired",
    "WRONG_VERSION_NUMBER": "TLS: this member does not serve TLS: use http:// in etcd.machines",
}


def backoff(attempt: int) -> None:
    """Sleep a jittered, growing pause before retrying a lost guarded write."""
    import random  # only a lost race pays for it

    time.sleep(random.uniform(0, min(0.1, 0.005 * (2**attempt))))  # jitter, not crypto


class _Connection:
    """One kept-alive HTTP/1.1 connection: enough of the protocol for the gateway's JSON replies."""

    def __init__(self, endpoint: Endpoint, sock: socket.socket) -> None:
        self.endpoint = endpoint
        self.sent = False
        self.answered = False
        self._sock = sock
        self._buf = b""

    @classmethod
    def open(cls, endpoint: Endpoint, config: EtcdConfig, timeout: float) -> _Connection:
        # An ASCII host name goes down as bytes: a str makes the socket module import the idna codec.
        host: str | bytes = endpoint.host.encode("ascii") if endpoint.host.isascii() else endpoint.host
        sock = socket.create_connection((host, endpoint.port), timeout=timeout)  # type: ignore[arg-type]
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if endpoint.tls:
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
            if not self.answered and not self.endpoint.tls and _serves_tls(self.endpoint):
                # A TLS member drops plain HTTP without a word: say so rather than "closed".
                raise ConnectionError("this member serves TLS: use https:// in etcd.machines")
            raise ConnectionError("etcd closed the connection")
        self.answered = True
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


def _wrap_tls(sock: socket.socket, endpoint: Endpoint, config: EtcdConfig) -> socket.socket:
    import ssl  # only TLS clusters pay for ssl

    _check_files(config)
    try:
        # No etcd.ca: the system trust store, as for any https:// URL.
        context = ssl.create_default_context(cafile=config.ca or None)
    except (OSError, ssl.SSLError) as exc:
        sock.close()
        raise PluginError(f"config: etcd.ca: cannot load {config.ca}: {_ssl_reason(exc)}") from None
    if config.client_certificate:
        try:
            context.load_cert_chain(config.cert, config.key)
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise PluginError(
                f"config: etcd.cert/etcd.key: cannot load the client certificate {config.cert} "
                f"with key {config.key}: {_ssl_reason(exc)}"
            ) from None
    try:
        return context.wrap_socket(sock, server_hostname=endpoint.host)
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        raise ConnectionError(_verify_failure(exc, endpoint, config)) from None
    except ssl.SSLError as exc:
        sock.close()
        alert = _tls_alert(exc.reason, config.client_certificate)
        if alert is None and _speaks_plain_http(endpoint):  # etcd drops a TLS hello on a plain port
            alert = _TLS_ALERTS["WRONG_VERSION_NUMBER"]
        raise ConnectionError(alert or f"TLS handshake failed: {_ssl_reason(exc)}") from None
    except OSError:
        sock.close()
        if _speaks_plain_http(endpoint):
            raise ConnectionError(_TLS_ALERTS["WRONG_VERSION_NUMBER"]) from None
        raise


# Only on the error paths below: which protocol a member that hung up on us does speak.
_PROBE_TIMEOUT = 1.0


def _serves_tls(endpoint: Endpoint) -> bool:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a probe of the protocol only; nothing is sent over it
    try:
        with socket.create_connection((endpoint.host, endpoint.port), timeout=_PROBE_TIMEOUT) as sock:
            context.wrap_socket(sock).close()
        return True
    except ssl.SSLError as exc:
        return "ALERT" in (exc.reason or "")  # it spoke TLS, and wanted a client certificate
    except OSError:
        return False


def _speaks_plain_http(endpoint: Endpoint) -> bool:
    try:
        with socket.create_connection((endpoint.host, endpoint.port), timeout=_PROBE_TIMEOUT) as sock:
            sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except OSError:
        return False


def _check_files(config: EtcdConfig) -> None:
    """A missing or unreadable TLS file, named by its key: checked when TLS is first needed, so the
    docs' example paths still load and calls that never reach etcd do not pay three stat calls."""
    import os

    for name in ("ca", "cert", "key"):
        file = getattr(config, name)
        if file and not os.access(file, os.R_OK):
            reason = "no such file" if not os.path.exists(file) else "not readable by this user"
            raise PluginError(f"config: etcd.{name}: {file}: {reason}")


# OpenSSL's X509_V_ERR codes for "the issuer is not one we trust".
_UNTRUSTED = (2, 18, 19, 20, 21)


def _verify_failure(exc: Any, endpoint: Endpoint, config: EtcdConfig) -> str:
    code, message = getattr(exc, "verify_code", 0), getattr(exc, "verify_message", "") or str(exc)
    if code == 10:  # X509_V_ERR_CERT_HAS_EXPIRED
        return f"TLS: the server's certificate has expired ({message}): renew it on the etcd member"
    if code == 9:  # X509_V_ERR_CERT_NOT_YET_VALID
        return f"TLS: the server's certificate is not valid yet ({message}): check the clocks"
    if code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
        return (
            f"TLS: the server's certificate does not name host {endpoint.host!r} ({message}): "
            "use a host name or address the certificate lists in etcd.machines"
        )
    if code in _UNTRUSTED:
        trusted = f"the CA in etcd.ca ({config.ca})" if config.ca else "a CA in the system trust store (set etcd.ca)"
        return f"TLS: the server's certificate is not signed by {trusted} ({message})"
    return f"TLS: certificate verify failed: {message}"


def _ssl_reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        return reason.lower().replace("_", " ")
    return getattr(exc, "strerror", None) or str(exc)
