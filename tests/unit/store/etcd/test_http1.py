"""HTTP/1.1 reply parsing (etcd/http1.py) against the h11 package: replies h11 writes as a server, and replies
read until close written here, are read by the parser as h11 reads them as a client, however the bytes are
split; bytes h11 and the parser both take whole are read alike; no framing takes a reply past the bound; and
what RFC 9112 refuses (Content-Lengths that disagree) is refused at once, what it allows (1xx replies before
the answer, a head of bare LFs) read as h11 reads it."""

from __future__ import annotations

from typing import Any

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.store.etcd import http1
from resource_extend.store.etcd.http1 import Malformed, Parser
from tests.support import examples

# Statuses with a body (not 1xx, 204 or 304, which h11 frames apart and etcd never sends).
STATUSES = st.sampled_from([200, 201, 400, 401, 404, 429, 500, 502, 503, 504])
HEADER_NAMES = st.sampled_from([b"Content-Type", b"Grpc-Metadata-Content-Type", b"X-A", b"Date", b"Vary"])
HEADER_VALUES = st.binary(max_size=30).map(lambda v: bytes(b for b in v if 0x21 <= b <= 0x7E))
HEADERS = st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=4)
# A reply: status, headers, its body as the parts h11 writes (each a chunk when chunked), and its framing.
REPLY = st.tuples(
    STATUSES, HEADERS, st.lists(st.binary(min_size=1, max_size=200), max_size=4), st.sampled_from(["length", "chunked"])
)


def _request() -> h11.Request:
    return h11.Request(method="POST", target="/v3/kv/range", headers=[("Host", "etcd"), ("Content-Length", "0")])


def written_by_h11(replies: list[tuple[int, list[tuple[bytes, bytes]], list[bytes], str]]) -> bytes:
    """The replies as h11 writes them, as a server, on one kept-alive connection."""
    server = h11.Connection(h11.SERVER)
    out = bytearray()
    for status, headers, parts, framing in replies:
        client = h11.Connection(h11.CLIENT)  # only there to write each request the server must read first
        server.receive_data(client.send(_request()) + client.send(h11.EndOfMessage()))
        assert isinstance(server.next_event(), h11.Request)
        assert isinstance(server.next_event(), h11.EndOfMessage)
        fields = list(headers)
        if framing == "length":
            fields.append((b"Content-Length", str(sum(map(len, parts))).encode()))
        out += server.send(h11.Response(status_code=status, headers=fields))
        for part in parts:
            out += server.send(h11.Data(data=part))
        out += server.send(h11.EndOfMessage())
        server.start_next_cycle()
    return bytes(out)


def read_by_h11(data: bytes, count: int, closes: bool) -> list[tuple[int, bytes]] | None:
    """What h11, as the client that sent ``count`` requests, reads in ``data``: (status, body) per reply,
    None when it refuses the bytes or they end before ``count`` whole replies."""
    client = h11.Connection(h11.CLIENT)
    client.receive_data(data)
    if closes:
        client.receive_data(b"")
    replies: list[tuple[int, bytes]] = []
    try:
        for _ in range(count):
            client.send(_request())
            client.send(h11.EndOfMessage())
            status, body = 0, bytearray()
            while True:
                event: Any = client.next_event()
                if isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.InformationalResponse):
                    continue  # a 1xx before the answer: skipped
                else:  # NEED_DATA, PAUSED, ConnectionClosed: the bytes end before the reply does
                    return None
            replies.append((status, bytes(body)))
            if client.our_state is h11.DONE and client.their_state is h11.DONE:
                client.start_next_cycle()
            else:
                break
    except h11.ProtocolError:
        return None
    return replies if len(replies) == count else None


def read_by_parser(
    data: bytes, cuts: list[int], count: int, closes: bool, most: int = http1.MAX_REPLY
) -> list[tuple[int, bytes]]:
    """What the parser reads in ``data`` fed in pieces cut at ``cuts``, as connection.py feeds it."""
    parser = Parser(most)
    replies: list[tuple[int, bytes]] = []
    at = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        parser.feed(data[at:cut])
        at = max(at, cut)
        while len(replies) < count:
            reply = parser.next()
            if reply is None:
                break
            replies.append((reply.status, reply.body))
    if closes and len(replies) < count:
        reply = parser.eof()
        if reply is not None:
            replies.append((reply.status, reply.body))
    return replies


def until_close(status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 %d OK\r\n" % status + head + b"Connection: close\r\n\r\n" + body


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(REPLY, min_size=1, max_size=3), st.lists(st.integers(0, 2000), max_size=6))
def test_replies_h11_writes_are_read_as_h11_reads_them_however_split(replies: Any, cuts: list[int]) -> None:
    data = written_by_h11(replies)
    expected = [(status, b"".join(parts)) for status, _, parts, _ in replies]
    assert read_by_h11(data, len(replies), closes=False) == expected
    assert read_by_parser(data, cuts, len(replies), closes=False) == expected


@settings(max_examples=examples(1000), deadline=None)
@given(STATUSES, HEADERS, st.binary(max_size=500), st.lists(st.integers(0, 700), max_size=6))
def test_a_reply_read_until_close_is_read_as_h11_reads_it(
    status: int, headers: Any, body: bytes, cuts: list[int]
) -> None:
    data = until_close(status, headers, body)
    assert read_by_h11(data, 1, closes=True) == [(status, body)]
    assert read_by_parser(data, cuts, 1, closes=True) == [(status, body)]


def _mutated(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for at, byte in edits:
        if out:
            out[at % len(out)] = byte
    return bytes(out)


@settings(max_examples=examples(3000), deadline=None)
@given(
    st.lists(REPLY, min_size=1, max_size=2),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
    st.lists(st.integers(0, 2000), max_size=4),
)
def test_damaged_bytes_that_both_read_whole_are_read_alike_and_the_rest_refused_cleanly(
    replies: Any, edits: list[tuple[int, int]], cuts: list[int]
) -> None:
    data = _mutated(written_by_h11(replies), edits)
    ours: list[tuple[int, bytes]] | None
    try:
        ours = read_by_parser(data, cuts, len(replies), closes=True, most=4096)
    except Malformed:  # the only way the parser refuses bytes
        ours = None
    theirs = read_by_h11(data, len(replies), closes=True)
    if ours is not None and theirs is not None and len(ours) == len(theirs):
        # Where the two disagree on a damaged head (h11 is stricter about header syntax), the reply is
        # still one of the two; where both frame it, its status and body are the same bytes.
        assert ours == theirs


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999999\r\n\r\n", "past the bound"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n", "past the bound"),
    ],
)
def test_a_reply_whose_framing_says_it_is_past_the_bound_is_refused_before_its_body(head: bytes, why: str) -> None:
    parser = Parser()
    parser.feed(head)
    with pytest.raises(Malformed, match=why):
        parser.next()


def test_a_reply_just_within_the_bound_is_read() -> None:
    body = b"x" * 1000
    parser = Parser(1000)
    parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + body)
    reply = parser.next()
    assert reply is not None and reply.body == body


@pytest.mark.parametrize("framing", ["chunked", "close"])
def test_an_endless_reply_is_refused_once_the_bound_is_reached_holding_no_more(framing: str) -> None:
    most = 100_000
    parser = Parser(most)
    if framing == "chunked":
        parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"400\r\n" + b"0" * 0x400 + b"\r\n"  # 1 KiB chunks, forever
    else:
        parser.feed(b"HTTP/1.1 200 OK\r\n\r\n")
        piece = b"0" * 65536
    with pytest.raises(Malformed, match="past"):
        for _ in range(10 * most // len(piece)):  # ten times the bound, if it were never refused
            assert parser.next() is None
            assert parser.buffered <= most + len(piece)
            parser.feed(piece)
    assert parser.buffered <= most + 2 * len(piece)


def test_an_endless_head_is_refused_past_the_head_bound() -> None:
    parser = Parser()
    with pytest.raises(Malformed, match="within"):
        for _ in range(http1.MAX_HEAD // 1000 + 2):
            parser.feed(b"X-A: " + b"a" * 995)
            assert parser.next() is None


def test_a_reply_cut_short_is_none_at_eof_and_one_read_until_close_is_whole() -> None:
    cut = Parser()
    cut.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
    assert cut.next() is None and cut.eof() is None
    whole = Parser()
    whole.feed(b"HTTP/1.1 200 OK\r\n\r\n12345")
    assert whole.next() is None
    reply = whole.eof()
    assert reply is not None and (reply.status, reply.body) == (200, b"12345")


def test_a_header_after_a_bare_line_feed_is_read_as_h11_reads_it() -> None:
    # RFC 9112 2.2 lets a recipient end a line at a bare LF; h11 does. Read as one line with the header
    # before it, the Transfer-Encoding below would be missed and the body read until close instead.
    data = b"HTTP/1.1 200 OK\r\nDate: x\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
    assert read_by_h11(data, 1, closes=True) == [(200, b"abc")]
    assert read_by_parser(data, [], 1, closes=True) == [(200, b"abc")]


def _interim(status: int) -> bytes:
    server = h11.Connection(h11.SERVER)
    client = h11.Connection(h11.CLIENT)
    server.receive_data(client.send(_request()) + client.send(h11.EndOfMessage()))
    server.next_event()
    return server.send(h11.InformationalResponse(status_code=status, headers=[(b"X-A", b"b")]))


@settings(max_examples=examples(500), deadline=None)
@given(
    REPLY,
    st.lists(st.sampled_from([100, 102, 103]), min_size=1, max_size=3),
    st.lists(st.integers(0, 700), max_size=6),
)
def test_interim_replies_before_the_answer_are_skipped_as_h11_skips_them(
    reply: Any, interims: list[int], cuts: list[int]
) -> None:
    data = b"".join(map(_interim, interims)) + written_by_h11([reply])
    expected = [(reply[0], b"".join(reply[2]))]
    assert read_by_h11(data, 1, closes=False) == expected
    assert read_by_parser(data, cuts, 1, closes=False) == expected


def test_a_101_never_asked_for_is_refused_as_h11_refuses_it() -> None:
    data = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    assert read_by_h11(data, 1, closes=False) is None
    with pytest.raises(Malformed, match="101"):
        read_by_parser(data, [], 1, closes=False)


def test_endless_interim_replies_are_refused_past_the_head_bound() -> None:
    parser = Parser()
    with pytest.raises(Malformed, match="within"):
        for _ in range(http1.MAX_HEAD // 20 + 2):
            parser.feed(b"HTTP/1.1 100 Go on\r\n\r\n")
            assert parser.next() is None


@pytest.mark.parametrize("lengths", [b"Content-Length: 2\r\nContent-Length: 3", b"Content-Length: 2, 3"])
def test_content_lengths_that_disagree_are_refused_at_once_as_h11_refuses_them(lengths: bytes) -> None:
    # Taking either would read the body wrong; taking the longer waits for bytes that never come.
    data = b"HTTP/1.1 200 OK\r\n" + lengths + b"\r\n\r\n{}"
    assert read_by_h11(data, 1, closes=False) is None
    with pytest.raises(Malformed, match="disagree"):
        read_by_parser(data, [], 1, closes=False)


def test_a_content_length_said_twice_alike_is_read_as_h11_reads_it() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\n{}"
    assert read_by_h11(data, 1, closes=False) == [(200, b"{}")]
    assert read_by_parser(data, [], 1, closes=False) == [(200, b"{}")]


@settings(max_examples=examples(500), deadline=None)
@given(REPLY, st.lists(st.integers(0, 700), max_size=6), st.sampled_from([b"\n", b"\r\n"]))
def test_a_head_of_bare_line_feeds_is_read_as_h11_reads_it_however_split(
    reply: Any, cuts: list[int], last: bytes
) -> None:
    # The empty line that ends the head may be a bare LF too: waiting for CRLF CRLF held the call until
    # its timeout. Each line of the head, and the empty one, ends in a bare LF or (``last``) in CRLF.
    data = written_by_h11([reply])
    head, _, body = data.partition(b"\r\n\r\n")
    data = head.replace(b"\r\n", b"\n") + b"\n" + last + body
    expected = [(reply[0], b"".join(reply[2]))]
    assert read_by_h11(data, 1, closes=False) == expected
    assert read_by_parser(data, cuts, 1, closes=False) == expected


@pytest.mark.parametrize("data", [b"\n" * 100, b"\r\n" * 100, b"\nHTTP/1.1 200 OK\n\n"])
def test_a_head_of_empty_lines_is_refused_at_once_as_h11_refuses_it(data: bytes) -> None:
    assert read_by_h11(data, 1, closes=False) is None
    with pytest.raises(Malformed, match="status line"):
        read_by_parser(data, [], 1, closes=False)


@pytest.mark.parametrize("status", [204, 304])
def test_a_reply_without_a_body_by_its_status_ends_at_its_head_as_h11_reads_it(status: int) -> None:
    # Without a length it is no reply read until close: the next bytes are the next reply (make test-deep's
    # differential found this one read as a body).
    data = f"HTTP/1.1 {status} X\r\nX-A: 1\r\n\r\n".encode() + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    parser = Parser()
    parser.feed(data)
    first, second = parser.next(), parser.next()
    assert first is not None and (first.status, first.body) == (status, b"")
    assert second is not None and (second.status, second.body) == (200, b"ok")
    assert read_by_h11(data, 2, closes=False) == [(status, b""), (200, b"ok")]


def test_chunked_framing_wins_over_a_content_length_beside_it() -> None:
    parser = Parser()
    parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    reply = parser.next()
    assert reply is not None and reply.body == b"hello"


def test_a_chunk_not_followed_by_its_crlf_is_refused() -> None:
    parser = Parser()
    parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n")
    with pytest.raises(Malformed, match="a chunk longer than its size"):
        parser.next()


@pytest.mark.parametrize(
    ("header", "closes"), [(b"Connection: close\r\n", True), (b"Connection: keep-alive\r\n", False), (b"", False)]
)
def test_a_reply_saying_connection_close_is_marked_so_the_connection_goes(header: bytes, closes: bool) -> None:
    parser = Parser()
    parser.feed(b"HTTP/1.1 200 OK\r\n" + header + b"Content-Length: 2\r\n\r\nok")
    reply = parser.next()
    assert reply is not None and (reply.body, reply.close) == (b"ok", closes)
