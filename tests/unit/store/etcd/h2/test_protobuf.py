"""etcd/h2/protobuf.py against the generated protobuf code of etcd's API (etcd-sdk-python's ``pyetcd.etcdrpc``):
the RangeRequest it writes, and every RangeResponse the generated code writes read back field for field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyetcd.etcdrpc import kv_pb2, rpc_pb2

from resource_extend.store.etcd.h2 import protobuf

INT64 = st.one_of(st.integers(0, 300), st.integers(-(2**63), 2**63 - 1))


@given(st.binary(max_size=300), st.binary(max_size=300), st.integers(0, 2**63 - 1))
def test_the_range_request_is_what_the_generated_code_reads(key: bytes, end: bytes, revision: int) -> None:
    framed = protobuf.range_request(key, end, revision)
    request = rpc_pb2.RangeRequest.FromString(protobuf.unframe(framed))
    assert (request.key, request.range_end, request.revision) == (key, end, revision)
    assert request.limit == 0 and not request.count_only and not request.keys_only


RECORD = st.fixed_dictionaries(
    {
        "key": st.binary(max_size=200),
        "create_revision": INT64,
        "mod_revision": INT64,
        "version": INT64,
        "value": st.one_of(st.binary(max_size=200), st.binary(min_size=16384, max_size=20000)),
        "lease": INT64,
    }
)


@given(st.lists(RECORD, max_size=20), INT64, st.booleans(), INT64, st.integers(0, 2**64 - 1))
def test_a_range_response_reads_as_the_generated_code_wrote_it(
    records: list[dict[str, object]], revision: int, more: bool, count: int, member: int
) -> None:
    message = rpc_pb2.RangeResponse(more=more, count=count)
    message.header.revision = revision
    message.header.member_id = member
    message.header.raft_term = 7
    for record in records:
        message.kvs.add(**record)
    if more or count != len(records):  # etcd, asked without a limit, answers every record it counts
        with pytest.raises(ValueError, match="records answered of"):
            protobuf.range_response(message.SerializeToString())
        message.more, message.count = False, len(records)
    found = protobuf.range_response(message.SerializeToString())
    assert found == (revision, [(r["key"], r["value"], r["mod_revision"]) for r in records])


def test_a_record_whose_field_tags_take_more_bytes_than_they_need_reads_as_the_generated_code_reads_it() -> None:
    # Legal protobuf: a tag is a varint, which may be written with a redundant continuation byte.
    record = b"\x8a\x00\x01k" + b"\xaa\x00\x01w" + b"\x98\x00\x07"  # key (1), value (5), mod_revision (3)
    data = b"\x12" + bytes((len(record),)) + record + b"\x20\x01"  # and count (4) 1
    message = rpc_pb2.RangeResponse.FromString(data)
    assert [(kv.key, kv.value, kv.mod_revision) for kv in message.kvs] == [(b"k", b"w", 7)]
    assert protobuf.range_response(data) == (0, [(b"k", b"w", 7)])


def test_unknown_fields_of_every_wire_type_are_skipped() -> None:
    record = kv_pb2.KeyValue(key=b"k", value=b"v", mod_revision=300).SerializeToString()
    # fields 9 (varint), 10 (fixed64), 11 (bytes), 12 (fixed32), before the record's own
    unknown = b"\x48\x96\x01" + b"\x51" + bytes(8) + b"\x5a\x02ab" + b"\x65" + bytes(4)
    wrapped = unknown + b"\x12" + bytes((len(unknown + record),)) + unknown + record + b"\x20\x01"
    assert protobuf.range_response(wrapped) == (0, [(b"k", b"v", 300)])


@pytest.mark.parametrize(
    "data",
    [
        b"\x12\x05\x0a\x03ab",  # a record cut short
        b"\x12\x03\x0a\x05abcde",  # a field past its record's end
        b"\x12\x02\x0b\x00",  # wire type 3 (a group)
        b"\x00\x00",  # field number 0
        b"\x12\x02\x18",  # a varint cut short
        b"\x12\x0b\x18" + b"\xff" * 10,  # a varint beyond ten bytes
        b"\x12\x0c\x10" + b"\xff" * 10 + b"\x01",  # a skipped varint beyond ten bytes
        b"\x12",  # a length missing
    ],
)
def test_malformed_responses_are_value_errors(data: bytes) -> None:
    with pytest.raises(ValueError):
        protobuf.range_response(data)


@given(st.binary(max_size=300))
def test_any_bytes_read_or_raise_a_value_error(data: bytes) -> None:
    try:
        revision, records = protobuf.range_response(data)
    except ValueError:
        return
    assert isinstance(revision, int) and all(len(record) == 3 for record in records)


@pytest.mark.parametrize(
    "data",
    [b"", b"\0\0\0\0", b"\1\0\0\0\0", b"\0\0\0\0\2a", b"\0\0\0\0\1ab"],  # short, compressed, a length not its own
)
def test_anything_but_one_uncompressed_message_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        protobuf.unframe(data)
