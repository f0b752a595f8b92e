"""The deploy-capacity arithmetic both plugins share (goarith.py), as Go computes it."""

from __future__ import annotations

from resource_extend.goarith import ratio, trunc_div


def test_ratio_and_division_follow_go() -> None:
    assert ratio(0, 5) == 0.0 and ratio(5, 0) == 0.0 and ratio(1, 4) == 0.25
    assert ratio(2**60 + 1, 2**60) == float(2**60 + 1) / float(2**60)
    assert [trunc_div(-7, 2), trunc_div(7, -2), trunc_div(7, 2), trunc_div(-7, -2)] == [-3, -3, 3, 3]
