"""The GPU plugin's product-count maps (gpu/prodmap.py): arithmetic, validation and strict reading."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap

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
        prodmap.validate({"nvidia-3070": 0}, "gpu")
    with pytest.raises(PluginError, match=r"<product: x, count: -1>"):
        prodmap.validate({"x": -1}, "gpu")


def test_validate_rejects_products_blank_by_go_rules_only() -> None:
    with pytest.raises(PluginError, match="invalid gpu product"):
        prodmap.validate({" \u3000\t": 1}, "gpu")
    # U+001F is not white space for Go's TrimSpace, though Python's strip() removes it.
    prodmap.validate({"\x1f": 1}, "gpu")


def test_parse_takes_integral_numbers_and_rejects_fractions_and_strings() -> None:
    assert prodmap.parse({"prod_count_map": {"a": 3.0, "b": 1e3}}, "r") == {"a": 3, "b": 1000}
    for bad in (1.5, "2", True, None):
        with pytest.raises(PluginError, match="cannot unmarshal"):
            prodmap.parse({"prod_count_map": {"a": bad}}, "r")


def test_parse_of_absent_object_or_key_is_no_map() -> None:
    assert prodmap.parse(None, "r") is None
    assert prodmap.parse({"other": 1}, "r") is None
