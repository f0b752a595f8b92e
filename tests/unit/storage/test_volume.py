"""Per-device volume maps (storage/volume.py) against spec/storage-types.md."""

from __future__ import annotations

from resource_extend.storage.volume import first_volume, volumes_add, volumes_sub, volumes_total

# §7 volumes and plans ------------------------------------------------------------------------------------


def test_volumes_arithmetic_keeps_zero_entries_and_never_mutates() -> None:
    start = {"/data0": 10, "/data1": 20}
    added = volumes_add(start, {"/data0": 5, "/data2": 1})
    assert added == {"/data0": 15, "/data1": 20, "/data2": 1}
    subtracted = volumes_sub(added, {"/data1": 20})
    assert subtracted == {"/data0": 15, "/data1": 0, "/data2": 1}
    assert volumes_total(subtracted) == 16
    assert start == {"/data0": 10, "/data1": 20}
    assert volumes_total(None) == 0
    assert first_volume({}) == ("", 0)
