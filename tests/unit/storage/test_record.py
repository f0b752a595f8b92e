"""Storage records and node resources (storage/record.py) against the tables and examples of
spec/storage-types.md: decoding, validation, combine, usage recomputation, the stored bytes and ``problems``.

Two paths must agree (decision 9): ``checked`` refuses a record exactly when ``write_problems`` names
something, every record it accepts decodes again from its own bytes, and ``problems`` (for a check of the
whole store) names everything ``write_problems`` does and more. A stored record's numbers are plain int64s,
so decoding takes a whole map or quota at once when ``decoding.plain_int64s`` says so; a record decodes, or
fails, the same with that fast path switched off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.storage import record as storage
from resource_extend.storage.disk import Disk
from resource_extend.storage.node_request import NodeRequest
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.record import NodeResource, StorageRecord, combine, reconcile_usage
from resource_extend.storage.workload import WorkloadResource
from tests.support import INT64_EDGES, VDA, VDB, GiB, TiB, binding, capacity_of, disk, examples, without_fast_path
from tests.support import decode_outcome as outcome
from tests.support import record_numbers as numbers
from tests.support import storage_record as _storage

# §9 parsed node resources, §10 records -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [{"storage": "1T"}, {"storage": 1.5}, {"volumes": ["/d:1G"]}, {"volumes": {"/d": "1G"}}, {"disks": {}}, []]
)
def test_parsed_node_resource_is_decoded_strictly(value: Any) -> None:
    with pytest.raises(PluginError):
        NodeResource.from_json(value)


def test_parsed_node_resource_ignores_unknown_keys_and_keeps_absent_ones_null() -> None:
    resource = NodeResource.from_json({"storage": 3.0, "extra": "x", "Storage": 9})
    assert resource == NodeResource(None, None, 3)
    assert resource.to_json() == {"volumes": None, "disks": None, "storage": 3}


STORED = (
    '{"capacity":{"volumes":{"/data0":1099511627776,"/data1":1},"disks":[{"device":"/dev/vda",'
    '"mounts":["/","/data0"],"read_IOPS":1000,"write_IOPS":1000,"read_bps":1073741824,'
    '"write_bps":1073741824}],"storage":2199023255552},"usage":{"volumes":{"/data0":0},"disks":[],"storage":0}}'
)


@pytest.mark.parametrize(
    "text",
    [
        STORED,
        '{"capacity":{"volumes":{},"disks":[],"storage":0},"usage":{"volumes":{},"disks":[],"storage":0}}',
        '{"capacity":{"volumes":{"/a":1},"disks":null,"storage":1},"usage":{"volumes":null,"disks":[],"storage":0}}',
        '{"capacity":null,"usage":null}',
    ],
)
def test_stored_record_round_trips_byte_for_byte(text: str) -> None:
    record = StorageRecord.from_json(jsonio.loads_request(text.encode()))
    assert jsonio.dumps(record.to_json()) == text


def test_stored_record_writes_volume_keys_sorted() -> None:
    record = StorageRecord(NodeResource({"/b": 1, "/a": 2}), NodeResource())
    assert jsonio.dumps(record.to_json()).startswith('{"capacity":{"volumes":{"/a":2,"/b":1}')


def test_empty_record_shape() -> None:
    assert StorageRecord.empty().to_json() == {
        "capacity": {"volumes": {}, "disks": [], "storage": 0},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
    }


def test_node_resource_arithmetic_follows_the_reference_example() -> None:
    res = NodeResource({"/data0": 10}, [], 100)
    added = res.add(NodeResource({"/data1": 5}, None, 50))
    assert (added.storage, added.volumes) == (150, {"/data0": 10, "/data1": 5})
    back = added.sub(NodeResource({"/data1": 5}, None, 50)).without_empty_volumes()
    assert back.volumes == {"/data0": 10}
    assert res == NodeResource({"/data0": 10}, [], 100)
    clone = res.copy()
    assert clone.volumes is not None
    clone.volumes["/data0"] = 0
    assert res.volumes == {"/data0": 10}


def test_node_resource_copy_turns_missing_fields_empty_like_the_reference() -> None:
    assert NodeResource(None, None, 1).copy() == NodeResource({}, [], 1)
    assert NodeResource(None, None, 1).without_empty_volumes().volumes is None


def test_available_is_capacity_minus_usage() -> None:
    record = StorageRecord(
        NodeResource({"/d": 10}, [disk("/dev/a", ["/"], 10, 10, 10, 10)], 100),
        NodeResource({"/d": 4}, [disk("/dev/a", None, 1, 2, 3, 4)], 40),
    )
    assert record.available() == NodeResource({"/d": 6}, [disk("/dev/a", ["/"], 9, 8, 7, 6)], 60)


def capacity_example() -> NodeResource:
    return NodeResource({"/data0": GiB}, [disk("/dev/vda", ["/"], 100)], GiB)


def test_validation_requires_capacity_and_synthesizes_usage() -> None:
    with pytest.raises(PluginError, match="invalid capacity"):
        StorageRecord(None, None).validated()
    record = StorageRecord(capacity_example(), None).validated()
    assert record.usage == NodeResource({"/data0": 0}, [disk("/dev/vda", ["/"])], 0)


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        (NodeResource({"/data0": 2 * GiB}, [], 0), "invalid volume"),
        (NodeResource({"/data0": -1}, [], 0), "invalid volume"),
        (NodeResource({"/data0": 0}, [], -1), "invalid storage"),
        (NodeResource({"/data0": 0}, [disk("/dev/vda", ["/"], 200)], 0), "invalid disk"),
        (NodeResource({}, [disk("/dev/vda", None, 0, -1)], 0), "invalid disk"),
        (NodeResource({}, [disk("/dev/gone", None, 1)], 0), "disk /dev/gone not found in capacity"),
    ],
)
def test_validation_rejects_bad_usage(usage: NodeResource, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        StorageRecord(capacity_example(), usage).validated()


@pytest.mark.parametrize(
    ("capacity", "message"),
    [
        (NodeResource({"/d": -1}, [], 0), "invalid volume"),
        (NodeResource({}, [], -1), "invalid storage"),
        (NodeResource({}, [disk("/dev/a", None, -1)], 0), "invalid disk"),
    ],
)
def test_validation_rejects_negative_capacity(capacity: NodeResource, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        StorageRecord(capacity, NodeResource()).validated()


def test_validation_reports_every_group_that_fails() -> None:
    record = StorageRecord(NodeResource({"/d": -1}, [disk("/dev/a", None, -1)], -1), NodeResource())
    with pytest.raises(PluginError) as caught:
        record.validated()
    for text in ("invalid volume", "invalid storage", "invalid disk"):
        assert text in str(caught.value)
    assert "\n" not in str(caught.value)


def test_validation_allows_usage_over_capacity_storage_and_unknown_usage_volumes() -> None:
    StorageRecord(NodeResource({}, [], 1), NodeResource({"/unknown": 5}, [], 2)).validated()


def test_validation_sorts_disks_copies_mounts_and_scrubs_zero_orphans_without_mutating() -> None:
    capacity = NodeResource({}, [disk("/dev/vdb", ["/b"], 9), disk("/dev/vda", ["/a"], 9)], 0)
    usage = NodeResource({}, [disk("/dev/vdb", None, 1), disk("/dev/gone"), disk("/dev/vda", ["/x"])], 0)
    record = StorageRecord(capacity, usage)
    result = record.validated()
    assert result.capacity is not None and result.usage is not None
    assert [d.device for d in result.capacity.disks or ()] == ["/dev/vda", "/dev/vdb"]
    assert result.usage.disks == [disk("/dev/vda", ["/a"]), disk("/dev/vdb", ["/b"], 1)]
    assert [d.device for d in capacity.disks or ()] == ["/dev/vdb", "/dev/vda"]
    assert len(usage.disks or ()) == 3
    assert StorageRecord(NodeResource({}, [], 0), NodeResource({}, [disk("/dev/gone")], 0)).validated().usage == (
        NodeResource({}, [], 0)
    )


def test_validation_keeps_null_fields_null() -> None:
    record = StorageRecord(NodeResource({"/a": 1}, None, 1), NodeResource(None, [], 0)).validated()
    assert record.to_json() == {
        "capacity": {"volumes": {"/a": 1}, "disks": None, "storage": 1},
        "usage": {"volumes": None, "disks": [], "storage": 0},
    }


# §8.2 combine, §10.4 usage recomputation -----------------------------------------------------------------

FOUR_TIB = NodeResource({f"/data{i}": TiB for i in range(4)}, [disk("/dev/vda", ["/"], 1)], 4 * TiB)


def test_combine_delta_adds_or_subtracts_and_absolute_rebuilds_from_zero() -> None:
    request = NodeRequest.parse({"volumes": ["/data4:1T"], "storage": "1T"}).as_resource()
    incr = combine(FOUR_TIB, request, [], delta=True, incr=True)
    assert incr.storage == 6 * TiB
    decr = combine(incr, request, [], delta=True, incr=False).without_empty_volumes()
    assert decr.storage == 4 * TiB
    assert decr.volumes is not None and "/data4" not in decr.volumes
    absolute = combine(FOUR_TIB, request, [], delta=False, incr=False)
    assert absolute == NodeResource({"/data4": TiB}, [], 2 * TiB)
    assert combine(FOUR_TIB, None, [], delta=False, incr=True) == NodeResource()


def test_combine_applies_workloads_when_no_resource_is_given() -> None:
    workload = WorkloadResource(
        volume_plan_request=VolumePlan([(binding("AUTO:/d:rw:1G"), {"/data0": GiB})]),
        storage_request=2 * GiB,
        disks_request=[disk("/dev/vda", None, 1)],
    )
    used = combine(NodeResource(), None, [workload, workload], delta=True, incr=True)
    assert used == NodeResource({"/data0": 2 * GiB}, [disk("/dev/vda", None, 2)], 4 * GiB)
    freed = combine(used, None, [workload], delta=True, incr=False)
    assert freed == NodeResource({"/data0": GiB}, [disk("/dev/vda", None, 1)], 2 * GiB)


def test_reconcile_usage_reports_storage_differences() -> None:
    workloads = [WorkloadResource.from_json({"storage_request": 1}), WorkloadResource.from_json({"storage_limit": 1})]
    computed, diffs = reconcile_usage(NodeResource(), workloads)
    assert diffs == ["node.Storage != sum(workload.Storage): 0 != 1"]
    assert computed == NodeResource({}, [], 1)


def test_reconcile_usage_reports_volume_and_disk_differences() -> None:
    stored = NodeResource({"/data0": 5, "/data1": 0}, [disk("/dev/vda", ["/"], 3), disk("/dev/vdb", ["/b"])], 0)
    workload = WorkloadResource(
        volume_plan_request=VolumePlan(
            [(binding("AUTO:/a:rw:1G"), {"/data0": 4}), (binding("AUTO:/b:rw:1G"), {"/data2": 7})]
        ),
        disks_request=[disk("/dev/vda", ["/ignored"], 1), disk("/dev/vdb", None, 0)],
    )
    computed, diffs = reconcile_usage(stored, [workload])
    assert sorted(diffs) == sorted(
        [
            "node.Volumes[/data0] != sum(workload.Volumes[/data0]): 5 != 4",
            "node.Volumes[/data2] != sum(workload.Volumes[/data2]): 0 != 7",
            "node.Disks[/dev/vda] != sum(workload.Disks[/dev/vda]): /dev/vda:/:3:0:0:0 != /dev/vda:/:1:0:0:0",
        ]
    )
    assert computed == NodeResource(
        {"/data0": 4, "/data2": 7}, [disk("/dev/vda", ["/"], 1), disk("/dev/vdb", ["/b"])], 0
    )


def test_reconcile_usage_compares_a_missing_computed_disk_as_zero() -> None:
    _, diffs = reconcile_usage(NodeResource({}, [disk("/dev/x", ["/m"], 1)], 0), [])
    assert diffs == ["node.Disks[/dev/x] != sum(workload.Disks[/dev/x]): /dev/x:/m:1:0:0:0 != /dev/x:/m:0:0:0:0"]


# -- record type -------------------------------------------------------------------------------------


def test_records_are_written_as_compact_json_in_the_reference_field_order() -> None:
    record = StorageRecord(NodeResource({"/b": 2, "/a": 1}, [], 3), NodeResource())
    data = StorageRecord.encode(record)
    assert data == (
        b'{"capacity":{"volumes":{"/a":1,"/b":2},"disks":[],"storage":3},"usage":{"volumes":{},"disks":[],"storage":0}}'
    )
    assert StorageRecord.decode(data) == record


def test_a_record_that_is_not_json_is_a_plugin_error() -> None:
    with pytest.raises(PluginError, match="invalid JSON"):
        StorageRecord.decode(b"{nope")


def test_records_are_validated_before_they_are_written() -> None:
    checked = StorageRecord.checked(
        StorageRecord.from_json({"capacity": {"disks": [VDB, VDA], "storage": 0}, "usage": {"storage": 0}})
    )
    assert [d.device for d in capacity_of(checked).disks or ()] == ["/dev/vda", "/dev/vdb"]
    with pytest.raises(PluginError, match="invalid storage"):
        StorageRecord.checked(StorageRecord(NodeResource(storage=-1), NodeResource()))


def test_the_empty_record_is_what_an_unknown_node_reads_as() -> None:
    assert StorageRecord.empty().to_json() == {
        "capacity": {"volumes": {}, "disks": [], "storage": 0},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
    }


# -- problems, and what a write refuses -------------------------------------------------------------


def _resource(volumes: dict[str, int] | None, storage_: int, quota: tuple[int, int, int, int] | None) -> NodeResource:
    disks = None if quota is None else [Disk("/dev/a", ["/a"], *quota)]
    return NodeResource(volumes, disks, storage_)


resources = st.builds(
    _resource,
    st.none() | st.dictionaries(st.sampled_from(["/a", "/b"]), INT64_EDGES, max_size=2),
    INT64_EDGES,
    st.none() | st.tuples(INT64_EDGES, INT64_EDGES, INT64_EDGES, INT64_EDGES),
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


# -- the fast path for stored ints ------------------------------------------------------------------

plain = st.integers(min_value=0, max_value=1 << 41)
devices = st.sampled_from(["/data0", "/data1", "/dev/vdb", ""])


def resource_docs(number: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
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
    return st.fixed_dictionaries(
        {"capacity": resource_docs(number)}, optional={"usage": st.none() | resource_docs(number)}
    )


@given(doc=storage_docs(numbers) | storage_docs(plain))
def test_storage_record_decodes_alike_with_and_without_the_fast_path(doc: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(lambda: StorageRecord.from_json(doc)) == without_fast_path(
            monkeypatch, lambda: StorageRecord.from_json(doc)
        )


# Sides as the plugins store them (the fast path's whole input), then with one value made odd somewhere.
full_disks = st.fixed_dictionaries(
    {"device": devices, "mounts": st.none() | st.lists(devices, max_size=3)}
    | {name: plain for name in ("read_IOPS", "write_IOPS", "read_bps", "write_bps")}
)
full_sides = st.fixed_dictionaries(
    {"volumes": st.none() | st.dictionaries(devices, plain, max_size=4),
     "disks": st.none() | st.lists(full_disks, max_size=3), "storage": plain}
)  # fmt: skip
oddities = st.sampled_from([None, "", "x", 1.0, 2.5, True, -1, 2**63, -(2**63) - 1, [], [None], [1], {}, {"a": 1}])


def _places(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``doc`` a value sits at: containers, their members and elements."""
    found = [path]
    members = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in members:
        found += _places(value, (*path, key))
    return found


def _spoiled(doc: Any, path: tuple[Any, ...], odd: Any) -> Any:
    if not path:
        return odd
    if isinstance(doc, dict):
        return {**doc, path[0]: _spoiled(doc[path[0]], path[1:], odd)}
    return [*doc[: path[0]], _spoiled(doc[path[0]], path[1:], odd), *doc[path[0] + 1 :]]


@settings(max_examples=examples(1000))
@given(full_sides, st.none() | full_sides, st.integers(0, 10**6), oddities, st.booleans())
def test_a_stored_side_and_every_one_value_off_it_decode_alike_with_and_without_the_fast_path(
    capacity: dict[str, Any], usage: dict[str, Any] | None, place: int, odd: Any, spoil: bool
) -> None:
    doc: Any = {"capacity": capacity, "usage": usage}
    if spoil:
        places = _places(doc)[1:]  # not the whole record: the sides and everything inside them
        doc = _spoiled(doc, places[place % len(places)], odd)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(lambda: StorageRecord.from_json(doc)) == without_fast_path(
            monkeypatch, lambda: StorageRecord.from_json(doc)
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


# A lone surrogate escape in a stored string reads as U+FFFD (decision 17), before either decoder runs.
surrogate_devices = st.builds(
    lambda a, b: f"/data{a}{b}",
    st.text(st.characters(min_codepoint=0xD7FE, max_codepoint=0xE001), max_size=3),
    st.sampled_from(["", "0", "\U0001f600"]),
)
surrogate_disks = st.fixed_dictionaries(
    {"device": surrogate_devices, "mounts": st.none() | st.lists(surrogate_devices, max_size=2)}
    | {name: plain for name in ("read_IOPS", "write_IOPS", "read_bps", "write_bps")}
)
surrogate_sides = st.fixed_dictionaries(
    {"volumes": st.none() | st.dictionaries(surrogate_devices, plain, max_size=3),
     "disks": st.none() | st.lists(surrogate_disks, max_size=2), "storage": plain}
)  # fmt: skip


@given(surrogate_sides, surrogate_sides)
def test_stored_surrogate_escapes_read_alike_with_and_without_the_fast_path_and_stay_writable(
    capacity: dict[str, Any], usage: dict[str, Any]
) -> None:
    data = json.dumps({"capacity": capacity, "usage": usage}).encode()  # ASCII: surrogates as \udxxx escapes
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast = outcome(lambda: StorageRecord.decode(data))
        assert fast == without_fast_path(monkeypatch, lambda: StorageRecord.decode(data))
    if isinstance(fast, tuple):  # refused for its values (usage above capacity, say), never for its text
        assert "UTF-8" not in fast[1] and "invalid JSON" not in fast[1]
        return
    assert not any("\ud800" <= char <= "\udfff" for char in json.dumps(fast, ensure_ascii=False))
    assert StorageRecord.decode(data).encode().decode("utf-8")  # a write stores valid UTF-8
