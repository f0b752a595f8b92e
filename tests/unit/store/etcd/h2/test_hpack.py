"""HPACK decoding (etcd/h2/hpack.py) against the hpack package's encoder and tables: the static table, the
Huffman code written down as data, and blocks that use the dynamic table as grpc-go does."""

from __future__ import annotations

import pytest
from hpack import Encoder
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
from hpack.table import HeaderTable
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.store.etcd.h2 import hpack as headerblock
from resource_extend.store.etcd.h2.hpack import Decoder, huffman

HUFFMAN = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)


def test_the_static_table_is_rfc_7541s() -> None:
    assert headerblock.STATIC[1:] == HeaderTable.STATIC_TABLE


def test_the_canonical_huffman_data_gives_every_code_of_appendix_b() -> None:
    # Rebuild each symbol's code from the order and the counts per length, as the decoder reads them.
    assert sorted(headerblock.HUFFMAN_ORDER) == list(range(256))
    codes: dict[int, tuple[int, int]] = {}
    code = at = 0
    for length, count in enumerate(headerblock.HUFFMAN_COUNTS, 5):
        for _ in range(count):
            symbol = headerblock.HUFFMAN_ORDER[at] if at < 256 else 256  # EOS last
            codes[symbol] = (code, length)
            code += 1
            at += 1
        code <<= 1
    assert codes == {s: (REQUEST_CODES[s], REQUEST_CODES_LENGTH[s]) for s in range(257)}


@given(st.binary(max_size=300))
def test_huffman_text_decodes_to_what_was_coded(text: bytes) -> None:
    assert huffman(HUFFMAN.encode(text)) == text


@pytest.mark.parametrize(
    "coded",
    [
        b"\xff\xff\xff\xff",  # EOS (30 ones) and two more: EOS inside the text
        b"\x00",  # "0" (00000) and padding 000: not ones
        HUFFMAN.encode(b"a") + b"\xff",  # padding of more than 7 bits
    ],
)
def test_bad_huffman_text_is_a_value_error(coded: bytes) -> None:
    with pytest.raises(ValueError):
        huffman(coded)


HEADER_NAMES = st.sampled_from([b"grpc-status", b"grpc-message", b"content-type", b":status", b"x-a", b"x-b"])
HEADERS = st.lists(st.tuples(st.one_of(HEADER_NAMES, st.binary(min_size=1, max_size=40)), st.binary(max_size=80)))


@given(
    st.lists(st.tuples(HEADERS, st.booleans(), st.sampled_from([None, 0, 64, 256, 4096]))),
    st.booleans(),
)
def test_blocks_coded_by_hpack_decode_to_their_fields(
    blocks: list[tuple[list[tuple[bytes, bytes]], bool, int | None]], sensitive: bool
) -> None:
    # One encoder and one decoder across the blocks, as on one connection: later blocks refer to fields the
    # earlier ones indexed, table size updates evict, Huffman on and off, never-indexed literals.
    encoder, decoder = Encoder(), Decoder()
    for fields, coded, size in blocks:
        if size is not None:
            encoder.header_table_size = size
        if sensitive:
            from hpack import NeverIndexedHeaderTuple

            sent = [NeverIndexedHeaderTuple(n, v) if i % 2 else (n, v) for i, (n, v) in enumerate(fields)]
        else:
            sent = list(fields)
        assert decoder.decode(encoder.encode(sent, huffman=coded)) == fields


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_a_value_error(block: bytes) -> None:
    try:
        decoded = Decoder().decode(block)
    except ValueError:
        return
    assert all(isinstance(name, bytes) and isinstance(value, bytes) for name, value in decoded)


@pytest.mark.parametrize(
    "block",
    [
        b"\x80",  # index 0
        b"\xbe",  # index 62: the dynamic table is empty
        b"\x3f\xe2\x1f",  # a size update to 4097, above what this client allows
        b"\x88\x20",  # a size update after a field
        b"\x40\x05ab",  # a name longer than the block
        b"\xff\xff\xff\xff\xff\xff\xff",  # an integer without end
    ],
)
def test_malformed_blocks_are_value_errors(block: bytes) -> None:
    with pytest.raises(ValueError):
        Decoder().decode(block)


def test_the_dynamic_table_evicts_the_oldest_field_beyond_its_size() -> None:
    # Each field takes 1 + 2000 + 32 bytes of the 4096: two fit, a third evicts the first.
    decoder = Decoder()
    big = b"v" * 2000
    length = bytes((0x7F, (2000 - 127) & 0x7F | 0x80, (2000 - 127) >> 7))  # 2000, a 7-bit prefix continued
    decoder.decode(b"\x40\x01a" + length + big)  # (a, v*2000) with incremental indexing
    decoder.decode(b"\x40\x01b" + length + big)
    assert decoder.decode(b"\xbe\xbf") == [(b"b", big), (b"a", big)]  # indices 62 and 63, newest first
    decoder.decode(b"\x40\x01c" + length + big)
    assert decoder.decode(b"\xbe\xbf") == [(b"c", big), (b"b", big)]
    with pytest.raises(ValueError):
        decoder.decode(b"\xc0")  # index 64: a is gone
