"""``KV`` over etcd's v3 JSON gateway: ``POST /v3/kv/*`` with JSON bodies, the default transport.

The gateway speaks HTTP/1.1 (connection.py), so the whole client is the C halves of the standard
library's socket and json (``_socket``, ``_json`` through jsonio) and base64text.py, which codes a
single-node call's few short base64 strings without ``binascii`` and hands bulk reads to it: the Python
wrappers import ``re``, ``enum`` and more, which would cost every call more than its etcd round trip; a
gRPC client's imports alone cost more than a whole call here (core spawns a process per call).
Deadlines, retries and endpoint order are policy.py's, shared with the gRPC client.

This module holds what a successful single-key call runs, which every store call unmarshals; the rest
is imported where it starts: reads of many keys and scans (gatewaybulk.py), auth and several endpoints
(greeting.py), and whatever follows a failure (failing.py: retries, error wording, ambiguous writes).

``GatewayKV`` alone owns its state: the kept connection, its auth token, the prefetched request and the
revision seen. Those modules are functions of what it passes them (the policy, the config, a connection,
the token, its request as a callable) and return what it then keeps; none of them imports this module,
so the arrows point one way (pyproject.toml's layers contract).
"""

from __future__ import annotations

import _socket

from resource_extend import errors
from resource_extend.formats import jsonio
from resource_extend.store.etcd import base64text
from resource_extend.store.etcd.connection import Connection
from resource_extend.store.etcd.kv import Entry, Snapshot, single
from resource_extend.store.etcd.messages import BAD_REPLY, RANGE, TXN, document, entries, int64
from resource_extend.store.etcd.policy import REQUEST_ATTEMPTS, Policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any, Callable, TypeVar

    from resource_extend.config import EtcdConfig

    T = TypeVar("T")


class GatewayKV:
    """``KV`` over ``POST /v3/kv/*`` on the first endpoint of ``machines`` that answers."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self._policy = Policy(config)
        self._conn: Connection | None = None
        self._token: str | None = None
        # prefetch's read, sent on _conn and not answered yet; or why its connection failed, which the first
        # request then fails with rather than dialling again.
        self._pending: tuple[str, bytes] | None = None
        self._unreachable: OSError | None = None
        # The newest revision a read of this call saw: etcd's revision never goes back, so an answer to a
        # later write that is older is not etcd's (a lying member or proxy), whatever it says.
        self._seen = 0

    # -- KV ------------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        entry, revision = self._call(RANGE, {"key": base64text.encode(key.encode())}, _single(key), read=True)
        self._seen = max(self._seen, revision)
        return entry

    def prefetch(self, key: str) -> None:
        self._prefetch(RANGE, lambda: {"key": base64text.encode(key.encode())})

    def prefetch_reads(self, chunks: list[list[str]]) -> None:
        from resource_extend.store.etcd import gatewaybulk

        self._prefetch(TXN, lambda: gatewaybulk.first_request(chunks))

    def _prefetch(self, path: str, body: Callable[[], dict[str, Any]]) -> None:
        """Send ``body`` to ``path`` on a new connection and keep it pending: the next request on it that is
        the same (path and bytes) takes its answer; any other closes the connection first (``_call``)."""
        # The plain case only (one endpoint, no auth): the others connect through greeting.py's race.
        if self._conn is not None or self._unreachable is not None:
            return
        if len(self._policy.endpoints) != 1 or self._config.username:
            return
        conn = None
        try:
            payload = jsonio.compact(body()).encode()
            self._policy.start()
            try:
                # A dial that takes longer is left to the verb (which may yet refuse its request unread):
                # past PREFETCH_DIAL the prefetch gives up, so a member that drops the connection attempt
                # costs a call that fails on its request that much, not the dial timeout.
                dial = min(PREFETCH_DIAL, self._policy.dial_timeout())
                conn = Connection.open(self._policy.endpoints[0], self._config, dial)
            except (TimeoutError, _socket.timeout):  # 3.9's socket.timeout is no TimeoutError
                return
            except OSError as exc:
                self._unreachable = exc  # refused: the verb's request fails with it, not after a second dial
                return
            conn.send([(path, payload)], None, self._policy.request_timeout())
        except BaseException as exc:  # not sent: the verb's read goes the usual way, with its own errors
            if conn is not None:
                conn.close()
            if not isinstance(exc, Exception):
                raise
            return
        self._conn, self._token, self._pending = conn, None, (path, payload)

    def scan(self, prefix: str) -> list[Entry]:
        from resource_extend.store.etcd import gatewaybulk

        return gatewaybulk.scan(self._call, self._kept, self._policy, prefix)

    def reads(self, chunks: list[list[str]]) -> Generator[list[Entry | None], None, None]:
        from resource_extend.store.etcd import gatewaybulk

        return gatewaybulk.reads(self._call, self._kept, self.close, self._policy, chunks)

    def put(self, key: str, value: bytes) -> None:
        self._call("/v3/kv/put", {"key": base64text.encode(key.encode()), "value": base64text.encode(value)}, _answered)

    def put_if(
        self,
        key: str,
        value: bytes | None,
        mod_revision: int,
        token_key: str,
        token: bytes,
        token_revision: int | None = None,
    ) -> Snapshot | None:
        k, t = base64text.encode(key.encode()), base64text.encode(token_key.encode())
        compare = [{"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}]
        if token_revision is not None:
            compare.append({"key": t, "target": "MOD", "result": "EQUAL", "mod_revision": str(token_revision)})
        record: dict[str, Any] = (
            {"request_put": {"key": k, "value": base64text.encode(value)}}
            if value is not None
            else {"request_delete_range": {"key": k}}  # a guarded delete: the token stays, as its tombstone
        )
        return self._call(
            TXN,
            {
                "compare": compare,
                "success": [record, {"request_put": {"key": t, "value": base64text.encode(token)}}],
                # A failed compare answers with what it found, so the store can tell whose change won
                # without reading again.
                "failure": [{"request_range": {"key": k}}, {"request_range": {"key": t}}],
            },
            _written(self._seen, "response_put" if value is not None else "response_delete_range"),
            resend=False,
        )

    def history(self, keys: list[str], revision: int) -> Snapshot:
        from resource_extend.store.etcd import settling  # only a write whose answer was not clean reads this

        request, answer = settling.history_request(keys, revision), settling.history_answer(len(keys), revision)
        found = self._call(TXN, request, answer, read=True)
        if not revision:  # a read of now: a later write's answer older than it is not etcd's (``_seen``)
            self._seen = max(self._seen, found.revision)
        return found

    def delete(self, keys: list[str]) -> None:
        ops = [{"request_delete_range": {"key": base64text.encode(key.encode())}} for key in keys]
        self._call(TXN, {"success": ops}, _answered)

    def close(self) -> None:
        pending, self._pending = self._pending, None
        if self._conn is not None:
            if pending is not None and pending[0] == TXN:
                self._settle(self._conn)
            self._conn.close()
            self._conn = None

    @staticmethod
    def _settle(conn: Connection) -> None:
        """Wait, at most SETTLE seconds, for the answer to a prefetched transaction nobody took (it is dropped).

        etcd 3.5.0 to 3.5.4 panic on a read-only transaction whose client goes away while they apply it
        (etcd-io/etcd#14110, fixed in 3.5.5): the member exits. A bulk verb's first read is such a
        transaction, sent before the request is checked; a refused request, or a verb that reads otherwise,
        would close the connection under it. A range (a single node's prefetch) is not affected."""
        conn.await_answer(SETTLE)  # etcd answers once it has applied it; a member this slow is left as it is

    # -- transport ----------------------------------------------------------------------------------

    def _kept(self) -> tuple[Connection, str | None] | None:
        """The kept connection (the last request's) and its auth token, for the bulk reads that follow up on it."""
        return (self._conn, self._token) if self._conn is not None else None

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
        pending = self._pending
        if pending is not None and pending != (path, payload):
            self.close()  # another request than the one prefetched: its answer would be read as this one's
            pending = None
        failures: list[str] = []
        for attempt in range(REQUEST_ATTEMPTS):
            if attempt and policy.left() <= 0:
                break
            # A read may race to several endpoints at once: its answer from the first to reply is used.
            conn, early = self._connection(failures, (path, payload) if read else None)
            try:
                if pending is not None and conn is self._conn:  # this read went out before the verb's code loaded
                    self._pending = pending = None
                    conn.settimeout(policy.request_timeout())  # from now: loading the code took some of it
                    early = conn.receive()
                status, data = (
                    early if early is not None else conn.post(path, payload, self._token, policy.request_timeout())
                )
                if status == 401 and self._config.username and self._token is not None:
                    from resource_extend.store.etcd import greeting

                    self._token = None  # an expired token: authenticate again
                    self._token = greeting.authenticate(policy, self._config, conn)
                    status, data = conn.post(path, payload, self._token, policy.request_timeout())
            except OSError as exc:
                from resource_extend.store.etcd import failing

                self.close()  # given up: the next attempt connects again, perhaps elsewhere
                # A guarded write that never left may go again; once sent, failing says it is ambiguous.
                failing.lost(policy, self._config, conn.endpoint, path, exc, failures, resend or not conn.sent)
                continue
            if status == 200:
                try:
                    return parse(document(data, unique=not resend))
                except BAD_REPLY as exc:
                    from resource_extend.store.etcd import failing

                    self.close()  # what else it carries cannot be trusted either
                    failing.garbled(policy, conn.endpoint, path, exc, data, failures, resend)
                    continue
            from resource_extend.store.etcd import failing, retry

            failing.refused(policy, conn.endpoint, path, (status, data), failures, resend)  # returns to retry
            self.close()
            retry.pause(policy, attempt)
        from resource_extend.store.etcd import retry

        raise errors.StoreUnavailable(f"etcd unavailable: {retry.unavailable(policy, failures)}")

    def _connection(
        self, failures: list[str], read: tuple[str, bytes] | None
    ) -> tuple[Connection, tuple[int, bytes] | None]:
        """The kept connection, or a new one to the first endpoint that answers, and that endpoint's
        answer to ``read`` when it was sent while connecting."""
        if self._conn is not None and not self._conn.closed:
            return self._conn, None
        endpoints = self._policy.endpoints
        if len(endpoints) != 1 or self._config.username:
            from resource_extend.store.etcd import greeting

            conn, token, early = greeting.connect(self._policy, self._config, failures, read)
            self._conn, self._token = conn, token
            return conn, early
        try:
            if self._unreachable is not None:  # prefetch's dial of this endpoint failed a moment ago
                failed, self._unreachable = self._unreachable, None
                raise failed
            conn = Connection.open(endpoints[0], self._config, self._policy.dial_timeout())
        except OSError as exc:
            from resource_extend.store.etcd import failing

            raise failing.unreachable(self._config, endpoints[0], exc, failures) from None
        self._conn, self._token = conn, None
        return conn, None


# How long prefetch waits for a connection (seconds): one round trip to a member is a fraction of this.
PREFETCH_DIAL = 0.1
# How long closing a connection waits for a prefetched transaction's answer (``GatewayKV._settle``): etcd
# answers the count of 1000 nodes' spans in ~2 ms.
SETTLE = 0.5


def _single(key: str) -> Callable[[Any], tuple[Entry | None, int]]:
    return lambda doc: (single(key, entries(doc, base64text.decode)), revision(doc))


def revision(doc: Any) -> int:
    """The store's revision when the answer was made (etcd's header; the gateway writes int64s as strings)."""
    return int64(doc["header"].get("revision", 0))


def _answered(doc: Any) -> None:
    """A plain put's or delete's answer: etcd's header is all there is to check."""


def _written(seen: int, done: str) -> Callable[[Any], Snapshot | None]:
    """A guarded write's answer: None when its compare held, else the failed compare's ``Snapshot``.

    etcd leaves ``succeeded`` out when it is false. Either way the answer carries one response per
    operation of the branch taken, so an answer cut to its header, or whose responses do not match the
    branch it claims (``done``: the response the record's operation answers with; the token's is a put), is a bad
    reply (ambiguous), not a failed compare. So is an answer older than revision
    ``seen``, which a read of this call saw: it is no answer of etcd's, and read as a failed compare it
    would have the store apply its change twice."""

    def parse(doc: Any) -> Snapshot | None:
        answered = revision(doc)
        if answered <= 0:
            raise ValueError("a write answered without its revision")
        if answered < seen:
            raise ValueError(f"a write answered at revision {answered}, older than the revision {seen} read before it")
        succeeded = doc.get("succeeded", False)
        responses = doc.get("responses")
        if succeeded is True:
            if responses.__class__ is not list or len(responses) != 2:
                raise ValueError("a successful write without its responses")
            for response, kind in zip(responses, (done, "response_put")):
                if response.__class__ is not dict or response.get(kind).__class__ is not dict:
                    raise ValueError("a successful write answered with other than its operations")
            return None
        if succeeded is not False:
            raise ValueError(f"succeeded is {succeeded!r}")
        from resource_extend.store.etcd import settling  # a lost race, or a lie: the store settles it

        return settling.found(doc, answered, 2)

    return parse
