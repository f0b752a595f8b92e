"""GPU records (gpu/record.py), without etcd: combine, usage reconciliation, the stored bytes and
``problems``.

Two paths must agree (decision 9): ``checked`` refuses a record exactly when ``write_problems`` names
something, every record it accepts decodes again from its own bytes, and ``problems`` (for a check of the
whole store) names everything ``write_problems`` does and more. A stored record's numbers are plain int64s,
so decoding takes a whole map or quota at once when ``decoding.plain_int64s`` says so; a record decodes, or
fails, the same with that fast path switched off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import record as gpu
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.gpu.record import combine, reconcile_usage
from tests.support import INT64_EDGES, without_fast_path
from tests.support import decode_outcome as outcome
from tests.support import record_numbers as numbers


def test_combine_absolute_ignores_origin_and_incr() -> None:
    assert combine({"a": 5}, {"a": 1}, [], delta=False, incr=False) == {"a": 1}
    assert combine({"a": 5}, None, [], delta=False, incr=True) == {}


def test_combine_delta_applies_the_resource_else_the_workloads() -> None:
    assert combine({"a": 5}, {"a": 1}, [{"a": 100}], delta=True, incr=True) == {"a": 6}
    assert combine({"a": 5}, {"a": 2}, [{"a": 100}], delta=True, incr=False) == {"a": 3}
    assert combine({"a": 5}, None, [{"a": 1}, {"b": 2}], delta=True, incr=True) == {"a": 6, "b": 2}


def test_reconcile_usage_sums_the_workloads_and_reports_each_mismatched_product() -> None:
    actual, diffs = reconcile_usage({"a": 1, "b": 3}, [{"a": 2}, {"c": 1}])
    assert actual == {"a": 2, "c": 1}
    assert diffs == [
        "node.usage != sum(workload.request): 4 != 3",
        "a: actual(2) != usage(1)",
        "c not in usage",
    ]
    assert reconcile_usage({"a": 1}, [{"a": 1}]) == ({"a": 1}, [])


def test_record_round_trips_the_stored_bytes() -> None:
    records = GpuRecord
    stored = b'{"capacity":{"prod_count_map":{"nvidia-3070":4,"nvidia-3090":4}},"usage":{"prod_count_map":{}}}'
    assert records.encode(records.decode(stored)) == stored
    null_side = b'{"capacity":{"prod_count_map":null},"usage":{"prod_count_map":{"a":1}}}'
    assert records.encode(records.decode(null_side)) == null_side


def test_record_reading_fills_a_missing_side_with_empty() -> None:
    assert GpuRecord.decode(b'{"capacity":{"prod_count_map":{"a":1}}}') == GpuRecord({"a": 1}, {})


def test_record_check_names_the_side_that_is_invalid() -> None:
    with pytest.raises(PluginError, match="invalid usage: count is less than or equal to zero"):
        GpuRecord.checked(GpuRecord({"a": 1}, {"a": -1}))


# -- problems, and what a write refuses -------------------------------------------------------------

names = st.sampled_from(["a", "b", " "])
counts = st.none() | st.dictionaries(names, INT64_EDGES, max_size=3)


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


# -- the fast path for stored ints ------------------------------------------------------------------


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


@given(
    st.dictionaries(st.text(st.characters(min_codepoint=0xD7FE, max_codepoint=0xE001), max_size=3), numbers),
    st.dictionaries(st.text(max_size=2), numbers, max_size=2),
)
def test_stored_surrogate_escapes_read_alike_with_and_without_the_fast_path_and_stay_writable(
    capacity: dict[str, Any], usage: dict[str, Any]
) -> None:
    # A lone surrogate escape in a stored product reads as U+FFFD (decision 17), so the node stays writable.
    doc = {"capacity": {"prod_count_map": capacity}, "usage": {"prod_count_map": usage}}
    data = json.dumps(doc).encode()  # ASCII: surrogates as \udxxx escapes
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast = outcome(lambda: GpuRecord.decode(data))
        assert fast == without_fast_path(monkeypatch, lambda: GpuRecord.decode(data))
    if isinstance(fast, tuple):  # refused for its numbers, never for its text
        assert "UTF-8" not in fast[1] and "invalid JSON" not in fast[1]
        return
    assert not any("\ud800" <= char <= "\udfff" for char in json.dumps(fast, ensure_ascii=False))
    assert GpuRecord.decode(data).encode().decode("utf-8")


@given(
    doc=st.fixed_dictionaries(
        {},
        optional={
            side: st.none()
            | st.integers()
            | st.fixed_dictionaries(
                {},
                optional={
                    "prod_count_map": st.none()
                    | st.lists(numbers)
                    | st.dictionaries(st.text(max_size=3), numbers, max_size=4)
                },
            )
            for side in ("capacity", "usage")
        },
    )
)
def test_a_gpu_record_read_in_one_go_is_the_record_read_field_by_field(doc: dict[str, Any]) -> None:
    # from_json's one check of both sides' counts against from_fields, which reads each field with its errors.
    assert outcome(lambda: GpuRecord.from_json(doc)) == outcome(lambda: GpuRecord.from_fields(doc))
