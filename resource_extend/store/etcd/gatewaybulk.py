"""The gateway's reads of many keys: chunks.py's plan of counted chunks, pipelined, and the scan of a directory.

Imported when a bulk verb (get-metrics, get-nodes-deploy-capacity, get-nodes-resource-info of several
nodes), doctor or explain reads, so a single-node call never loads this code; gateway.py's ``GatewayKV``
hands these reads here, with what they need of it as arguments: its request (``Call``: retries, endpoints,
auth), its kept connection and token (``Kept``), its ``close`` and the call's ``Policy``. The connection
stays the client's: this module sends on it and asks the client to close it, never replaces it. From a plain
``http://`` member, span reads and big scans go over etcd's gRPC API instead (h2/), and over the gateway
whenever that fails.
"""

from __future__ import annotations

from resource_extend.formats import jsonio
from resource_extend.store.etcd import base64text
from resource_extend.store.etcd.chunks import CHUNK_KEYS, FEW_KEYS, dense, prefix_end, raw, span
from resource_extend.store.etcd.kv import Entry, single
from resource_extend.store.etcd.messages import BAD_REPLY, RANGE, TXN, document, entries, value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any, Callable, Protocol, TypeVar

    from resource_extend.store.etcd.connection import Connection
    from resource_extend.store.etcd.h2.client import Client
    from resource_extend.store.etcd.policy import Policy

    # The connection, the streams of the span reads sent and not yet answered, and the reads not yet sent.
    H2Reads = tuple[Client, list[int], list[bytes]]

    T = TypeVar("T")
    Encoder = Callable[[bytes], str]
    Decoder = Callable[[str], bytes]

    class Call(Protocol):
        """The client's request (``GatewayKV._call``): POST ``body`` to ``path`` on its connection, dialling,
        authenticating and retrying as its policy says, and ``parse`` the answer's JSON."""

        def __call__(self, path: str, body: dict[str, Any], parse: Callable[[Any], T], read: bool = ...) -> T: ...

    # The client's connection and its auth token as they are now, None when it has none open: the
    # connection the last request went on, which the pipelined and h2 reads follow up on.
    Kept = Callable[[], tuple[Connection, str | None] | None]


def scan(call: Call, kept: Kept, policy: Policy, prefix: str) -> list[Entry]:
    key = prefix.encode()
    _, decode = base64text.for_many()  # a whole directory
    body = {"key": base64text.encode(key), "range_end": base64text.encode(prefix_end(key))}
    # Counted first (which connects, authenticates and fixes the revision), a directory of more than a few
    # records is read over h2 (see reads); the gateway reads it when that fails, or when it is small.
    revision, count = call(RANGE, {**body, "count_only": True}, _counted, read=True)
    conn, token = kept() or (None, None)
    if count > FEW_KEYS and conn is not None:
        fast = _spans_over_h2(policy, conn, token, [(key, prefix_end(key))], revision)
        if fast is not None:
            try:
                records = _records_over_h2(policy, fast)
            finally:
                fast[0].close()
            if records is not None:
                return [Entry(k.decode("utf-8", errors="replace"), value, mod) for k, value, mod in records]
    return call(RANGE, body, lambda doc: entries(doc, decode), read=True)


def _counted(doc: Any) -> tuple[int, int]:
    return int(doc["header"]["revision"]), int(doc.get("count", 0))


def reads(
    call: Call, kept: Kept, close: Callable[[], None], policy: Policy, chunks: list[list[str]]
) -> Generator[list[Entry | None], None, None]:
    # chunks.py's plan. The counting goes the usual way (it may pick the endpoint and authenticate, and
    # it fixes the revision); the reads then go out together on its connection (HTTP/1.1 pipelining),
    # so etcd answers the next while the caller decodes the last: 1000 storage records take ~18 ms
    # to read and decode instead of ~28. Any answer but a readable 200 ends the pipeline (the
    # connection is dropped), and what is left goes the usual way, with its retries and its errors.
    # Span reads go over h2 when they can (~9 ms for the 1000 records), the rest as above.
    if not chunks:
        return
    if _few(chunks):
        yield call(TXN, first_request(chunks), _aligned(chunks[0], base64text.decode), read=True)
        return
    # More than a few keys (often hundreds) and their records: binascii pays for its import.
    encode, decode = base64text.for_many()
    revision, counts = 0, []
    for at in range(0, len(chunks), CHUNK_KEYS):  # one counting transaction up to 16384 keys
        counting = _counting(chunks[at : at + CHUNK_KEYS], revision, encode) if at else first_request(chunks)
        revision, counted = call(TXN, counting, _counts(len(counting["success"])), read=True)
        counts += counted
    planned = [
        (RANGE, _span_read(keys, revision, encode), _from_span(keys, decode))
        if dense(count, len(keys))
        else (TXN, _point_reads(keys, revision, encode), _aligned(keys, decode))
        for keys, count in zip(chunks, counts)
    ]
    # The counting's connection, kept by the client: the reads below go out on it.
    conn, token = kept() or (None, None)
    left = 0
    # The span reads go over gRPC (h2/: etcd answers them ~4x faster than the gateway) when the member
    # is a plain http:// one; point reads, and whatever h2/ fails to read, go the gateway's way.
    spans = [span(keys) for keys, (path, _, _) in zip(chunks, planned) if path == RANGE]
    fast = _spans_over_h2(policy, conn, token, spans, revision) if conn is not None else None
    if conn is not None:
        rest = [(path, body) for path, body, _ in planned if fast is None or path != RANGE]
        payloads = [(path, jsonio.compact(body).encode()) for path, body in rest]
        try:
            if payloads:
                conn.send(payloads, token, policy.request_timeout())
            left = len(payloads)
        except OSError:
            close()
    try:
        for (path, body, parse), keys in zip(planned, chunks):
            found = None
            if fast is not None and path == RANGE:
                found = _over_h2(policy, fast, keys)
                if found is None:  # h2 failed: no more of it, and the gateway's pipeline is dropped too, since
                    fast = None  # the reads left go one by one on a connection of its own
                    if left:
                        left = 0
                        close()
            elif left and conn is not None:
                left -= 1
                found = _pipelined(policy, conn, parse)
                if found is None:  # the pipeline is broken: its connection goes, if the client still keeps it
                    left = 0
                    if _kept_is(kept, conn):
                        close()
            yield found if found is not None else call(path, body, parse, read=True)
    finally:
        if fast is not None:
            fast[0].close()
        if left:  # a caller that stopped early: answers still due would be read as the next request's
            close()


def first_request(chunks: list[list[str]]) -> dict[str, Any]:
    """The body of the transaction ``reads(chunks)`` sends first: the point reads of a few keys, or the
    count of the first chunks' spans. A call sends it before its verb's code loads (GatewayKV.prefetch_reads),
    and ``reads`` takes etcd's answer to it when its own first request is this one, byte for byte."""
    if _few(chunks):
        return _point_reads(chunks[0], 0, base64text.encode)
    encode, _ = base64text.for_many()
    return _counting(chunks[:CHUNK_KEYS], 0, encode)


def _few(chunks: list[list[str]]) -> bool:
    return len(chunks) == 1 and len(chunks[0]) <= FEW_KEYS


def _spans_over_h2(
    policy: Policy, conn: Connection, token: str | None, spans: list[tuple[bytes, bytes]], revision: int
) -> H2Reads | None:
    """An h2c connection to ``conn``'s member (authenticated by ``token``, the gateway's) with the first reads
    of ``spans`` (key, range_end) sent on it, or None: TLS (never h2c), no span, or no connection (the
    gateway reads them instead)."""
    if not spans or conn.endpoint.tls:
        return None
    from resource_extend.store.etcd.h2 import client as h2
    from resource_extend.store.etcd.h2 import protobuf

    client = None
    try:
        dial, timeout = policy.dial_timeout(), policy.request_timeout()  # before a socket is open
        client = h2.Client(conn.endpoint, token, dial)
        messages = [protobuf.range_request(key, end, revision) for key, end in spans]
        streams = client.send(protobuf.PATH, messages[:H2_AHEAD], timeout)
    except (OSError, ValueError):
        if client is not None:
            client.close()
        return None
    return client, streams, messages[H2_AHEAD:]


# Span reads etcd has in hand at once over h2. etcd works on a connection's streams in parallel and this
# side reads their answers in order, so a few ahead keep etcd busy while this side decodes, and bound
# what both sides buffer on a 10,000-node read (1000 nodes: 4 ahead or all at once, within noise).
H2_AHEAD = 4


def _over_h2(policy: Policy, fast: H2Reads, keys: list[str]) -> list[Entry | None] | None:
    """The entries of ``keys`` from the next span read's answer on h2, or None when it is not a readable one."""
    records = _records_over_h2(policy, fast)
    if records is None:
        return None
    found = {key: Entry(key.decode("utf-8", errors="replace"), value, mod) for key, value, mod in records}
    return [found.get(raw(key)) for key in keys]


def _records_over_h2(policy: Policy, fast: H2Reads) -> list[tuple[bytes, bytes, int]] | None:
    """The next span read's records (key, value, mod_revision) on h2, or None (the connection closed) when
    its answer is not a readable one."""
    from resource_extend.store.etcd.h2 import protobuf

    client, streams, waiting = fast
    try:
        data = client.answer(streams.pop(0), policy.request_timeout())
        if waiting:  # the next read goes out before this one is decoded
            streams += client.send(protobuf.PATH, [waiting.pop(0)], policy.request_timeout())
        return protobuf.range_response(protobuf.unframe(data))[1]
    except (OSError, ValueError, KeyError, IndexError):
        client.close()
        return None


def _pipelined(policy: Policy, conn: Connection, parse: Callable[[Any], T]) -> T | None:
    """The next pipelined answer, or None when it is not a readable 200 (the caller drops the connection)."""
    try:
        conn.settimeout(policy.request_timeout())
        status, data = conn.receive()
        if status == 200:
            return parse(document(data))
    except (OSError, *BAD_REPLY):
        pass
    return None


def _kept_is(kept: Kept, conn: Connection) -> bool:
    """Whether the client still keeps ``conn`` (a request in between may have replaced it)."""
    link = kept()
    return link is not None and link[0] is conn


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
            found[key] = Entry(key.decode("utf-8", errors="replace"), *value(kv, decode))
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
        return [single(key, entries(response["response_range"], decode)) for key, response in zip(keys, responses)]

    return parse
