"""Human sizes (storage/size.py) against the table of spec/storage-types.md."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.storage.size import parse_size, size_param
from tests.support import GiB, KiB, MiB, TiB

# §1 human sizes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("0", 0),
        ("512", 512),
        ("1", 1),
        ("-1", -1),
        ("1K", KiB),
        ("1k", KiB),
        ("1KB", KiB),
        ("1KiB", KiB),
        ("1M", MiB),
        ("2M", 2 * MiB),
        ("1B", 1),
        ("1b", 1),
        ("0.5", 0),
        (".5G", GiB // 2),
        ("-1T", -TiB),
        ("+1G", GiB),
        ("1G", GiB),
        ("1g", GiB),
        ("1GB", GiB),
        ("1GiB", GiB),
        ("1 G", GiB),
        ("100G", 100 * GiB),
        ("100GiB", 100 * GiB),
        ("1T", TiB),
        ("1TB", TiB),
        ("1tb", TiB),
        ("10T", 10 * TiB),
        ("1P", 1 << 50),
        ("1.5G", 1610612736),
        ("1.5T", 1649267441664),
        ("1.9", 1),
        ("-1G", -GiB),
        ("-1.5G", -1610612736),
        ("1e3", 1000),
        ("1.", 1),
    ],
)
def test_parse_size_reads_binary_units_and_plain_byte_counts(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["xx", "hhhh", "-", "1GB ", " 1G", "--1G", "1.2.3", "1_0", "0x10", "inf "])
def test_parse_size_rejects_malformed_numbers_as_invalid_size(text: str) -> None:
    with pytest.raises(PluginError, match="invalid size"):
        parse_size(text)


@pytest.mark.parametrize("text", ["1Gi", "1E", "1iB", "1KBB", "1bit", "1x"])
def test_parse_size_rejects_unknown_units_as_invalid_suffix(text: str) -> None:
    with pytest.raises(PluginError, match="invalid suffix"):
        parse_size(text)


def test_parse_size_error_names_the_offending_text() -> None:
    with pytest.raises(PluginError, match="'xx'"):
        parse_size("xx")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1G", GiB), (107374182400, 107374182400), (float(GiB), GiB), (2.5, 2), (None, 0), (True, 0), ([1], 0)],
)
def test_size_param_takes_human_strings_or_byte_counts(value: object, expected: int) -> None:
    assert size_param({"k": value}, "k") == expected
    assert size_param({}, "k") == 0
