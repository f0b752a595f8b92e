"""Request numbers are IEEE doubles in the reference (spec 1.3, 1.9): integer literals beyond 2**53 lose
precision exactly as a float64 round trip does, and integers that no longer fit int64 fail strict decoding."""

from __future__ import annotations

import pytest

from resource_extend import jsonio
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap


def test_small_integers_stay_exact() -> None:
    assert jsonio.loads_request(b'{"n": 9007199254740992, "m": -3}') == {"n": 2**53, "m": -3}


def test_integers_beyond_2_pow_53_round_like_float64() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 9007199254740993}}')
    assert prodmap.parse(request, "resource") == {"x": 9007199254740992}


def test_int64_max_literal_overflows_after_the_double_round_trip() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 9223372036854775807}}')
    with pytest.raises(PluginError):
        prodmap.parse(request, "resource")


def test_integer_literal_of_1e21_or_more_is_not_an_integer() -> None:
    request = jsonio.loads_request(b'{"prod_count_map": {"x": 1000000000000000000000}}')
    with pytest.raises(PluginError):
        prodmap.parse(request, "resource")


def test_integer_literal_beyond_float64_range_fails_decoding() -> None:
    with pytest.raises(PluginError, match="decode plugin input"):
        jsonio.loads_request(b'{"n": 1' + b"0" * 400 + b"}")
