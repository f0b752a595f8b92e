"""Disks and their quotas (storage/disk.py) against the tables and examples of spec/storage-types.md."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.storage.disk import (
    Disk,
    DiskIndex,
    disk_by_device,
    disk_by_path,
    disks_add,
    disks_sub,
    remove_mounts,
)
from tests.support import GiB, disk, examples

# §6 disks ------------------------------------------------------------------------------------------------


def test_disk_parse_reads_iops_strictly_and_bps_as_sizes() -> None:
    assert Disk.parse("/dev/vda:/,/data:100:200:1G:2G") == disk("/dev/vda", ["/", "/data"], 100, 200, GiB, 2 * GiB)
    assert Disk.parse("/dev/vda:/data/sub/:1:2:300:4").mounts == ["/data/sub/"]
    assert Disk.parse(":,:1:2:3:4") == disk("", ["", ""], 1, 2, 3, 4)


@pytest.mark.parametrize(
    "text",
    ["/dev/vda:/:100:200:1G", "/dev/vda:/:x:200:1G:2G", "/dev/vda:/:100:200:xx:2G", "/d:/:1K:2:3:4", "/d:/::2:3:4"],
)
def test_disk_parse_errors_are_invalid_disk_naming_the_text(text: str) -> None:
    with pytest.raises(PluginError, match="invalid disk") as caught:
        Disk.parse(text)
    assert text in str(caught.value)


def test_disk_json_uses_the_mixed_case_keys_in_order() -> None:
    text = '{"device":"/dev/vda","mounts":["/"],"read_IOPS":1,"write_IOPS":2,"read_bps":3,"write_bps":4}'
    assert jsonio.dumps(Disk.from_json(jsonio.loads_request(text.encode())).to_json()) == text
    assert Disk.from_json({"device": "/dev/vdb"}).to_json()["mounts"] is None


@pytest.mark.parametrize(
    "value", [{"device": 1}, {"read_IOPS": "1"}, {"read_IOPS": 1.5}, {"mounts": "/"}, {"mounts": [1]}, None, []]
)
def test_disk_from_json_rejects_mistyped_fields(value: Any) -> None:
    with pytest.raises(PluginError):
        Disk.from_json(value)


def test_disk_string_joins_mounts() -> None:
    assert disk("/dev/vda", ["/", "/data"], 100, 200, 300, 400).disk_string() == "/dev/vda:/,/data:100:200:300:400"
    assert disk("/dev/vda").disk_string() == "/dev/vda::0:0:0:0"


PATH_DISKS = [disk("/dev/vda", ["/"]), disk("/dev/vdb", ["/data"]), disk("/dev/vdc", ["/data/sub/"])]


@pytest.mark.parametrize(
    ("path", "device"),
    [
        ("/", "/dev/vda"),
        ("/etc", "/dev/vda"),
        ("/data", "/dev/vdb"),
        ("/data/x", "/dev/vdb"),
        ("/database", "/dev/vda"),
        ("/data/sub", "/dev/vdc"),
        ("/data/sub/x", "/dev/vdc"),
        ("/data/sub/", "/dev/vdc"),
    ],
)
def test_disk_by_path_takes_the_deepest_covering_mount(path: str, device: str) -> None:
    found = disk_by_path(PATH_DISKS, path)
    assert found is not None and found.device == device
    assert found is PATH_DISKS[[d.device for d in PATH_DISKS].index(device)]


def test_disk_by_path_finds_nothing_without_a_covering_mount_and_later_ties_win() -> None:
    assert disk_by_path([disk("/dev/vdb", ["/data"])], "/etc") is None
    tie = [disk("/dev/a", ["/data"]), disk("/dev/b", ["/data/"])]
    assert disk_by_path(tie, "/data/x") is tie[1]
    found = disk_by_path([disk("/dev/e", [""])], "/anything")
    assert found is not None and found.device == "/dev/e"


# Paths of few letters and many slashes: equal, nested, sibling and prefix-but-not-subpath mounts, trailing and
# doubled slashes, the empty mount, and one disk object listed twice.
_PATHS = st.text(alphabet="/ab", max_size=6)


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.lists(_PATHS, max_size=4), max_size=5), st.lists(_PATHS, min_size=1, max_size=8), st.booleans())
def test_the_disk_index_finds_what_disk_by_path_finds_at_its_last_place(
    mounts: list[list[str]], paths: list[str], repeat: bool
) -> None:
    disks = [disk(f"/dev/d{i}", list(m)) for i, m in enumerate(mounts)]
    if repeat and disks:
        disks.append(disks[0])
    index = DiskIndex(disks)
    for path in paths:
        found = disk_by_path(disks, path)
        at = index.index(path)
        if found is None:
            assert at is None
        else:
            assert at == max(i for i, d in enumerate(disks) if d is found)
            assert index.find(path) is found


def test_disks_sub_then_add_follows_the_reference_example() -> None:
    start = [disk("/dev/vda", None, 100, 100, 100, 100)]
    other = [disk("/dev/vda", None, 40, 30, 20, 10), disk("/dev/vdb", ["/data"], 5, 6, 7, 8)]
    after = disks_sub(start, other)
    assert after == [disk("/dev/vda", None, 60, 70, 80, 90), disk("/dev/vdb", ["/data"], -5, -6, -7, -8)]
    assert start == [disk("/dev/vda", None, 100, 100, 100, 100)]
    back = disks_add(after, [disk("/dev/vdb", None, 5, 6, 7, 8)])
    assert back[1] == disk("/dev/vdb", ["/data"], 0, 0, 0, 0)


def test_disks_add_replaces_mounts_only_when_given_and_copies_new_disks() -> None:
    extra = disk("/dev/vdb", None, 10)
    added = disks_add([disk("/dev/vda", ["/"], 100)], [disk("/dev/vda", ["/data"], 1, 2, 3, 4), extra])
    assert added == [disk("/dev/vda", ["/data"], 101, 2, 3, 4), disk("/dev/vdb", None, 10)]
    extra.quota = extra.quota.replaced(0, 99)
    assert added[1].quota[0] == 10
    assert disks_add(added, [disk("/dev/vda", None, 1)])[0].mounts == ["/data"]


def test_disks_add_matches_only_disks_already_in_the_list() -> None:
    twice = disks_add([], [disk("/dev/x", None, 1), disk("/dev/x", None, 2)])
    assert [d.quota[0] for d in twice] == [1, 2]


def test_remove_mounts_copies_without_touching_the_originals() -> None:
    disks = [disk("/dev/vda", ["/"], 100)]
    stripped = remove_mounts(disks)
    assert stripped == [disk("/dev/vda", None, 100)]
    assert disks[0].mounts == ["/"]
    assert disk_by_device(disks, "/dev/vda") is disks[0]
    assert disk_by_device(disks, "/dev/none") is None


def test_disk_copy_and_stamp_do_not_share_mounts() -> None:
    original = disk("/dev/vda", ["/"], 1, 2, 3, 4)
    for derived in (original.copy(), original.stamped((5, 6, 7, 8))):
        assert derived.mounts is not None
        derived.mounts.append("/x")
    assert original.mounts == ["/"]
    assert original.stamped((5, 6, 7, 8)).quota == (5, 6, 7, 8)
