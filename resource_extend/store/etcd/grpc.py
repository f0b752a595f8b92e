"""``KV`` over etcd's native gRPC API, for clusters that do not serve the v3 JSON gateway.

Selected with ``etcd.transport: grpc``; ``resource_extend.store.etcd.transport.open`` imports this module
only then: grpc and protobuf cost more to import than a whole gateway call, and core spawns a process per
call.

The request and reply messages and the KV/Auth stubs are the generated code of etcd-sdk-python
(``pyetcd.etcdrpc``, built against protobuf 5+). Its high-level client is not used: it has no deadline
per call, reports failures as exceptions without a message and parks a failed endpoint for minutes.
Auth and error texts are handled here instead, the way GatewayKV handles them, and endpoints, deadlines,
retries and the race by policy.py, retry.py and race.py, which both transports share.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, Callable

from resource_extend.config import EtcdConfig
from resource_extend.endpoints import Endpoint
from resource_extend.errors import AmbiguousWrite, HistoryCompacted, PluginError, StoreUnavailable
from resource_extend.store.etcd import retry
from resource_extend.store.etcd.chunks import CHUNK_KEYS, FEW_KEYS, dense, prefix_end, raw, span
from resource_extend.store.etcd.http1 import MAX_REPLY
from resource_extend.store.etcd.kv import COMPACTED, Entry, Snapshot, single
from resource_extend.store.etcd.policy import REQUEST_ATTEMPTS, Policy
from resource_extend.store.etcd.race import Race, Unanswered

# gRPC's C core logs to stderr, and core reads the plugin's combined output: keep it quiet unless the
# operator asks for its logs. This has to happen before grpc is imported.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

try:
    import grpc
    from pyetcd import etcdrpc
except Exception as exc:  # ImportError, or protobuf refusing the generated code
    raise PluginError(
        "config: etcd.transport: grpc needs the grpc extra, which this installation lacks "
        "(in a checkout: pip install '.[grpc]'; executables: make build-grpc): "
        f"{type(exc).__name__}: {exc}"
    ) from None

# Failures worth another endpoint or another try: the transport's (no connection, a lost request) and
# etcd's answers while a member has no leader or is overloaded (codes.Unavailable and ResourceExhausted
# in etcd's rpctypes, HTTP 503 and 429 on the gateway), which another member, or this one after the
# election, can answer.
_TRANSIENT_CODES = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
# gRPC's text when no connection could be made, so the request never reached etcd.
_NOT_CONNECTED = "failed to connect to all addresses"
# Transient failures that say the request was not applied; only after these is a guarded write sent again.
_NOT_APPLIED = (_NOT_CONNECTED, "etcdserver: no leader", "etcdserver: too many requests", "etcdserver: not capable")
# etcd's own refusals of a request (rpctypes: a failed check, a bad request, no permission): not applied.
_REFUSALS = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.UNIMPLEMENTED,
)
# "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:2379: Connection refused"
_CONNECT_DETAIL = re.compile(r"last error: [A-Z_]+: (?:ipv4|ipv6|unix|dns):\S+: (.+)$")


def _options(config: EtcdConfig) -> list[tuple[str, int]]:
    dial_ms = max(1, int(config.dial_timeout * 1000))
    return [
        # gRPC gives each connection attempt (TCP and the HTTP/2 handshake) max(min_reconnect_backoff,
        # current backoff): with both at dial_timeout, a port that accepts and never answers fails after
        # dial_timeout with a "failed to connect" status, as the gateway transport's dial does. Watching
        # the channel's state instead costs a polling thread that delays exit by 200 ms.
        ("grpc.min_reconnect_backoff_ms", dial_ms),
        ("grpc.initial_reconnect_backoff_ms", dial_ms),
        # etcd replies can exceed gRPC's 4 MiB default (a scan of many nodes), but not the bound every other
        # path holds a reply to (http1.py's): a member or proxy sending more fails the call, not the host.
        ("grpc.max_receive_message_length", MAX_REPLY),
        # The gateway transport connects directly; so does this one, whatever $http_proxy says.
        ("grpc.enable_http_proxy", 0),
    ]


class _Link:
    """One endpoint's channel, its stubs and its auth token. Channels connect on their first request."""

    def __init__(self, endpoint: Endpoint, channel: grpc.Channel) -> None:
        self.endpoint = endpoint
        self.channel = channel
        self.kv: Any = etcdrpc.KVStub(channel)
        self.auth: Any = etcdrpc.AuthStub(channel)
        self.maintenance: Any = etcdrpc.MaintenanceStub(channel)
        self.metadata: tuple[tuple[str, str], ...] = ()


class GrpcKV:
    """``KV`` over ``etcdserverpb.KV`` on the first endpoint of ``machines`` that answers."""

    def __init__(self, config: EtcdConfig) -> None:
        self._config = config
        self._policy = Policy(config)
        self._link: _Link | None = None
        self._credentials: grpc.ChannelCredentials | None = None
        # The newest revision a read of this call saw (GatewayKV._seen).
        self._seen = 0

    # -- KV ------------------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        reply = self._call("Range", etcdrpc.RangeRequest(key=key.encode()))
        # As GatewayKV._seen: a later write's answer older than this is not etcd's.
        self._seen = max(self._seen, int(reply.header.revision))
        return single(key, _entries(reply))

    def prefetch(self, key: str) -> None:
        """Nothing: the verb's code loads before the channel is up (Call.prefetch skips this transport)."""

    def prefetch_reads(self, chunks: list[list[str]]) -> None:
        """Nothing, as ``prefetch``."""

    def scan(self, prefix: str) -> list[Entry]:
        raw = prefix.encode()
        return _entries(self._call("Range", etcdrpc.RangeRequest(key=raw, range_end=prefix_end(raw))))

    def reads(self, chunks: list[list[str]]) -> Iterator[list[Entry | None]]:
        # chunks.py's plan, as GatewayKV.reads: count each chunk's span, then read it as one range or by point
        # reads, all at the counting's revision. One after the other: gRPC answers are cheap for etcd to
        # encode (no JSON gateway).
        if not chunks:
            return
        if len(chunks) == 1 and len(chunks[0]) <= FEW_KEYS:
            yield self._points(chunks[0], 0)
            return
        revision, counts = 0, []
        for at in range(0, len(chunks), CHUNK_KEYS):  # one counting transaction up to 16384 keys
            group = chunks[at : at + CHUNK_KEYS]
            ops = [_op(etcdrpc.RangeRequest(key=key, range_end=end, count_only=True, revision=revision))
                   for key, end in map(span, group)]  # fmt: skip
            reply = self._call("Txn", etcdrpc.TxnRequest(success=ops))
            revision = revision or reply.header.revision
            counts += [r.response_range.count for r in _responses(reply, len(ops))]
        for keys, count in zip(chunks, counts):
            if not dense(count, len(keys)):
                yield self._points(keys, revision)
                continue
            key, end = span(keys)
            found = {
                kv.key: kv
                for kv in self._call("Range", etcdrpc.RangeRequest(key=key, range_end=end, revision=revision)).kvs
            }
            yield [None if (kv := found.get(raw(k))) is None else _entry(kv) for k in keys]

    def _points(self, keys: list[str], revision: int) -> list[Entry | None]:
        """Point reads of ``keys`` in one read-only transaction, at ``revision`` (0: the latest)."""
        ops = [_op(etcdrpc.RangeRequest(key=raw(key), revision=revision)) for key in keys]
        reply = self._call("Txn", etcdrpc.TxnRequest(success=ops))
        return [single(key, _entries(r.response_range)) for key, r in zip(keys, _responses(reply, len(ops)))]

    def put(self, key: str, value: bytes) -> None:
        self._call("Put", etcdrpc.PutRequest(key=key.encode(), value=value))

    def put_if(
        self,
        key: str,
        value: bytes | None,
        mod_revision: int,
        token_key: str,
        token: bytes,
        token_revision: int | None = None,
    ) -> Snapshot | None:
        raw, token_raw = key.encode(), token_key.encode()
        compare = [
            etcdrpc.Compare(
                key=raw, target=etcdrpc.Compare.MOD, result=etcdrpc.Compare.EQUAL, mod_revision=mod_revision
            )
        ]
        if token_revision is not None:
            compare.append(
                etcdrpc.Compare(
                    key=token_raw, target=etcdrpc.Compare.MOD, result=etcdrpc.Compare.EQUAL, mod_revision=token_revision
                )
            )
        record = (
            etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=raw, value=value))
            if value is not None
            else etcdrpc.RequestOp(request_delete_range=etcdrpc.DeleteRangeRequest(key=raw))  # the token stays
        )
        request = etcdrpc.TxnRequest(
            compare=compare,
            success=[record, etcdrpc.RequestOp(request_put=etcdrpc.PutRequest(key=token_raw, value=token))],
            # As GatewayKV.put_if: a failed compare answers with what it found.
            failure=[_op(etcdrpc.RangeRequest(key=raw)), _op(etcdrpc.RangeRequest(key=token_raw))],
        )
        reply = self._call("Txn", request, guarded=True)
        done = ("response_put" if value is not None else "response_delete_range", "response_put")
        answered = int(reply.header.revision)
        problem = None
        if answered <= 0:
            problem = "a write answered without its revision"
        elif answered < self._seen:
            problem = f"a write answered at revision {answered}, older than the revision {self._seen} read before it"
        elif len(reply.responses) != 2:
            problem = f"a transaction of 2 operations answered with {len(reply.responses)}"
        elif [r.WhichOneof("response") for r in reply.responses] != (
            list(done) if reply.succeeded else ["response_range"] * 2
        ):
            problem = "a transaction answered with responses of the other branch"
        found = None
        if problem is None and not reply.succeeded:
            held, made = reply.responses
            try:
                found = Snapshot(answered, [_found(key, held.response_range), _found(token_key, made.response_range)])
            except PluginError as exc:
                problem = str(exc)
        if problem is not None:
            url = self._link.endpoint.url if self._link is not None else "etcd"
            self.close()
            retry.grace(self._policy)
            raise AmbiguousWrite(f"etcd unavailable: {url}: bad reply: {problem}")
        return found

    def history(self, keys: list[str], revision: int) -> Snapshot:
        ops = [_op(etcdrpc.RangeRequest(key=key.encode(), revision=revision)) for key in keys]
        try:
            reply = self._call("Txn", etcdrpc.TxnRequest(success=ops))
        except StoreUnavailable as exc:
            if COMPACTED in str(exc):
                where = self._link.endpoint.url if self._link is not None else "etcd"
                raise HistoryCompacted(f"etcd {where}: {COMPACTED}") from None
            raise
        where = self._link.endpoint.url if self._link is not None else "etcd"
        try:
            answers = _responses(reply, len(ops))
            if any(r.WhichOneof("response") != "response_range" for r in answers):
                raise PluginError("a range answered with other than its range")
            found = [_found(key, r.response_range) for key, r in zip(keys, answers)]
        except PluginError as exc:
            raise StoreUnavailable(f"etcd unavailable: {where}: bad reply: {exc}") from None
        if reply.header.revision <= 0:
            raise StoreUnavailable(f"etcd unavailable: {where}: bad reply: an answer without its revision")
        if not revision:  # as GatewayKV.history
            self._seen = max(self._seen, int(reply.header.revision))
        return Snapshot(revision or int(reply.header.revision), found)

    def delete(self, keys: list[str]) -> None:
        ops = [etcdrpc.RequestOp(request_delete_range=etcdrpc.DeleteRangeRequest(key=key.encode())) for key in keys]
        self._call("Txn", etcdrpc.TxnRequest(success=ops))

    def close(self) -> None:
        if self._link is not None:
            self._link.channel.close()
            self._link = None

    # -- transport ----------------------------------------------------------------------------------

    def _call(self, method: str, request: Any, guarded: bool = False) -> Any:
        """``method`` on the first endpoint that answers. ``guarded`` (a guarded write): once etcd may have
        the request, any failure but etcd's own refusal is an ``AmbiguousWrite``, never a second send."""
        policy = self._policy
        policy.start()
        failures: list[str] = []
        untried = list(policy.endpoints)
        attempts = 0
        while True:
            link = self._link
            if link is None:
                if not untried or policy.left() <= 0:
                    raise StoreUnavailable(f"etcd unavailable: {retry.unavailable(policy, failures)}")
                if len(untried) > 1:
                    # A staggered race, so a silent member costs STAGGER, not dial_timeout.
                    raced = self._race(untried, failures)
                    if raced is None:
                        continue  # every endpoint started has failed: the check above reports it
                    link = self._link = raced
                else:
                    link = self._link = self._open(untried.pop(0))
            try:
                return self._invoke(link, method, request)
            except grpc.RpcError as exc:
                details = exc.details() or ""
                code = _code(exc)
                if guarded and code not in _REFUSALS + _TRANSIENT_CODES:
                    # Cut short, reset, garbled (INTERNAL, UNKNOWN, CANCELLED…): etcd may have applied it.
                    failures.append(f"{link.endpoint.url}: {_reason(exc)}")
                    self.close()
                    retry.grace(policy)
                    raise AmbiguousWrite(f"etcd unavailable: {'; '.join(failures[-4:])}") from None
                if code not in _TRANSIENT_CODES:
                    raise StoreUnavailable(f"etcd {link.endpoint.url} {method}: {_detail(exc)}") from None
                failures.append(f"{link.endpoint.url}: {_reason(exc)}")
                self.close()
                if _NOT_CONNECTED in details:
                    continue  # the request never reached etcd: the next endpoint, as a failed dial would
            # etcd had the request. As GatewayKV: the endpoint goes last, and after a pause that lets an
            # election finish every endpoint may take the request again, within REQUEST_ATTEMPTS and the
            # deadline. Not a guarded write that may have been applied (lost reply, "request timed out",
            # "leader changed"): sent again, it would fail its compare and the caller would apply its
            # change twice.
            retry.rotate(policy, link.endpoint)
            attempts += 1
            if guarded and not any(text in details for text in _NOT_APPLIED):
                retry.grace(policy)
                raise AmbiguousWrite(f"etcd unavailable: {'; '.join(failures[-4:])}")
            if attempts >= REQUEST_ATTEMPTS or policy.left() <= 0:
                raise StoreUnavailable(f"etcd unavailable: {retry.unavailable(policy, failures)}")
            retry.pause(policy, attempts - 1)
            untried = list(policy.endpoints)

    def _invoke(self, link: _Link, method: str, request: Any) -> Any:
        if self._config.username and not link.metadata:
            self._authenticate(link)
        rpc: Callable[..., Any] = getattr(link.kv, method)
        try:
            return rpc(request, timeout=self._policy.request_timeout(), metadata=link.metadata)
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNAUTHENTICATED or not self._config.username:
                raise
        self._authenticate(link)  # the token expired: authenticate again, once
        return rpc(request, timeout=self._policy.request_timeout(), metadata=link.metadata)

    def _open(self, endpoint: Endpoint) -> _Link:
        target = endpoint.authority  # an IPv6 host in brackets, as gRPC's target needs it
        options = _options(self._config)
        if endpoint.tls:
            return _Link(endpoint, grpc.secure_channel(target, self._tls(), options=options))
        return _Link(endpoint, grpc.insecure_channel(target, options=options))

    def _tls(self) -> grpc.ChannelCredentials:
        if self._credentials is None:
            root = _read(self._config.ca, "etcd.ca", self._config.where) if self._config.ca else None
            key = chain = None
            if self._config.client_certificate:
                chain = _read(self._config.cert, "etcd.cert", self._config.where)
                key = _read(self._config.key, "etcd.key", self._config.where)
            self._credentials = grpc.ssl_channel_credentials(root, key, chain)
        return self._credentials

    def _authenticate(self, link: _Link) -> None:
        request = etcdrpc.AuthenticateRequest(name=self._config.username, password=self._config.password)
        try:
            reply = link.auth.Authenticate(request, timeout=self._policy.request_timeout())
        except grpc.RpcError as exc:
            if _code(exc) in _TRANSIENT_CODES:
                raise  # the endpoint, not the credentials: the caller tries the next one
            # Never echo the reply: it is about the credentials.
            raise PluginError(
                f"etcd authentication failed for user {self._config.username!r} at {link.endpoint.url}"
            ) from None
        token = reply.token
        if not isinstance(token, str) or not token:
            raise PluginError(f"etcd authentication at {link.endpoint.url} returned no token")
        link.metadata = (("token", token),)

    def _race(self, untried: list[Endpoint], failures: list[str]) -> _Link | None:
        """policy.py's race over ``untried`` (the endpoints it starts are taken off the list); the probe is
        the authentication when a user is configured (its token is kept), else a Status request: either
        way the endpoint has replied, not merely accepted a connection. Every other channel is closed."""
        opened: list[_Link] = []
        race = Race(self._policy, list(untried), lambda endpoint: self._contact(endpoint, opened), _close)
        winner = None
        try:
            winner = race.run()
        finally:
            failures += race.failures
            del untried[: race.started]
            for link in opened:
                if link is not winner:
                    link.channel.close()  # a probe still waiting ends with it
        return winner

    def _contact(self, endpoint: Endpoint, opened: list[_Link]) -> _Link:
        """A channel to ``endpoint`` that has answered its probe, as one of the race's attempts."""
        link = self._open(endpoint)
        opened.append(link)
        try:
            if self._config.username:
                self._authenticate(link)  # wrong credentials settle the call; the token is kept
            else:
                link.maintenance.Status(etcdrpc.StatusRequest(), timeout=self._policy.request_timeout())
        except grpc.RpcError as exc:
            link.channel.close()
            raise Unanswered(_reason(exc)) from None
        except ValueError:  # the race ended and closed this loser's channel before its probe went out
            raise Unanswered("closed: another member answered first") from None
        return link


def _op(request: Any) -> Any:
    return etcdrpc.RequestOp(request_range=request)


def _responses(reply: Any, asked: int) -> Any:
    if len(reply.responses) != asked:
        raise StoreUnavailable(f"etcd: bad reply: {asked} ranges asked, {len(reply.responses)} answered")
    return reply.responses


def _close(link: _Link) -> None:
    link.channel.close()


def _entries(reply: Any) -> list[Entry]:
    return [_entry(kv) for kv in reply.kvs]


def _entry(kv: Any) -> Entry:
    return Entry(key=kv.key.decode("utf-8", errors="replace"), value=bytes(kv.value), mod_revision=int(kv.mod_revision))


def _found(key: str, ranged: Any) -> Entry | None:
    """The one entry of a range of ``key``, with its create revision (for settling a write)."""
    entry = single(key, _entries(ranged))
    if entry is not None:
        entry.create_revision = int(ranged.kvs[0].create_revision)
    return entry


def _read(path: str, setting: str, where: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise PluginError(f"{where}: {setting}: cannot read {path}: {exc.strerror or exc}") from None


def _code(exc: grpc.RpcError) -> grpc.StatusCode:
    """``exc``'s status code, etcd's own timeout read as the deadline it is: a member whose work on a request
    outlived the deadline sent with it (a linearizable read on a member cut off from its leader) answers
    UNKNOWN "context deadline exceeded" (Go's context error, which etcd's rpctypes leave unmapped) before
    the client's own deadline fires. Another member may answer: it is transient, as DEADLINE_EXCEEDED is."""
    code: grpc.StatusCode = exc.code()
    if code == grpc.StatusCode.UNKNOWN and "context deadline exceeded" in (exc.details() or ""):
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return code


def _reason(exc: grpc.RpcError) -> str:
    """Why an endpoint did not answer, in the gateway transport's words where they exist."""
    if _code(exc) == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "timed out"
    details = exc.details() or exc.code().name
    found = _CONNECT_DETAIL.search(details)
    reason = found.group(1) if found else details
    return reason.removesuffix(": OK")  # gRPC appends the status of its TLS layer: noise here


def _detail(exc: grpc.RpcError) -> str:
    return f"{exc.code().name}: {exc.details() or 'no details'}"
