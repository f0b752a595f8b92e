"""``KV`` over etcd's v3 JSON gateway: ``POST /v3/kv/*`` with JSON bodies, the default transport.

The gateway speaks HTTP/1.1 (connection.py), so the whole client is the C halves of the standard
library's socket and json (``_socket``, ``_json`` through jsonio) and base64text.py, which codes a
single-node call's few short base64 strings without ``binascii`` and hands bulk reads to it: the Python
wrappers import ``re``, ``enum`` and more, which would cost every call more than its etcd round trip; a
gRPC client's imports alone cost more than a whole call here (core spawns a process per call).
Deadlines, retries, endpoint order and the race are policy.py's, shared with the gRPC client.
"""

from __future__ import annotations

from resource_extend import jsonio
from resource_extend.errors import AmbiguousWrite, PluginError, StoreUnavailable
from resource_extend.etcd import base64text
from resource_extend.etcd.connection import BadReply, Connection, reason
from resource_extend.etcd.kv import CHUNK_KEYS, FEW_KEYS, Entry, dense, prefix_end, raw, single, span
from resource_extend.etcd.policy import REQUEST_ATTEMPTS, Policy, Race, Unanswered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any, Callable, TypeVar

    from resource_extend.config import EtcdConfig
    from resource_extend.etcd.endpoints import Endpoint

    # A new connection, its auth token and, when it was sent while connecting, the answer to a read.
    Greeting = tuple[Connection, str | None, tuple[int, bytes] | None]
    T = TypeVar("T")
    Encoder = Callable[[bytes], str]
    Decoder = Callable[[str], bytes]


class GatewayKV:
    """``KV`` over ``POST /v3/kv/*`` on the first endpoint of ``machines`` that answers."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self._policy = Policy(config)
        self._conn: Connection | None = None
        self._token: str | None = None

    # -- KV ------------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        return self._call(_RANGE, {"key": base64text.encode(key.encode())}, _single(key), read=True)

    def scan(self, prefix: str) -> list[Entry]:
        raw = prefix.encode()
        _, decode = base64text.for_many()  # a whole directory
        body = {"key": base64text.encode(raw), "range_end": base64text.encode(prefix_end(raw))}
        return self._call(_RANGE, body, lambda doc: _entries(doc, decode), read=True)

    def reads(self, chunks: list[list[str]]) -> Generator[list[Entry | None], None, None]:
        # kv.dense's plan. The counting goes the usual way (it may pick the endpoint and authenticate, and
        # it fixes the revision); the reads then go out together on its connection (HTTP/1.1 pipelining),
        # so etcd answers the next while the caller decodes the last: 1000 storage records take ~18 ms
        # to read and decode instead of ~28. Any answer but a readable 200 ends the pipeline (the
        # connection is dropped), and what is left goes the usual way, with its retries and its errors.
        if not chunks:
            return
        if len(chunks) == 1 and len(chunks[0]) <= FEW_KEYS:
            few = chunks[0]
            yield self._call(_TXN, _point_reads(few, 0, base64text.encode), _aligned(few, base64text.decode), read=True)
            return
        # More than a few keys (often hundreds) and their records: binascii pays for its import.
        encode, decode = base64text.for_many()
        revision, counts = 0, []
        for at in range(0, len(chunks), CHUNK_KEYS):  # one counting transaction up to 16384 keys
            counting = _counting(chunks[at : at + CHUNK_KEYS], revision, encode)
            revision, counted = self._call(_TXN, counting, _counts(len(counting["success"])), read=True)
            counts += counted
        reads = [
            (_RANGE, _span_read(keys, revision, encode), _from_span(keys, decode))
            if dense(count, len(keys))
            else (_TXN, _point_reads(keys, revision, encode), _aligned(keys, decode))
            for keys, count in zip(chunks, counts)
        ]
        conn, left = self._conn, 0
        if conn is not None:
            payloads = [(path, jsonio.compact(body).encode()) for path, body, _ in reads]
            try:
                conn.send(payloads, self._token, self._policy.request_timeout())
                left = len(payloads)
            except OSError:
                self.close()
        try:
            for path, body, parse in reads:
                found = None
                if left and conn is not None:
                    left -= 1
                    found = self._pipelined(conn, parse)
                    if found is None:
                        left = 0
                yield found if found is not None else self._call(path, body, parse, read=True)
        finally:
            if left:  # a caller that stopped early: answers still due would be read as the next request's
                self.close()

    def put(self, key: str, value: bytes) -> None:
        self._call("/v3/kv/put", {"key": base64text.encode(key.encode()), "value": base64text.encode(value)}, _answered)

    def put_if(self, key: str, value: bytes, mod_revision: int) -> bool:
        k = base64text.encode(key.encode())
        return self._call(
            _TXN,
            {
                "compare": [{"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}],
                "success": [{"request_put": {"key": k, "value": base64text.encode(value)}}],
            },
            _succeeded,
            resend=False,
        )

    def delete(self, key: str) -> None:
        self._call("/v3/kv/deleterange", {"key": base64text.encode(key.encode())}, _answered)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transport ----------------------------------------------------------------------------------

    def _call(
        self, path: str, body: dict[str, Any], parse: Callable[[Any], T], read: bool = False, resend: bool = True
    ) -> T:
        """POST to the first endpoint that answers, and ``parse`` its answer's JSON. ``read``: the request
        may race to several endpoints while connecting. ``resend=False`` (a guarded write): once etcd may
        have the request, any answer but a clean one (lost, transient, cut short, garbled, not the JSON
        ``parse`` takes) is an ``AmbiguousWrite``, never a second send: the store reads the key back."""
        policy = self._policy
        policy.start()
        payload = jsonio.compact(body).encode()
        failures: list[str] = []
        for attempt in range(REQUEST_ATTEMPTS):
            if attempt and policy.left() <= 0:
                break
            # A read may race to several endpoints at once: its answer from the first to reply is used.
            conn, early = self._connection(failures, (path, payload) if read else None)
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
                    self._ambiguous(conn, path, f"no answer: {self._why(exc)}")
                continue
            transient = _transient(status, data)
            if not resend and (transient or (status != 200 and not _clean_error(data))):
                self._ambiguous(conn, path, f"HTTP {status}: {_message(data)}")
            if transient:
                # A member that lost its leader or quorum: another member, or this one after the
                # election, can answer.
                failures.append(f"{conn.endpoint.url}: HTTP {status}: {_message(data)}")
                self._give_up_on(conn)
                policy.pause(attempt)
                continue
            if status != 200:
                raise StoreUnavailable(f"etcd {conn.endpoint.url}{path}: {_explain(status, _message(data))}")
            try:
                return parse(_document(data))
            except _BAD_REPLY as exc:
                why = f"bad reply: {_unreadable(exc, data)}"
            # A 200 whose body is not the answer asked for: cut short or garbled on the way.
            failures.append(f"{conn.endpoint.url}: {why}")
            self._give_up_on(conn)
            if not resend:
                self._ambiguous(conn, path, why)
        raise StoreUnavailable(f"etcd unavailable: {_summary(failures[-4:])}")

    def _ambiguous(self, conn: Connection, path: str, why: str) -> None:
        """Report a guarded write that etcd may have applied; the store reads the key back, and has a
        little time for it past the deadline (policy.py's grace)."""
        self._policy.grace()
        raise AmbiguousWrite(f"etcd {conn.endpoint.url}{path}: {why}")

    def _pipelined(self, conn: Connection, parse: Callable[[Any], T]) -> T | None:
        """The next pipelined answer, or None (the connection closed) when it is not a readable 200."""
        try:
            conn.settimeout(self._policy.request_timeout())
            status, data = conn.receive()
            if status == 200:
                return parse(_document(data))
        except (OSError, *_BAD_REPLY):
            pass
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
        if self._conn is not None and not self._conn.closed:
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
        try:
            token = _document(data).get("token")
        except _BAD_REPLY as exc:
            raise BadReply(f"bad reply: {_unreadable(exc, data)}") from None
        if not isinstance(token, str) or not token:
            raise PluginError(f"etcd authentication at {conn.endpoint.url} returned no token")
        return token


_RANGE = "/v3/kv/range"
_TXN = "/v3/kv/txn"

# What parsing an answer's JSON can raise when the bytes are not what etcd sends: a JSON or base64 error
# (ValueError), a missing or mistyped field; RecursionError: nesting deeper than the interpreter's stack.
# (jsonio.loads never lets the C scanner's SystemError of 3.10/3.11 out: it falls back to the json package.)
_BAD_REPLY = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def _document(data: bytes) -> dict[str, Any]:
    """An answer's JSON object, which always carries etcd's header; else a ValueError."""
    doc = jsonio.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("header"), dict):
        raise ValueError("not an etcd answer")
    return doc


def _unreadable(exc: BaseException, data: bytes) -> str:
    """A bad answer in a few words: its size and what was wrong, never more than a few bytes of it."""
    # jsonio.reason: a JSON error in the same words on every interpreter (3.13 words a trailing comma apart).
    what = (jsonio.reason(exc) if isinstance(exc, ValueError) else str(exc))[:80] or type(exc).__name__
    return f"{len(data)} bytes, {what}"


def _pin(revision: int) -> dict[str, str]:
    return {"revision": str(revision)} if revision else {}


def _counting(chunks: list[list[str]], revision: int, encode: Encoder) -> dict[str, Any]:
    """A read-only transaction counting the keys in each chunk's span (no compare: the success branch runs)."""
    ops = []
    for keys in chunks:
        key, end = span(keys)
        ops.append(
            {"request_range": {"key": encode(key), "range_end": encode(end), "count_only": True, **_pin(revision)}}
        )
    return {"success": ops}


def _counts(asked: int) -> Callable[[Any], tuple[int, list[int]]]:
    """The parser of a counting transaction's answer: the revision it counted at, and each span's count."""

    def parse(doc: Any) -> tuple[int, list[int]]:
        responses = doc.get("responses") or []
        if not isinstance(responses, list) or len(responses) != asked:
            raise ValueError(f"{asked} counts asked, {len(responses)} answered")
        return int(doc["header"]["revision"]), [int(r["response_range"].get("count", 0)) for r in responses]

    return parse


def _span_read(keys: list[str], revision: int, encode: Encoder) -> dict[str, Any]:
    key, end = span(keys)
    return {"key": encode(key), "range_end": encode(end), **_pin(revision)}


def _from_span(keys: list[str], decode: Decoder) -> Callable[[Any], list[Entry | None]]:
    """The parser of a span's answer: the entry of each of ``keys`` or None, in their order. Matched by
    the keys' bytes: a key between them that is not UTF-8 reads as U+FFFD, and must not pass for a wanted
    key that holds one."""

    def parse(doc: Any) -> list[Entry | None]:
        found = {}
        for kv in doc.get("kvs") or ():
            key = decode(kv["key"])
            found[key] = Entry(key.decode("utf-8", errors="replace"), *_value(kv, decode))
        return [found.get(raw(key)) for key in keys]

    return parse


def _point_reads(keys: list[str], revision: int, encode: Encoder) -> dict[str, Any]:
    """A read-only transaction of one point range per key (no compare: the success branch runs)."""
    return {"success": [{"request_range": {"key": encode(raw(key)), **_pin(revision)}} for key in keys]}


def _aligned(keys: list[str], decode: Decoder) -> Callable[[Any], list[Entry | None]]:
    """The parser of a point-read transaction's answer: each key's entry or None, in the keys' order."""

    def parse(doc: Any) -> list[Entry | None]:
        responses = doc.get("responses") or []
        if not isinstance(responses, list) or len(responses) != len(keys):
            raise ValueError(f"{len(keys)} ranges asked, {len(responses)} answered")
        return [single(key, _entries(response["response_range"], decode)) for key, response in zip(keys, responses)]

    return parse


def _single(key: str) -> Callable[[Any], Entry | None]:
    return lambda doc: single(key, _entries(doc, base64text.decode))


def _answered(doc: Any) -> None:
    """A plain put's or delete's answer: etcd's header is all there is to check."""


def _succeeded(doc: Any) -> bool:
    """Whether a guarded write's compare held. etcd leaves ``succeeded`` out when it is false; when true
    the answer carries the put's response, so an answer cut to its header does not read as success."""
    succeeded = doc.get("succeeded", False)
    if succeeded is not True and succeeded is not False:
        raise ValueError(f"succeeded is {succeeded!r}")
    if succeeded and not (isinstance(doc.get("responses"), list) and len(doc["responses"]) == 1):
        raise ValueError("a successful write without its response")
    return succeeded


def _clean_error(data: bytes) -> bool:
    """Whether an error answer is etcd's own (grpc-gateway's ``{"code": …, "message": …}``): a refusal of
    the request, not bytes mangled on the way."""
    try:
        doc = jsonio.loads(data)
    except _BAD_REPLY:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("code"), int) and isinstance(doc.get("message"), str)


def _release(found: Greeting) -> None:
    found[0].close()


def _entries(reply: dict[str, Any], decode: Decoder) -> list[Entry]:
    return [
        Entry(decode(kv["key"]).decode("utf-8", errors="replace"), *_value(kv, decode)) for kv in reply.get("kvs") or ()
    ]


def _value(kv: dict[str, Any], decode: Decoder) -> tuple[bytes, int]:
    return decode(kv.get("value", "")), int(kv.get("mod_revision", 0))


_TRANSIENT = ("leader changed", "no leader", "request timed out", "too many requests", "not capable")


def _transient(status: int, data: bytes) -> bool:
    if status in (502, 503, 504):
        return True
    return status >= 500 and any(text in _message(data) for text in _TRANSIENT)


def _message(data: bytes) -> str:
    try:
        doc = jsonio.loads(data or b"{}")
    except _BAD_REPLY:
        doc = None
    message = (doc.get("message") or doc.get("error")) if isinstance(doc, dict) else None
    return message if isinstance(message, str) else data[:200].decode("utf-8", errors="replace")


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
