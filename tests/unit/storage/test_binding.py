"""Volume binding strings (storage/binding.py) against the tables and examples of spec/storage-types.md."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.storage.binding import (
    VolumeBinding,
    need_schedule,
    parse_bindings,
    validate_bindings,
)
from resource_extend.storage.scheduler.resize import merge_bindings
from tests.support import GiB, KiB, MiB, binding

# §2 volume binding strings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("AUTO:/dir:rw:1G", VolumeBinding("AUTO", "/dir", "rw", GiB)),
        ("/src:/dst", VolumeBinding("/src", "/dst", "rw", 0)),
        ("AUTO:/dir:wrm:1G", VolumeBinding("AUTO", "/dir", "mrw", GiB)),
        ("AUTO:/dir::-1G", VolumeBinding("AUTO", "/dir", "rw", -GiB)),
        ("/mnt:/dir:rw:0:100:200:1M:2M", VolumeBinding("/mnt", "/dir", "rw", 0, 100, 200, MiB, 2 * MiB)),
        ("AUTO:/d:rw:1G:100", VolumeBinding("AUTO", "/d", "rw", GiB, 100)),
        ("AUTO:/d:rw:1G:100:200:1K", VolumeBinding("AUTO", "/d", "rw", GiB, 100, 200, KiB)),
        ("AUTO:/d:rw:", VolumeBinding("AUTO", "/d", "rw", 0)),
        ("AUTO:/d:rw:1G:1K", VolumeBinding("AUTO", "/d", "rw", GiB, KiB)),
        (":/d", VolumeBinding("", "/d", "rw", 0)),
    ],
)
def test_binding_parse_matches_the_reference_table(text: str, expected: VolumeBinding) -> None:
    assert binding(text) == expected


@pytest.mark.parametrize(
    ("flags", "expected"),
    [("wrm", "mrw"), ("ro", "or"), ("orw", "orw"), ("rrw", "rrw"), ("xyz", "xyz"), ("", "rw")],
)
def test_binding_flags_are_sorted_letters_never_validated(flags: str, expected: str) -> None:
    assert binding(f"/a:/b:{flags}").flags == expected


@pytest.mark.parametrize("text", ["one", "a:b:c:d:e:f:g:h:i", "AUTO::rw:1G", "/a:", ":"])
def test_binding_parse_rejects_bad_shapes_as_invalid_volume(text: str) -> None:
    with pytest.raises(PluginError, match="invalid volume"):
        binding(text)


def test_binding_parse_reports_the_size_parser_error() -> None:
    with pytest.raises(PluginError, match="invalid size: 'xx'"):
        binding("AUTO:/dir:rw:xx")


def test_parse_bindings_fails_on_the_first_bad_string() -> None:
    assert parse_bindings([]) == []
    with pytest.raises(PluginError):
        parse_bindings(["AUTO:/a:rw:1G", "bad"])


# §3 kinds and predicates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [("AUTO", True), ("/x/AUTO", True), ("/dataAUTO", True), ("", True), ("auto", False), ("/AUTO/x", False)],
)
def test_require_schedule_is_a_case_sensitive_auto_suffix_or_empty_source(source: str, expected: bool) -> None:
    assert binding(f"{source}:/d:rw:1G").require_schedule is expected


def test_monopoly_needs_scheduling_so_a_mount_with_m_is_not_monopoly() -> None:
    assert binding("AUTO:/d:mrw:1G").monopoly
    assert not binding("/mnt:/d:mrw:1G").monopoly


def test_unlimited_is_an_auto_binding_without_size_or_quota() -> None:
    assert binding("AUTO:/d:rw").unlimited
    assert not binding("AUTO:/d:rw:0:100:0:0:0").unlimited
    assert not binding("/mnt:/d:rw").unlimited


def test_require_iops_counts_only_positive_quota_and_valid_io_rejects_negative() -> None:
    negative = binding("/mnt:/d:rw:0:-1:0:0:0")
    assert not negative.require_iops
    assert not negative.valid_io
    assert binding("/mnt:/d:rw:0:0:0:0:1").require_iops


def test_binding_key_and_quota() -> None:
    b = binding("AUTO:/d:wr:1G:1:2:3:4")
    assert b.key == ("AUTO", "/d", "rw")
    assert b.quota == (1, 2, 3, 4)


def test_need_schedule_when_any_binding_needs_placement_or_iops() -> None:
    assert not need_schedule(parse_bindings(["/mnt:/d:rw", "/a:/b:rw:1G"]))
    assert need_schedule(parse_bindings(["/mnt:/d:rw", "AUTO:/x:rw"]))
    assert need_schedule(parse_bindings(["/mnt:/d:rw:0:1:0:0:0"]))
    assert not need_schedule([])


@pytest.mark.parametrize("text", ["AUTO:/dir:mrw", "AUTO:/dir:mrw:-1G", "AUTO:/dir:mrw:0:100:100:1M:1M"])
def test_validate_bindings_requires_a_positive_monopoly_size(text: str) -> None:
    with pytest.raises(PluginError, match="invalid volume"):
        validate_bindings([binding(text)])


def test_validate_bindings_rejects_negative_quota_and_accepts_negative_plain_sizes() -> None:
    with pytest.raises(PluginError, match="invalid io parameters"):
        validate_bindings([binding("/a:/b:rw:0:0:-1:0:0")])
    validate_bindings(parse_bindings(["AUTO:/d:rw:-1G", "/a:/b:xyz", "a:/b", "AUTO:/d:rw:1G"]))


# §4 rendering --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "stored", "engine"),
    [
        ("AUTO:/dir:mrw:1G", "AUTO:/dir:mrw:1073741824:0:0:0:0", "AUTO:/dir:rw:1073741824"),
        ("/src:/dst", "/src:/dst:rw:0:0:0:0:0", "/src:/dst:rw:0"),
        ("/a:/b:ro", "/a:/b:ro:0:0:0:0:0", "/a:/b:ro:0"),
        ("/a:/b:orw", "/a:/b:rowo:0:0:0:0:0", "/a:/b:rowo:0"),
        (
            "AUTO:/dir:orw:1G:100:100:1M:1M",
            "AUTO:/dir:rowo:1073741824:100:100:1048576:1048576",
            "AUTO:/dir:rowo:1073741824:100:100:1048576:1048576",
        ),
        ("AUTO:/x:m:1G", "AUTO:/x:m:1073741824:0:0:0:0", "AUTO:/x::1073741824"),
        ("/a:/b:rw:0:0:-1:0:0", "/a:/b:rw:0:0:-1:0:0", "/a:/b:rw:0:0:-1:0:0"),
    ],
)
def test_to_string_renders_stored_and_engine_forms(text: str, stored: str, engine: str) -> None:
    b = binding(text)
    assert b.to_string() == stored
    assert str(b) == stored
    assert b.to_string(normalize=True) == engine


def test_engine_form_of_empty_flags_and_size_is_just_source_and_destination() -> None:
    assert VolumeBinding("/a", "/b", "", 0).to_string(normalize=True) == "/a:/b"


def test_rendered_readonly_flags_reparse_to_a_different_key_but_render_stably() -> None:
    again = binding(binding("/a:/b:orw").to_string())
    assert again.flags == "oorw"
    assert again.to_string() == "/a:/b:rowo:0:0:0:0:0"


def test_binding_copy_is_independent() -> None:
    original = binding("AUTO:/d:rw:1G")
    clone = original.copy()
    clone.size = 5
    assert original.size == GiB


def test_merge_bindings_sums_by_key_and_drops_negative_sizes() -> None:
    base = parse_bindings(["AUTO:/dir1:rw:2G:100:100:0:0"])
    (merged,) = merge_bindings(parse_bindings(["AUTO:/dir1:rw:1G:50:50:0:0"]), base)
    assert (merged.size, merged.read_iops) == (3 * GiB, 150)
    (zero,) = merge_bindings(parse_bindings(["AUTO:/dir1:rw:-2G"]), base)
    assert zero.size == 0
    assert merge_bindings(parse_bindings(["AUTO:/dir1:rw:-3G"]), base) == []
    two = merge_bindings(parse_bindings(["AUTO:/dir2:rw:1G"]), base)
    assert sorted(b.destination for b in two) == ["/dir1", "/dir2"]
    assert base[0].size == 2 * GiB
