"""Records decode the same through the fast path for stored ints as through the field readers alone.

A stored record's numbers are plain int64s, so the decoders take a whole map or quota at once when
``decoding.plain_int64s`` says so; anything else (a float, a bool, null, a string, a number past int64)
must go the field readers' way and decode, or fail, exactly as before. Each test decodes the same
document twice, once with the fast path switched off, and compares the outcome.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend import decoding
from resource_extend.decoding import INT64_MAX, INT64_MIN, plain_int64s
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.record import GpuRecord
from resource_extend.storage.record import StorageRecord

# Numbers as they may stand in a record some other writer stored: mostly plain, some not.
numbers: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=INT64_MIN, max_value=INT64_MAX),
    st.integers(min_value=INT64_MAX - 2, max_value=INT64_MAX + 2)
    | st.integers(max_value=INT64_MIN + 2, min_value=INT64_MIN - 2),
    st.sampled_from([3.0, 1e3, 1.5, float(2**63), True, False, None, "7", [], {}]),
)
plain = st.integers(min_value=0, max_value=1 << 41)
devices = st.sampled_from(["/data0", "/data1", "/dev/vdb", ""])


def resources(number: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    disk = st.fixed_dictionaries(
        {"device": devices | st.none(), "mounts": st.none() | st.lists(devices | st.none(), max_size=3)},
        optional={name: number for name in ("read_IOPS", "write_IOPS", "read_bps", "write_bps")},
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "volumes": st.none() | st.dictionaries(devices, number, max_size=4),
            "disks": st.none() | st.lists(disk, max_size=3),
            "storage": number,
        },
    )


def storage_docs(number: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"capacity": resources(number)}, optional={"usage": st.none() | resources(number)})


def outcome(decode: Callable[[], Any]) -> object:
    try:
        return decode().to_json()
    except PluginError as error:
        return ("refused", str(error))


def without_fast_path(monkeypatch: pytest.MonkeyPatch, decode: Callable[[], Any]) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(decoding, "plain_int64s", lambda values: False)
        patched.setattr(prodmap, "plain_int64s", lambda values: False)
        return outcome(decode)


@given(values=st.lists(numbers, max_size=6))
def test_plain_int64s_holds_exactly_for_ints_a_field_reader_returns_unchanged(values: list[Any]) -> None:
    unchanged = all(type(value) is int and INT64_MIN <= value <= INT64_MAX for value in values)
    assert plain_int64s(values) is unchanged
    assert plain_int64s(dict(enumerate(values)).values()) is unchanged


@given(doc=storage_docs(numbers) | storage_docs(plain))
def test_storage_record_decodes_alike_with_and_without_the_fast_path(doc: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(lambda: StorageRecord.from_json(doc)) == without_fast_path(
            monkeypatch, lambda: StorageRecord.from_json(doc)
        )


@given(
    doc=st.fixed_dictionaries(
        {},
        optional={
            side: st.none()
            | st.fixed_dictionaries(
                {"prod_count_map": st.none() | st.dictionaries(st.text(max_size=3), numbers, max_size=4)}
            )
            for side in ("capacity", "usage")
        },
    )
)
def test_gpu_record_decodes_alike_with_and_without_the_fast_path(doc: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(lambda: GpuRecord.from_json(doc)) == without_fast_path(
            monkeypatch, lambda: GpuRecord.from_json(doc)
        )


def test_a_float_quota_still_reads_as_go_reads_it_and_a_bool_is_still_refused() -> None:
    disk = {
        "device": "/dev/vdb",
        "mounts": ["/data0"],
        "read_IOPS": 3.0,
        "write_IOPS": 1,
        "read_bps": 2,
        "write_bps": 4,
    }
    record = StorageRecord.from_json({"capacity": {"disks": [disk]}})
    assert record.capacity is not None and record.capacity.disks is not None
    assert tuple(record.capacity.disks[0].quota) == (3, 1, 2, 4)
    with pytest.raises(PluginError, match="cannot unmarshal bool"):
        StorageRecord.from_json({"capacity": {"disks": [{**disk, "read_IOPS": True}]}})
