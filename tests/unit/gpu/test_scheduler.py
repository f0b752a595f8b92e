"""The GPU scheduler (gpu/scheduler.py): deploy capacity against the reference's table, allocation,
and a realloc that gives back everything a deploy took leaving the usage as it was before the deploy."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import record as gpu_record
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.gpu.scheduler import MAX_CAPACITY, allocate, node_deploy_capacity, realloc_plan

FULL = GpuRecord({"nvidia-3070": 4, "nvidia-3090": 4}, {})


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


def test_allocate_fails_the_whole_call_when_any_product_runs_short() -> None:
    allocate({"a": 4, "b": 4}, {"a": 1, "b": 1}, 4)
    with pytest.raises(PluginError, match="not enough resource"):
        allocate({"a": 4, "b": 4}, {"a": 1, "b": 1}, 5)
    with pytest.raises(PluginError, match="not enough resource"):
        allocate({"a": 4}, {"z": 1}, 1)


products = st.sampled_from(["nvidia-3070", "nvidia-3090", "a100"])


@given(
    st.dictionaries(products, st.integers(1, 8), min_size=1),
    st.dictionaries(products, st.integers(0, 3)),
    st.dictionaries(products, st.integers(1, 3), min_size=1),
)
def test_gpu_realloc_giving_back_a_deploy_restores_usage(
    capacity: dict[str, int], used: dict[str, int], wanted: dict[str, int]
) -> None:
    before = {p: k for p, k in used.items() if k}
    record = GpuRecord(capacity, before)
    try:
        allocate(record.available(), wanted, 1)
    except PluginError:
        assume(False)
    deployed = GpuRecord(capacity, gpu_record.combine(before, None, [wanted], delta=True, incr=True))
    target, delta = realloc_plan(deployed, wanted, {p: -k for p, k in wanted.items()})
    assert target == {}
    assert gpu_record.combine(deployed.usage, delta, [], delta=True, incr=True) == before
