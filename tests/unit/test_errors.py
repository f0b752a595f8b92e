"""The errors' words: the reference's sentinels close each message, so operators' log searches keep working."""

from __future__ import annotations

import pytest

from resource_extend import errors


@pytest.mark.parametrize(
    ("cls", "suffix"),
    [
        (errors.InvalidVolume, "invalid volume"),
        (errors.InvalidDisk, "invalid disk"),
        (errors.InvalidStorage, "invalid storage"),
        (errors.InsufficientResource, "cannot alloc a plan, not enough resource"),
    ],
)
def test_a_sentinel_failure_ends_with_the_references_words(cls: type[errors.Sentinel], suffix: str) -> None:
    assert str(cls("volume /x:/y")) == f"volume /x:/y: {suffix}"
    assert issubclass(cls, errors.PluginError)


def test_a_missing_node_is_named_with_the_references_sentinel() -> None:
    failure = errors.NodeNotExists("n1")
    assert str(failure) == "key: n1: node not exists"
    assert failure.node == "n1"


def test_an_ambiguous_write_is_a_store_failure_and_a_usage_error_is_no_plugin_error() -> None:
    # cli exits 128 on a PluginError and 2 on a UsageError: the hierarchy decides the exit status.
    assert issubclass(errors.AmbiguousWrite, errors.StoreUnavailable)
    assert issubclass(errors.StoreUnavailable, errors.PluginError)
    assert not issubclass(errors.UsageError, errors.PluginError)
