"""http1's bound at its edge for each framing, where a hand mutant moved it (issue 37,
docs/testing.md#mutant-sample-issue-37): a reply of exactly the bound is read, one byte more is refused."""

from __future__ import annotations

import pytest

from resource_extend.store.etcd.http1 import Malformed, Parser

BOUND = 10


def chunked(*sizes: int) -> bytes:
    body = b"".join(b"%x\r\n" % size + b"x" * size + b"\r\n" for size in sizes)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body + b"0\r\n\r\n"


def sized(size: int) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + b"x" * size


@pytest.mark.parametrize("reply", [chunked(4, 6), chunked(BOUND), sized(BOUND)])
def test_a_reply_of_exactly_the_bound_is_read_whatever_its_framing(reply: bytes) -> None:
    parser = Parser(BOUND)
    parser.feed(reply)
    read = parser.next()
    assert read is not None and read.body == b"x" * BOUND


@pytest.mark.parametrize("reply", [chunked(4, 7), chunked(BOUND + 1), sized(BOUND + 1)])
def test_a_reply_one_byte_past_the_bound_is_refused_whatever_its_framing(reply: bytes) -> None:
    parser = Parser(BOUND)
    parser.feed(reply)
    with pytest.raises(Malformed, match="past the bound"):
        parser.next()
