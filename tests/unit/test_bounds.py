"""Decision 18: the config's limits on a call's work, range-checked at load (decision 15), and the one line a
request past each gets. The executables are held to the same lines in tests/test_work_bounds.py."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend import config
from resource_extend.bounds import KEYS, LIMITS, Bounds
from resource_extend.errors import PluginError

ETCD = {"etcd": {"machines": ["http://127.0.0.1:2379"]}}


def bounds_of(scheduler: dict[str, Any]) -> Bounds:
    return config.parse("storage.yaml", {**ETCD, "scheduler": scheduler}).bounds


def test_every_limit_is_a_scheduler_key_the_config_accepts() -> None:
    assert set(KEYS) <= set(config.SCHEDULER_KEYS)
    assert set(KEYS) == {
        "max_deploy_count",
        "max_deploy_work",
        "max_workload_items",
        "max_nodes_per_call",
        "max_stdin_bytes",
    }


def test_an_absent_section_or_null_value_gives_the_defaults() -> None:
    for loaded in (config.parse("x", ETCD).bounds, bounds_of(dict.fromkeys(KEYS))):
        assert {key: getattr(loaded, key) for key in KEYS} == {key: LIMITS[key][0] for key in KEYS}


def test_the_defaults_are_the_documented_ones() -> None:
    # docs/configuration.md and the samples state these numbers; the measurements in docs/reliability.md hold at them.
    assert {key: LIMITS[key][0] for key in KEYS} == {
        "max_deploy_count": 10000,
        "max_deploy_work": 50000,
        "max_workload_items": 100,
        "max_nodes_per_call": 10000,
        "max_stdin_bytes": 4 << 20,
    }


@pytest.mark.parametrize("key", KEYS)
def test_each_limit_accepts_its_whole_range(key: str) -> None:
    _, low, high = LIMITS[key]
    assert getattr(bounds_of({key: low}), key) == low
    assert getattr(bounds_of({key: high}), key) == high


@pytest.mark.parametrize("key", KEYS)
def test_each_limit_refuses_what_is_outside_its_range_naming_key_and_range(key: str) -> None:
    _, low, high = LIMITS[key]
    for bad in (low - 1, high + 1, True, 10.0, "10", [10], float("nan")):
        with pytest.raises(PluginError) as caught:
            bounds_of({key: bad})
        assert f"config storage.yaml: scheduler.{key}: {bad!r} is not an integer in {low}..{high}" == str(caught.value)


def test_a_near_miss_of_a_limit_key_is_an_unknown_key_with_a_hint() -> None:
    with pytest.raises(
        PluginError, match=r"scheduler\.max_stdin_byte: unknown key \(did you mean scheduler\.max_stdin_bytes\?\)"
    ):
        bounds_of({"max_stdin_byte": 1 << 20})


def test_a_refusal_names_what_was_asked_the_limit_and_the_key_of_which_file() -> None:
    bounds = Bounds("storage.yaml", max_deploy_work=1000)
    with pytest.raises(PluginError) as caught:
        bounds.check_work(10, "volume bindings", 101, "deploy_count")
    assert str(caught.value) == (
        "request too large: 10 volume bindings x deploy_count 101 = 1010; scheduler.max_deploy_work of "
        "storage.yaml allows 1000 (raise it there to allow more)"
    )


def test_work_at_the_limit_passes_and_one_more_is_refused() -> None:
    bounds = Bounds("gpu.yaml", max_deploy_work=100, max_workload_items=100)
    bounds.check_work(10, "products", 10, "deploy_count")
    with pytest.raises(PluginError, match="11 products x deploy_count 10 = 110"):
        bounds.check_work(11, "products", 10, "deploy_count")


def test_a_workload_naming_nothing_still_counts_one_per_plan() -> None:
    bounds = Bounds("gpu.yaml", max_deploy_work=100)
    bounds.check_work(0, "products", 100, "deploy_count")
    with pytest.raises(PluginError, match="1 products x deploy_count 101 = 101"):
        bounds.check_work(0, "products", 101, "deploy_count")


def test_items_are_bounded_per_workload_before_the_work() -> None:
    bounds = Bounds("storage.yaml", max_workload_items=3)
    with pytest.raises(PluginError, match=r"4 volume bindings in one workload; scheduler\.max_workload_items"):
        bounds.check_work(4, "volume bindings", 1, "deploy_count")


def test_nodenames_are_counted_only_when_they_are_a_list() -> None:
    bounds = Bounds("gpu.yaml", max_nodes_per_call=2)
    for request in ({"nodenames": ["a", "b"]}, {"nodenames": "abc"}, {"nodenames": None}, [1, 2, 3], "x"):
        bounds.check_request(request)
    with pytest.raises(PluginError, match=r"3 nodenames; scheduler\.max_nodes_per_call of gpu\.yaml allows 2"):
        bounds.check_request({"nodenames": ["a", "b", 7]})


def test_stdin_is_refused_one_byte_past_the_limit() -> None:
    bounds = Bounds("gpu.yaml", max_stdin_bytes=1024)
    bounds.check_stdin(1024)
    with pytest.raises(PluginError, match=r"more than 1024 bytes on stdin; scheduler\.max_stdin_bytes of gpu\.yaml"):
        bounds.check_stdin(1025)


def test_deploy_count_past_its_limit_keeps_the_reference_words() -> None:
    message = str(Bounds("gpu.yaml").deploy_count_error(10001))
    assert "deploy_count 10001" in message and "scheduler.max_deploy_count of gpu.yaml is 10000" in message
    assert "not enough resource" in message
