"""``KV`` over etcd's v3 JSON gateway: ``POST /v3/kv/*`` with JSON bodies, the default transport.

The gateway speaks HTTP/1.1 (connection.py), so the whole client is the C halves of the standard
library's socket, json and base64 (``_socket``, ``_json`` through jsonio, ``binascii``): their Python
wrappers import ``re``, ``enum`` and more, which would cost every call more than its etcd round trip; a
gRPC client's imports alone cost more than a whole call here (core spawns a process per call).
Deadlines, retries, endpoint order and the race are policy.py's, shared with the gRPC client.
"""

from __future__ import annotations

import binascii

from resource_extend import jsonio
from resource_extend.errors import AmbiguousWrite, PluginError, StoreUnavailable
from resource_extend.etcd.connection import Connection, reason
from resource_extend.etcd.kv import Entry, key_range, single
from resource_extend.etcd.policy import REQUEST_ATTEMPTS, Policy, Race, Unanswered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any

    from resource_extend.config import EtcdConfig
    from resource_extend.etcd.endpoints import Endpoint

    # A new connection, its auth token and, when it was sent while connecting, the answer to a read.
    Greeting = tuple[Connection, str | None, tuple[int, bytes] | None]


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


class GatewayKV:
    """``KV`` over ``POST /v3/kv/*`` on the first endpoint of ``machines`` that answers."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self._policy = Policy(config)
        self._conn: Connection | None = None
        self._token: str | None = None

    # -- KV ------------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        return single(key, _entries(self._call(_RANGE, {"key": _b64(key.encode())})))

    def scan(self, prefix: str, span: tuple[str, str] | None = None) -> list[Entry]:
        return _entries(self._call(_RANGE, _range_body(prefix, span)))

    def scans(self, prefix: str, spans: list[tuple[str, str]]) -> Generator[list[Entry], None, None]:
        # The first read goes the usual way (it may pick the endpoint and authenticate); the others then
        # go out together on its connection (HTTP/1.1 pipelining), so etcd encodes each next range while
        # the caller decodes the last one: 1000 storage records in four spans take ~18 ms to read and
        # decode instead of ~28. Any answer but a readable 200 ends the pipeline (the connection is
        # dropped), and what is left goes the usual way, with its retries and its errors.
        bodies = [_range_body(prefix, span) for span in spans]
        if not bodies:
            return
        first = self._call(_RANGE, bodies[0])
        revision = (first.get("header") or {}).get("revision")
        for body in bodies[1:]:
            body["revision"] = revision  # one consistent read, as a single range is
        conn, left = self._conn, 0
        if conn is not None and len(bodies) > 1:
            payloads = [(_RANGE, jsonio.compact(body).encode()) for body in bodies[1:]]
            try:
                conn.send(payloads, self._token, self._policy.request_timeout())
                left = len(payloads)
            except OSError:
                self.close()
        try:
            yield _entries(first)
            for body in bodies[1:]:
                reply = None
                if left and conn is not None:
                    left -= 1
                    reply = self._pipelined(conn)
                    if reply is None:
                        left = 0
                yield _entries(reply if reply is not None else self._call(_RANGE, body))
        finally:
            if left:  # a caller that stopped early: answers still due would be read as the next request's
                self.close()

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
        policy = self._policy
        policy.start()
        payload = jsonio.compact(body).encode()
        failures: list[str] = []
        for attempt in range(REQUEST_ATTEMPTS):
            if attempt and policy.left() <= 0:
                break
            # A read may race to several endpoints at once: its answer from the first to reply is used.
            conn, early = self._connection(failures, (path, payload) if path in _READS else None)
            try:
                status, data = (
                    early if early is not None else conn.post(path, payload, self._token, policy.request_timeout())
                )
                if status == 401 and self._config.username and self._token is not None:
                    self._token = None  # an expired token: authenticate again
                    self._token = self._authenticate(conn)
                    status, data = conn.post(path, payload, self._token, policy.request_timeout())
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
                # election, can answer.
                failures.append(f"{conn.endpoint.url}: HTTP {status}: {_message(data)}")
                self._give_up_on(conn)
                policy.pause(attempt)
                continue
            return _reply(conn.endpoint.url, path, status, data)
        raise StoreUnavailable(f"etcd unavailable: {_summary(failures[-4:])}")

    def _pipelined(self, conn: Connection) -> dict[str, Any] | None:
        """The next pipelined answer, or None (the connection closed) when it is not a readable 200."""
        try:
            conn.settimeout(self._policy.request_timeout())
            status, data = conn.receive()
            doc = jsonio.loads(data) if status == 200 else None
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict):
            return doc
        if conn is self._conn:
            self.close()
        return None

    def _why(self, exc: OSError) -> str:
        return reason(exc, self._config.client_certificate)

    def _give_up_on(self, conn: Connection) -> None:
        self.close()
        self._policy.rotate(conn.endpoint)

    def _connection(
        self, failures: list[str], read: tuple[str, bytes] | None
    ) -> tuple[Connection, tuple[int, bytes] | None]:
        """The kept connection, or a new one to the first endpoint that answers, and that endpoint's
        answer to ``read`` when it was sent while connecting."""
        if self._conn is not None:
            return self._conn, None
        endpoints = self._policy.endpoints
        if len(endpoints) == 1:
            endpoint = endpoints[0]
            try:
                conn, token, _ = self._greet(endpoint, None)
            except OSError as exc:
                failures.append(f"{endpoint.url}: {self._why(exc)}")
                raise StoreUnavailable(f"etcd unavailable: {_summary(failures)}") from None
            self._conn, self._token = conn, token
            return conn, None
        race = Race(self._policy, list(endpoints), lambda endpoint: self._contact(endpoint, read), _release)
        found = race.run()
        failures.extend(race.failures)
        if found is None:
            tried = self._policy.tried()
            raise StoreUnavailable(f"etcd unavailable (tried {tried}): {_summary(failures) or 'timed out'}")
        conn, token, early = found
        self._conn, self._token = conn, token
        return conn, early

    def _contact(self, endpoint: Endpoint, read: tuple[str, bytes] | None) -> Greeting:
        """``_greet`` as one of the race's attempts."""
        try:
            return self._greet(endpoint, read)
        except OSError as exc:
            raise Unanswered(self._why(exc)) from None

    def _greet(self, endpoint: Endpoint, read: tuple[str, bytes] | None) -> Greeting:
        """Connect to ``endpoint`` and get its first answer: the auth token when a user is configured,
        else ``read``'s reply, else (several endpoints racing) a status request's. The connection
        counts as answering only then: a port that accepts and never answers must lose the race."""
        policy = self._policy
        conn = Connection.open(endpoint, self._config, policy.dial_timeout())
        try:
            token = self._authenticate(conn) if self._config.username else None
            early = None
            if read is not None and token is None:
                early = conn.post(read[0], read[1], None, policy.request_timeout())
            elif read is None and token is None and len(policy.endpoints) > 1:
                status, data = conn.post("/v3/maintenance/status", b"{}", None, policy.request_timeout())
                if status != 200:
                    raise ConnectionError(_explain(status, _message(data)))
        except BaseException:
            conn.close()
            raise
        return conn, token, early

    def _authenticate(self, conn: Connection) -> str:
        body = jsonio.compact({"name": self._config.username, "password": self._config.password}).encode()
        status, data = conn.post("/v3/auth/authenticate", body, None, self._policy.request_timeout())
        if status != 200:
            message = _message(data)
            if "authentication is not enabled" in message:
                raise PluginError(
                    f"etcd {conn.endpoint.url}: authentication is not enabled on this cluster: "
                    "remove etcd.auth from the config"
                )
            # Never echo the reply: it is about the credentials.
            raise PluginError(f"etcd authentication failed for user {self._config.username!r} at {conn.endpoint.url}")
        token = jsonio.loads(data or b"{}").get("token")
        if not isinstance(token, str) or not token:
            raise PluginError(f"etcd authentication at {conn.endpoint.url} returned no token")
        return token


_RANGE = "/v3/kv/range"
_READS = (_RANGE,)


def _range_body(prefix: str, span: tuple[str, str] | None) -> dict[str, Any]:
    key, end = key_range(prefix, span)
    return {"key": _b64(key), "range_end": _b64(end)}


def _release(found: Greeting) -> None:
    found[0].close()


def _entries(reply: dict[str, Any]) -> list[Entry]:
    return [
        Entry(
            key=binascii.a2b_base64(kv["key"]).decode("utf-8", errors="replace"),
            value=binascii.a2b_base64(kv.get("value", "")),
            mod_revision=int(kv.get("mod_revision", 0)),
        )
        for kv in reply.get("kvs") or ()
    ]


_TRANSIENT = ("leader changed", "no leader", "request timed out", "too many requests", "not capable")


def _transient(status: int, data: bytes) -> bool:
    if status in (502, 503, 504):
        return True
    return status >= 500 and any(text in _message(data) for text in _TRANSIENT)


def _message(data: bytes) -> str:
    try:
        doc = jsonio.loads(data or b"{}")
    except ValueError:
        doc = None
    message = (doc.get("message") or doc.get("error")) if isinstance(doc, dict) else None
    return message if isinstance(message, str) else data[:200].decode("utf-8", errors="replace")


def _reply(url: str, path: str, status: int, data: bytes) -> dict[str, Any]:
    try:
        doc = jsonio.loads(data or b"{}")
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
