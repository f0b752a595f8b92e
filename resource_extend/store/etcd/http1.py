"""HTTP/1.1 replies parsed from bytes fed in, without a socket: connection.py reads, this module decides.

Kept apart from the socket so that every framing a reply can use (Content-Length, chunked, read until the
peer closes) is held to one bound, ``MAX_REPLY``, the same as h2/client.py's ``MAX_MESSAGE``, and so that
tests/unit/store/etcd/test_http1.py can hold the parser to the ``h11`` package's reading of the same bytes.
A reply past the bound is refused as soon as its framing says so (a Content-Length, a chunk size), or
as soon as that many bytes arrived (read until close): an endless or enormous reply costs a call the
bound, never more, and fails it with a bad-reply line rather than exhausting the host.

What RFC 9112 refuses is refused at once, and what it allows is read as it says: a head may end its lines
with a bare LF (2.2), its end too (``\n\n``, as h11 reads it); a 1xx interim reply before the answer is
skipped (RFC 9110 15.2), all of them together held to ``MAX_HEAD``; two Content-Lengths that disagree are
a bad reply (6.3), where waiting for the longer one would hold the call until its timeout; a 204 or 304
has no body, and chunked framing wins over a Content-Length beside it (6.3).

Errors are ``Malformed`` (a ``ValueError``): connection.py turns them into failing.py's ``BadReply``.
"""

from __future__ import annotations

# The most a status line and headers may take: etcd's are a few hundred bytes.
MAX_HEAD = 65536
# The most one reply's body may take. etcd's biggest answer here is a scan of a whole directory (10,000
# storage nodes: ~13 MB of JSON); h2/client.py holds a gRPC answer to the same figure.
MAX_REPLY = 64 << 20
# A chunk-size line: 15 hex digits and a chunk extension, with room to spare.
MAX_LINE = 1024

HEAD, LENGTH, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILER, UNTIL_CLOSE = range(7)


class Malformed(ValueError):
    """Bytes that are not an HTTP/1.1 reply, or a reply beyond the bound."""


class Reply:
    """One whole reply: its status, its body, and whether the server said it closes the connection."""

    __slots__ = ("body", "close", "status")

    def __init__(self, status: int, body: bytes, close: bool) -> None:
        self.status = status
        self.body = body
        self.close = close


class Parser:
    """Bytes in (``feed``), whole replies out (``next``), in order; ``eof`` once the peer closed."""

    __slots__ = ("_body", "_buf", "_close", "_interim", "_left", "_most", "_parts", "_scanned", "_state", "_status")

    def __init__(self, most: int = MAX_REPLY) -> None:
        self._most = most
        # A bytearray: appending and dropping what was read are amortized O(1), where bytes would copy the
        # whole buffer per 64 KiB received (a 10,000-node range read is ~13 MB: quadratic).
        self._buf = bytearray()
        self._state = HEAD
        self._scanned = 0  # how far the buffer was searched for the line or head end awaited: not again
        self._status = 0
        self._close = False
        self._left = 0  # the bytes of the body, or of the chunk, still to come
        self._body = 0  # the body's bytes so far (chunked)
        self._parts: list[bytes] = []
        self._interim = 0  # the bytes of the 1xx replies skipped before the answer under way

    @property
    def buffered(self) -> int:
        """Bytes received and not yet part of a reply taken."""
        return len(self._buf)

    @property
    def until_close(self) -> bool:
        """Whether the reply under way ends only when the peer closes."""
        return self._state == UNTIL_CLOSE

    def feed(self, data: bytes) -> None:
        self._buf += data
        if self._state == UNTIL_CLOSE and len(self._buf) > self._most:
            raise Malformed(f"a reply read until close past {self._most} bytes")

    def eof(self) -> Reply | None:
        """The reply that the peer's close ends (a body read until close), else None: the reply was cut short."""
        if self._state != UNTIL_CLOSE:
            return None
        body = bytes(self._buf)
        self._buf.clear()
        return self._done(body)

    def next(self) -> Reply | None:
        """The next whole reply, or None until more bytes are fed."""
        while True:
            state = self._state
            if state == HEAD:
                head = self._head_bytes()
                if head is None:
                    return None
                self._head(head)
            elif state == LENGTH:
                if len(self._buf) < self._left:
                    return None
                body = bytes(self._buf[: self._left])
                del self._buf[: self._left]
                return self._done(body)
            elif state == CHUNK_SIZE:
                line = self._line(b"\r\n", MAX_LINE)
                if line is None:
                    return None
                self._chunk_size(line)
            elif state == CHUNK_DATA:
                if len(self._buf) < self._left:
                    return None
                self._parts.append(bytes(self._buf[: self._left]))
                del self._buf[: self._left]
                self._state = CHUNK_END
            elif state == CHUNK_END:
                if len(self._buf) < 2:
                    return None
                if self._buf[:2] != b"\r\n":
                    raise Malformed("a chunk longer than its size")
                del self._buf[:2]
                self._state = CHUNK_SIZE
            elif state == TRAILER:
                line = self._line(b"\r\n", MAX_HEAD)
                if line is None:
                    return None
                if not line:  # the empty line that ends the trailers
                    body = b"".join(self._parts)
                    self._parts = []
                    return self._done(body)
            else:  # UNTIL_CLOSE: only eof ends it
                return None

    def _line(self, marker: bytes, most: int) -> bytes | None:
        """The bytes up to ``marker``, taken off the buffer; None while it has not come."""
        buf = self._buf
        at = buf.find(marker, max(0, self._scanned - len(marker) + 1))
        if at < 0:
            if len(buf) > most:
                raise Malformed(f"no {marker!r} within {most} bytes")
            self._scanned = len(buf)
            return None
        self._scanned = 0
        line = bytes(buf[:at])
        del buf[: at + len(marker)]
        return line

    def _head_bytes(self) -> bytes | None:
        """The head up to the empty line that ends it (CRLF or a bare LF, each line's and its own), taken off
        the buffer; None while it has not come. 1xx replies skipped before the answer count to the bound."""
        buf = self._buf
        start = max(0, self._scanned - 2)
        crlf = buf.find(b"\n\r\n", start)
        lf = buf.find(b"\n\n", start, crlf + 1 if crlf >= 0 else len(buf))  # only an earlier end counts
        if lf < 0 and crlf < 0:
            if len(buf) + self._interim > MAX_HEAD:
                raise Malformed(f"no end of the head within {MAX_HEAD} bytes")
            self._scanned = len(buf)
            return None
        at, end = (lf, lf + 2) if lf >= 0 else (crlf, crlf + 3)
        self._interim += end
        if self._interim > MAX_HEAD:
            raise Malformed(f"no end of the head within {MAX_HEAD} bytes")
        self._scanned = 0
        head = bytes(buf[:at])
        del buf[:end]
        return head

    def _head(self, head: bytes) -> None:
        # A bare LF ends a line too (RFC 9112 2.2 allows it, and h11 does so): split on CRLF alone, a header
        # after one would be read as part of the line before it.
        lines = [line.rstrip("\r") for line in head.decode("latin-1").split("\n")]
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or len(code) != 3 or not (code.isascii() and code.isdigit()):
            raise Malformed(f"malformed HTTP status line {lines[0][:80]!r}")
        self._status = int(code)
        if code[0] == "1":
            # An interim reply (100 Continue, 103 Early Hints): no body, and the answer follows. 101 would
            # switch protocols, which no request here asks for.
            if code == "101":
                raise Malformed("101 Switching Protocols, never asked for")
            return
        self._interim = 0
        headers = {}
        lengths: set[str] = set()
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            headers[name] = value.strip()
            if name == "content-length":  # "5, 5" is one length said twice (RFC 9110 8.6)
                lengths.update(part.strip() for part in value.split(","))
        if len(lengths) > 1:
            raise Malformed(f"Content-Lengths that disagree: {', '.join(sorted(lengths))[:80]}")
        self._close = headers.get("connection", "").lower() == "close"
        if code in ("204", "304"):
            # No body whatever the headers say (RFC 9112 6.3): read until close, the call would wait for its
            # timeout; the next bytes are the next reply's.
            self._state, self._left = LENGTH, 0
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            self._state, self._body = CHUNK_SIZE, 0
        elif lengths:
            length = lengths.pop()
            if not (length.isascii() and length.isdigit() and len(length) <= 15):
                raise Malformed(f"bad Content-Length {length[:40]!r}")
            self._left = int(length)
            if self._left > self._most:
                raise Malformed(f"a reply of {self._left} bytes, past the bound of {self._most}")
            self._state = LENGTH
        else:
            self._state = UNTIL_CLOSE
            if len(self._buf) > self._most:
                raise Malformed(f"a reply read until close past {self._most} bytes")

    def _chunk_size(self, line: bytes) -> None:
        size = line.split(b";")[0].strip()
        if not size or len(size) > 15 or size.strip(b"0123456789abcdefABCDEF"):
            raise Malformed(f"bad chunk size {size[:40]!r}")
        n = int(size, 16)
        if n == 0:
            self._state = TRAILER
            return
        self._body += n
        if self._body > self._most:
            raise Malformed(f"a chunked reply past the bound of {self._most} bytes")
        self._left = n
        self._state = CHUNK_DATA

    def _done(self, body: bytes) -> Reply:
        self._state = HEAD
        return Reply(self._status, body, self._close)
