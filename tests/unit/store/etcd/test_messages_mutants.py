"""How the settling answers' revisions are read, where a hand mutant let a float through (issue 37,
docs/testing.md#mutant-sample-issue-37)."""

from __future__ import annotations

import base64

import pytest

from resource_extend.store.etcd import messages


def test_an_int64_is_a_decimal_string_or_an_integer_and_anything_else_a_value_error() -> None:
    assert [messages.int64("7"), messages.int64(7), messages.int64("-9223372036854775808")] == [7, 7, -(2**63)]
    for bad in (7.0, 7.5, 1e300, float("inf"), None, True, [7]):
        with pytest.raises(ValueError, match="is not an integer"):
            messages.int64(bad)


def test_a_settling_answer_with_a_float_revision_is_a_bad_reply() -> None:
    key = base64.b64encode(b"/eru/resource/storage/n1").decode()
    with pytest.raises(ValueError):
        messages.stamped({"key": key, "mod_revision": 7.5, "create_revision": "3"}, base64.b64decode)
