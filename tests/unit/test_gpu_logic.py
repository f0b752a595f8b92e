"""The GPU plugin's pure arithmetic, without etcd."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.record import GpuRecord, combine, reconcile_usage
from resource_extend.gpu.scheduler import MAX_CAPACITY, allocate, node_deploy_capacity

FULL = GpuRecord({"nvidia-3070": 4, "nvidia-3090": 4}, {})
maps = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-5, 5))


def test_add_and_sub_drop_products_that_reach_zero() -> None:
    assert prodmap.add({"a": 1, "b": 2}, {"a": -1}) == {"b": 2}
    assert prodmap.sub({"a": 1}, {"a": 3, "b": 1}) == {"a": -2, "b": -1}


def test_arithmetic_treats_a_null_map_as_empty() -> None:
    assert prodmap.add(None, {"a": 1}) == {"a": 1}
    assert prodmap.sub({"a": 1}, None) == {"a": 1}
    assert prodmap.count(None) == 0


@given(maps, maps)
def test_sub_undoes_add(m: dict[str, int], n: dict[str, int]) -> None:
    start = {k: v for k, v in m.items() if v}
    assert prodmap.sub(prodmap.add(start, n), n) == start


def test_validate_rejects_non_positive_counts_with_the_reference_text() -> None:
    with pytest.raises(PluginError, match="invalid gpu map"):
        prodmap.validate({"nvidia-3070": 0})
    with pytest.raises(PluginError, match=r"<product: x, count: -1>"):
        prodmap.validate({"x": -1})


def test_validate_rejects_products_blank_by_go_rules_only() -> None:
    with pytest.raises(PluginError, match="invalid gpu product"):
        prodmap.validate({" \u3000\t": 1})
    # U+001F is not white space for Go's TrimSpace, though Python's strip() removes it.
    prodmap.validate({"\x1f": 1})


def test_parse_takes_integral_numbers_and_rejects_fractions_and_strings() -> None:
    assert prodmap.parse({"prod_count_map": {"a": 3.0, "b": 1e3}}, "r") == {"a": 3, "b": 1000}
    for bad in (1.5, "2", True, None):
        with pytest.raises(PluginError, match="cannot unmarshal"):
            prodmap.parse({"prod_count_map": {"a": bad}}, "r")


def test_parse_of_absent_object_or_key_is_no_map() -> None:
    assert prodmap.parse(None, "r") is None
    assert prodmap.parse({"other": 1}, "r") is None


@pytest.mark.parametrize(
    ("request_map", "capacity", "rate"),
    [
        ({}, MAX_CAPACITY, 0),
        ({"nvidia-3070": 2}, 2, 0.25),
        ({"nvidia-3070": 3}, 1, 0.375),
        ({"nvidia-3070": 5}, 0, None),
        ({"nvidia-3070": 1, "nvidia-3090": 1}, 4, 0.25),
        ({"nvidia-3070": 1, "nvidia-3090": 2}, 2, 0.375),
        ({"nvidia-3070": 4, "nvidia-3090": 4}, 1, 1),
        ({"nvidia-3070": 5, "nvidia-3090": 4}, 0, None),
    ],
)
def test_node_capacity_matches_the_reference_table(request_map: dict[str, int], capacity: int, rate: float) -> None:
    got, usage, got_rate = node_deploy_capacity(FULL, request_map)
    assert got == capacity
    assert usage == 0
    if rate is not None:
        assert got_rate == rate


def test_node_capacity_truncates_negative_availability_toward_zero() -> None:
    over = GpuRecord({"a": 1}, {"a": 4})
    assert node_deploy_capacity(over, {"a": 2})[0] == -1  # Go: -3 / 2 == -1; excluded because <= 0


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


def test_allocate_fails_the_whole_call_when_any_product_runs_short() -> None:
    allocate({"a": 4, "b": 4}, {"a": 1, "b": 1}, 4)
    with pytest.raises(PluginError, match="not enough resource"):
        allocate({"a": 4, "b": 4}, {"a": 1, "b": 1}, 5)
    with pytest.raises(PluginError, match="not enough resource"):
        allocate({"a": 4}, {"z": 1}, 1)


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
