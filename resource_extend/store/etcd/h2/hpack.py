"""HPACK (RFC 7541) decoding, for client.py: the header blocks of etcd's gRPC answers.

etcd's gRPC server (grpc-go) indexes header fields and Huffman-codes their text, so a reader of its
``:status`` and ``grpc-status`` must keep the dynamic table and decode Huffman text like any HTTP/2
client. Everything is decoded (a field skipped would leave the table out of step with the server's),
bounded (``MAX_TABLE``: the table size this client allows), and any byte that breaks the RFC raises a
``ValueError``. Imported by bulk reads over h2/ only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    Field = tuple[bytes, bytes]

# The dynamic table size this client allows the server (HTTP/2's default SETTINGS_HEADER_TABLE_SIZE, which
# client.py never raises): a size update above it is an error.
MAX_TABLE = 4096

# RFC 7541 Appendix A.
STATIC: tuple[Field, ...] = (
    (b"", b""),  # index 0 is not a field
    (b":authority", b""), (b":method", b"GET"), (b":method", b"POST"), (b":path", b"/"),
    (b":path", b"/index.html"), (b":scheme", b"http"), (b":scheme", b"https"), (b":status", b"200"),
    (b":status", b"204"), (b":status", b"206"), (b":status", b"304"), (b":status", b"400"),
    (b":status", b"404"), (b":status", b"500"), (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"), (b"accept-language", b""), (b"accept-ranges", b""),
    (b"accept", b""), (b"access-control-allow-origin", b""), (b"age", b""), (b"allow", b""),
    (b"authorization", b""), (b"cache-control", b""), (b"content-disposition", b""),
    (b"content-encoding", b""), (b"content-language", b""), (b"content-length", b""),
    (b"content-location", b""), (b"content-range", b""), (b"content-type", b""), (b"cookie", b""),
    (b"date", b""), (b"etag", b""), (b"expect", b""), (b"expires", b""), (b"from", b""), (b"host", b""),
    (b"if-match", b""), (b"if-modified-since", b""), (b"if-none-match", b""), (b"if-range", b""),
    (b"if-unmodified-since", b""), (b"last-modified", b""), (b"link", b""), (b"location", b""),
    (b"max-forwards", b""), (b"proxy-authenticate", b""), (b"proxy-authorization", b""), (b"range", b""),
    (b"referer", b""), (b"refresh", b""), (b"retry-after", b""), (b"server", b""), (b"set-cookie", b""),
    (b"strict-transport-security", b""), (b"transfer-encoding", b""), (b"user-agent", b""), (b"vary", b""),
    (b"via", b""), (b"www-authenticate", b""),
)  # fmt: skip

# RFC 7541 Appendix B's Huffman code, written down as the canonical code it is: the 256 octets in the order
# of their codes (shortest first, then by value; EOS, the 257th symbol, comes last) and how many codes
# there are of each length from 5 bits to 30 (EOS included). The codes follow: each is the previous one
# plus one, shifted left by the growth in length (tests/unit/store/etcd/h2/test_hpack.py checks every code
# against the hpack package's copy of the table).
HUFFMAN_ORDER = (
    b"012aceiost %-./3456789=A_bdfghlmnpru:BCDEFGHIJKLMNOPQRSTUVWYjkqvwxyz&*,;XZ!\"()?'+|#>\x00$@[]~^}<`{\\"
    b"\xc3\xd0\x80\x82\x83\xa2\xb8\xc2\xe0\xe2\x99\xa1\xa7\xac\xb0\xb1\xb3\xd1\xd8\xd9\xe3\xe5\xe6\x81\x84\x85"
    b"\x86\x88\x92\x9a\x9c\xa0\xa3\xa4\xa9\xaa\xad\xb2\xb5\xb9\xba\xbb\xbd\xbe\xc4\xc6\xe4\xe8\xe9\x01\x87\x89"
    b"\x8a\x8b\x8c\x8d\x8f\x93\x95\x96\x97\x98\x9b\x9d\x9e\xa5\xa6\xa8\xae\xaf\xb4\xb6\xb7\xbc\xbf\xc5\xe7\xef"
    b"\t\x8e\x90\x91\x94\x9f\xab\xce\xd7\xe1\xec\xed\xc7\xcf\xea\xeb\xc0\xc1\xc8\xc9\xca\xcd\xd2\xd5\xda\xdb"
    b"\xee\xf0\xf2\xf3\xff\xcb\xcc\xd3\xd4\xd6\xdd\xde\xdf\xf1\xf4\xf5\xf6\xf7\xf8\xfa\xfb\xfc\xfd\xfe\x02\x03"
    b"\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f\xdc"
    b"\xf9\n\r\x16"
)
# Codes of 5, 6, ... 30 bits.
HUFFMAN_COUNTS = (10, 26, 32, 6, 0, 5, 3, 2, 6, 2, 3, 0, 0, 0, 3, 8, 13, 26, 29, 12, 4, 15, 19, 29, 0, 4)


def _limits() -> tuple[tuple[int, int, int], ...]:
    """Per code length in use: (length, the first 30-bit window past its codes, the index in HUFFMAN_ORDER
    of the symbol of code c of this length minus c). A window below a length's limit (and at or above the
    shorter lengths') starts with a code of that length."""
    found = []
    code = at = 0
    for length, count in enumerate(HUFFMAN_COUNTS, 5):
        if count:
            found.append((length, (code + count) << (30 - length), at - code))
        code = (code + count) << 1
        at += count
    return tuple(found)


_LIMITS = _limits()


def huffman(data: bytes) -> bytes:
    """Huffman-coded text decoded (RFC 7541 5.2): a ValueError for EOS in it, or padding longer than 7 bits
    or not all ones."""
    out = bytearray()
    acc = bits = i = 0
    size = len(data)
    while True:
        while bits < 30 and i < size:
            acc = (acc << 8) | data[i]
            bits += 8
            i += 1
        if not bits:
            return bytes(out)
        # The next 30 bits, ones past the end (EOS's prefix, which only padding may be).
        window = acc >> (bits - 30) if bits >= 30 else (acc << (30 - bits)) | ((1 << (30 - bits)) - 1)
        for code in _LIMITS:
            if window < code[1]:
                break
        length, _, base = code
        if length > bits:  # what is left is padding
            if bits > 7 or acc != (1 << bits) - 1:
                raise ValueError("bad Huffman padding")
            return bytes(out)
        at = base + (window >> (30 - length))
        if at >= 256:
            raise ValueError("EOS in Huffman text")
        out.append(HUFFMAN_ORDER[at])
        bits -= length
        acc &= (1 << bits) - 1


def integer(data: bytes, i: int, prefix: int) -> tuple[int, int]:
    """An integer with a ``prefix``-bit prefix at ``data[i]`` (RFC 7541 5.1), and the index past it."""
    mask = (1 << prefix) - 1
    value = data[i] & mask
    i += 1
    if value < mask:
        return value, i
    shift = 0
    while True:
        if i >= len(data) or shift > 28:  # past the end, or beyond 2**35: no size here is that big
            raise ValueError("bad HPACK integer")
        byte = data[i]
        i += 1
        value += (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def string(data: bytes, i: int) -> tuple[bytes, int]:
    if i >= len(data):
        raise ValueError("HPACK string past the block's end")
    coded = data[i] & 0x80
    length, i = integer(data, i, 7)
    end = i + length
    if end > len(data):
        raise ValueError("HPACK string past the block's end")
    text = data[i:end]
    return (huffman(text) if coded else bytes(text)), end


class Decoder:
    """One connection's HPACK decoding context: the dynamic table, newest field first."""

    __slots__ = ("_max", "_size", "_table")

    def __init__(self) -> None:
        self._table: list[Field] = []
        self._size = 0
        self._max = MAX_TABLE

    def decode(self, block: bytes) -> list[Field]:
        """The fields of a whole header block, in order."""
        fields: list[Field] = []
        i, size = 0, len(block)
        while i < size:
            byte = block[i]
            if byte & 0x80:  # indexed field
                index, i = integer(block, i, 7)
                fields.append(self._field(index))
                continue
            if byte & 0xE0 == 0x20:  # dynamic table size update, only before the block's first field
                limit, i = integer(block, i, 5)
                if fields or limit > MAX_TABLE:
                    raise ValueError("bad HPACK table size update")
                self._max = limit
                self._evict(0)
                continue
            indexing = byte & 0x40
            index, i = integer(block, i, 6 if indexing else 4)  # with incremental indexing; or without, never
            if index:
                name = self._field(index)[0]
            else:
                name, i = string(block, i)
            value, i = string(block, i)
            fields.append((name, value))
            if indexing:
                self._add(name, value)
        return fields

    def _field(self, index: int) -> Field:
        if 0 < index < len(STATIC):
            return STATIC[index]
        at = index - len(STATIC)
        if index == 0 or at >= len(self._table):
            raise ValueError(f"HPACK index {index} not in the table")
        return self._table[at]

    def _add(self, name: bytes, value: bytes) -> None:
        size = len(name) + len(value) + 32
        self._evict(size)
        if size <= self._max:  # a field larger than the table empties it and is not added (RFC 7541 4.4)
            self._table.insert(0, (name, value))
            self._size += size

    def _evict(self, room: int) -> None:
        table = self._table
        while table and self._size + room > self._max:
            name, value = table.pop()
            self._size -= len(name) + len(value) + 32
