"""etcd's ``KV/Range`` on the wire, for client.py: a ``RangeRequest`` coded as protobuf, a ``RangeResponse`` read.

Only the fields a span read needs are written (key, range_end, the pinned revision) and read (the
records' key, value and mod_revision; the header's revision); every other field is skipped by its wire
type, as protobuf does. A message that breaks protobuf's encoding raises a ``ValueError``. gRPC frames
each message with a flag byte (compressed: never asked for, so refused) and a 4-byte length.
Imported by bulk reads over h2/ only; tests/unit/store/etcd/h2/test_protobuf.py holds it to the generated code.
"""

from __future__ import annotations

PATH = "/etcdserverpb.KV/Range"


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # an int64 below zero is its two's complement, ten bytes
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def range_request(key: bytes, range_end: bytes, revision: int) -> bytes:
    """A ``RangeRequest`` for the keys in [key, range_end) at ``revision`` (0: the latest), gRPC-framed."""
    message = b"\n" + _varint(len(key)) + key + b"\x12" + _varint(len(range_end)) + range_end
    if revision:
        message += b" " + _varint(revision)  # field 4, varint
    return b"\0" + len(message).to_bytes(4, "big") + message


def unframe(data: bytes) -> bytes:
    """The one message of a unary gRPC answer's DATA."""
    if len(data) < 5 or data[0] != 0 or int.from_bytes(data[1:5], "big") != len(data) - 5:
        raise ValueError("not one uncompressed gRPC message")
    return data[5:]


def _more(data: bytes, i: int, value: int) -> tuple[int, int]:
    """The rest of a varint whose first byte ``value`` (>= 0x80) was read, and the index past it."""
    value &= 0x7F
    shift = 7
    while True:
        if shift > 63 or i >= len(data):
            raise ValueError("bad varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value >> 64:
                raise ValueError("varint beyond 64 bits")
            return value, i
        shift += 7


def _skip(data: bytes, i: int, tag: int, end: int) -> int:
    """The index past the value of a field not read, by its wire type."""
    kind = tag & 7
    if kind == 0:
        byte = data[i]
        return i + 1 if byte < 0x80 else _more(data, i + 1, byte)[1]
    if kind == 1:
        i += 8
    elif kind == 5:
        i += 4
    elif kind == 2:
        length = data[i]
        i += 1
        if length >= 0x80:
            length, i = _more(data, i, length)
        i += length
    else:
        raise ValueError(f"wire type {kind}")
    if i > end:
        raise ValueError("a field past its message's end")
    return i


def _signed(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


def range_response(data: bytes) -> tuple[int, list[tuple[bytes, bytes, int]]]:
    """A ``RangeResponse``'s header revision and its records as (key, value, mod_revision), in its order.

    The loop over records runs once per node of a bulk read: its common fields are read inline, with a
    varint of one byte (a length under 128) taken without a call."""
    records: list[tuple[bytes, bytes, int]] = []
    revision = more = count = 0
    i, size = 0, len(data)
    try:
        while i < size:
            tag = data[i]
            i += 1
            if tag >= 0x80:
                tag, i = _more(data, i, tag)
            if tag == 0x12 or tag == 0x0A:  # kvs (2) or header (1): a message
                length = data[i]
                i += 1
                if length >= 0x80:
                    length, i = _more(data, i, length)
                end = i + length
                if end > size:
                    raise ValueError("a record past the answer's end")
                if tag == 0x0A:
                    revision = _header_revision(data, i, end)
                    i = end
                    continue
                key = value = b""
                mod = 0
                while i < end:
                    tag = data[i]
                    i += 1
                    if tag >= 0x80:  # a tag in more bytes than it needs: legal protobuf, read as the same field
                        tag, i = _more(data, i, tag)
                    if tag == 0x0A or tag == 0x2A:  # key (1), value (5)
                        length = data[i]
                        i += 1
                        if length >= 0x80:
                            length, i = _more(data, i, length)
                        stop = i + length
                        if stop > end:
                            raise ValueError("a field past its record's end")
                        if tag == 0x0A:
                            key = data[i:stop]
                        else:
                            value = data[i:stop]
                        i = stop
                    elif tag == 0x18:  # mod_revision (3): two bytes up to revision 16383
                        mod = data[i]
                        i += 1
                        if mod >= 0x80:
                            if data[i] < 0x80:
                                mod = (mod & 0x7F) | data[i] << 7
                                i += 1
                            else:
                                mod, i = _more(data, i, mod)
                                mod = _signed(mod)
                    elif tag == 0x10 or tag == 0x20 or tag == 0x30:  # create_revision, version, lease: skipped
                        start = i
                        while data[i] >= 0x80:
                            i += 1
                        i += 1
                        if i - start > 10:
                            raise ValueError("a varint beyond 10 bytes")
                    else:
                        if not tag >> 3:
                            raise ValueError("field number 0")
                        i = _skip(data, i, tag, end)
                if i != end:
                    raise ValueError("a record's fields past its end")
                records.append((key, value, mod))
            elif tag == 0x18 or tag == 0x20:  # more (3), count (4): varints checked against the records
                number = data[i]
                i += 1
                if number >= 0x80:
                    number, i = _more(data, i, number)
                if tag == 0x18:
                    more = number
                else:
                    count = number
            else:
                if not tag >> 3:
                    raise ValueError("field number 0")
                i = _skip(data, i, tag, size)
    except IndexError:
        raise ValueError("a RangeResponse cut short") from None
    # Asked without a limit, etcd answers every key of the range: `more` never set, `count` the records'.
    if more or count != len(records):
        raise ValueError(f"{len(records)} records answered of {count} counted (more: {more})")
    return revision, records


def _header_revision(data: bytes, i: int, end: int) -> int:
    revision = 0
    while i < end:
        tag = data[i]
        i += 1
        if tag >= 0x80:
            tag, i = _more(data, i, tag)
        if tag == 0x18:  # revision (3)
            revision, i = _more(data, i + 1, data[i]) if data[i] >= 0x80 else (data[i], i + 1)
            revision = _signed(revision)
        elif not tag >> 3:
            raise ValueError("field number 0")
        else:
            i = _skip(data, i, tag, end)
    if i != end:
        raise ValueError("the header's fields past its end")
    return revision
