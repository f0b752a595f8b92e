"""``problems(record)`` of both record types, and its agreement with what a write refuses (decision 9).

Two paths must agree: ``checked`` refuses a record exactly when ``write_problems`` names something, every
record it accepts decodes again from its own bytes, and ``problems`` (for a check of the whole store)
names everything ``write_problems`` does and more.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import record as gpu
from resource_extend.gpu.record import GpuRecord
from resource_extend.storage import record as storage
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord

INT64_MAX = 2**63 - 1
numbers = st.integers(-3, 3) | st.integers(INT64_MAX - 1, INT64_MAX + 2) | st.integers(-(2**63) - 2, -(2**63) + 1)
names = st.sampled_from(["a", "b", " "])
counts = st.none() | st.dictionaries(names, numbers, max_size=3)


@given(capacity=counts, usage=counts)
def test_gpu_checked_refuses_exactly_what_write_problems_names(
    capacity: dict[str, int] | None, usage: dict[str, int] | None
) -> None:
    record = GpuRecord(capacity, usage)
    records = GpuRecord
    found = gpu.write_problems(record)
    assert set(found) <= set(gpu.problems(record))
    if found:
        with pytest.raises(PluginError):
            records.checked(record)
    else:
        assert records.decode(records.encode(records.checked(record))) == record


def _resource(volumes: dict[str, int] | None, storage_: int, quota: tuple[int, int, int, int] | None) -> NodeResource:
    disks = None if quota is None else [Disk("/dev/a", ["/a"], *quota)]
    return NodeResource(volumes, disks, storage_)


resources = st.builds(
    _resource,
    st.none() | st.dictionaries(st.sampled_from(["/a", "/b"]), numbers, max_size=2),
    numbers,
    st.none() | st.tuples(numbers, numbers, numbers, numbers),
)


@given(capacity=resources, usage=st.none() | resources)
def test_storage_checked_refuses_exactly_what_write_problems_names(
    capacity: NodeResource, usage: NodeResource | None
) -> None:
    record = StorageRecord(capacity, usage)
    records = StorageRecord
    found = storage.write_problems(record)
    assert set(found) <= set(storage.problems(record))
    if found:
        with pytest.raises(PluginError):
            records.checked(record)
    else:
        stored = records.checked(record)
        assert records.decode(records.encode(stored)).to_json() == stored.to_json()


@pytest.mark.parametrize(
    ("capacity", "usage", "wanted"),
    [
        ({"a": 2**63}, {}, ["capacity.prod_count_map['a'] would be 9223372036854775808, past int64"]),
        ({"a": 0}, {}, ["invalid capacity: count is less than or equal to zero"]),
        ({"a": 1}, {"a": -1}, ["invalid usage: count is less than or equal to zero"]),
        ({"a": 1}, {"a": 2}, ["usage.prod_count_map['a'] is 2, above its capacity 1"]),
        ({"a": 1}, {"b": 1}, ["usage.prod_count_map['b'] is 1 on a product the capacity lacks"]),
        ({"a": 2}, {"a": 2}, []),
    ],
)
def test_gpu_problems_name_each_kind(capacity: dict[str, int], usage: dict[str, int], wanted: list[str]) -> None:
    found = gpu.problems(GpuRecord(capacity, usage))
    assert len(found) == len(wanted), found
    for problem, text in zip(found, wanted):
        assert text in problem


def _storage(capacity: dict[str, Any], usage: dict[str, Any]) -> StorageRecord:
    return StorageRecord.from_json({"capacity": capacity, "usage": usage})


@pytest.mark.parametrize(
    ("capacity", "usage", "wanted"),
    [
        ({"volumes": {"/a": -1}, "storage": 0}, {}, ["volume size should not be less than 0"]),
        ({"storage": -1}, {}, ["storage capacity can't be negative"]),
        ({"volumes": {"/a": 1}}, {"volumes": {"/a": 2}}, ["invalid size in usage: /a uses 2 of 1"]),
        ({"storage": 1}, {"storage": 2}, ["usage.storage is 2, above its capacity 1"]),
        ({"storage": 1}, {"volumes": {"/b": 1}}, ["usage.volumes['/b'] is 1 on a device the capacity lacks"]),
        (
            {"disks": [{"device": "/dev/a", "read_IOPS": 1}]},
            {"disks": [{"device": "/dev/a", "read_IOPS": 2}]},
            ["disk IOPS / BPS usage can't be greater than capacity"],
        ),
        ({}, {"disks": [{"device": "/dev/x", "read_IOPS": 1}]}, ["disk /dev/x not found in capacity"]),
        ({"volumes": {"/a": 2}, "storage": 2}, {"volumes": {"/a": 1}, "storage": 1}, []),
    ],
)
def test_storage_problems_name_each_kind(capacity: dict[str, Any], usage: dict[str, Any], wanted: list[str]) -> None:
    found = storage.problems(_storage(capacity, usage))
    assert len(found) == len(wanted), found
    for problem, text in zip(found, wanted):
        assert text in problem


def test_storage_problems_name_numbers_past_int64_on_every_field() -> None:
    big = 2**63
    side = NodeResource({"/a": big}, [Disk("/dev/a", None, big, 0, 0, -big - 1)], big)
    found = storage.problems(StorageRecord(side, NodeResource({}, [], 0)))
    for where in ("capacity.volumes['/a']", "capacity.storage", "read_IOPS", "write_bps"):
        assert any(where in problem and "past int64" in problem for problem in found), (where, found)


def test_each_plugins_record_type_offers_problems() -> None:
    # A check of the whole store can go through the plugin's table: plugin.record.problems(record).
    from resource_extend.gpu.verbs import PLUGIN as GPU
    from resource_extend.storage.verbs import PLUGIN as STORAGE

    assert GPU.record.problems(GpuRecord({"a": 1}, {"a": 2}))
    assert STORAGE.record.problems(_storage({"storage": 1}, {"storage": 2}))
    assert GPU.record.problems(GPU.record.decode(b'{"capacity":{"prod_count_map":{"a":1}}}')) == []
