"""The gateway's reads of many keys: chunks.py's plan of counted chunks, pipelined, and the scan of a directory.

Imported when a bulk verb (get-metrics, get-nodes-deploy-capacity, get-nodes-resource-info of several
nodes), doctor or explain reads, so a single-node call never loads this code; gateway.py's ``GatewayKV``
hands these reads here.
"""

from __future__ import annotations

from resource_extend import jsonio
from resource_extend.etcd import base64text
from resource_extend.etcd.chunks import CHUNK_KEYS, FEW_KEYS, dense, prefix_end, raw, span
from resource_extend.etcd.gateway import BAD_REPLY, RANGE, TXN, document, entries, value
from resource_extend.etcd.kv import Entry, single

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any, Callable, TypeVar

    from resource_extend.etcd.connection import Connection
    from resource_extend.etcd.gateway import GatewayKV

    T = TypeVar("T")
    Encoder = Callable[[bytes], str]
    Decoder = Callable[[str], bytes]


def scan(kv: GatewayKV, prefix: str) -> list[Entry]:
    key = prefix.encode()
    _, decode = base64text.for_many()  # a whole directory
    body = {"key": base64text.encode(key), "range_end": base64text.encode(prefix_end(key))}
    return kv._call(RANGE, body, lambda doc: entries(doc, decode), read=True)


def reads(kv: GatewayKV, chunks: list[list[str]]) -> Generator[list[Entry | None], None, None]:
    # chunks.py's plan. The counting goes the usual way (it may pick the endpoint and authenticate, and
    # it fixes the revision); the reads then go out together on its connection (HTTP/1.1 pipelining),
    # so etcd answers the next while the caller decodes the last: 1000 storage records take ~18 ms
    # to read and decode instead of ~28. Any answer but a readable 200 ends the pipeline (the
    # connection is dropped), and what is left goes the usual way, with its retries and its errors.
    if not chunks:
        return
    if len(chunks) == 1 and len(chunks[0]) <= FEW_KEYS:
        few = chunks[0]
        yield kv._call(TXN, _point_reads(few, 0, base64text.encode), _aligned(few, base64text.decode), read=True)
        return
    # More than a few keys (often hundreds) and their records: binascii pays for its import.
    encode, decode = base64text.for_many()
    revision, counts = 0, []
    for at in range(0, len(chunks), CHUNK_KEYS):  # one counting transaction up to 16384 keys
        counting = _counting(chunks[at : at + CHUNK_KEYS], revision, encode)
        revision, counted = kv._call(TXN, counting, _counts(len(counting["success"])), read=True)
        counts += counted
    planned = [
        (RANGE, _span_read(keys, revision, encode), _from_span(keys, decode))
        if dense(count, len(keys))
        else (TXN, _point_reads(keys, revision, encode), _aligned(keys, decode))
        for keys, count in zip(chunks, counts)
    ]
    conn, left = kv._conn, 0
    if conn is not None:
        payloads = [(path, jsonio.compact(body).encode()) for path, body, _ in planned]
        try:
            conn.send(payloads, kv._token, kv._policy.request_timeout())
            left = len(payloads)
        except OSError:
            kv.close()
    try:
        for path, body, parse in planned:
            found = None
            if left and conn is not None:
                left -= 1
                found = _pipelined(kv, conn, parse)
                if found is None:
                    left = 0
            yield found if found is not None else kv._call(path, body, parse, read=True)
    finally:
        if left:  # a caller that stopped early: answers still due would be read as the next request's
            kv.close()


def _pipelined(kv: GatewayKV, conn: Connection, parse: Callable[[Any], T]) -> T | None:
    """The next pipelined answer, or None (the connection closed) when it is not a readable 200."""
    try:
        conn.settimeout(kv._policy.request_timeout())
        status, data = conn.receive()
        if status == 200:
            return parse(document(data))
    except (OSError, *BAD_REPLY):
        pass
    if conn is kv._conn:
        kv.close()
    return None


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
