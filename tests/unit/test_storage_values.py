"""The storage value types against the tables and examples of spec/storage-types.md."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend import jsonio
from resource_extend.errors import PluginError
from resource_extend.storage.binding import (
    VolumeBinding,
    merge_bindings,
    need_schedule,
    parse_bindings,
    validate_bindings,
)
from resource_extend.storage.disk import (
    Disk,
    disk_by_device,
    disk_by_path,
    disks_add,
    disks_sub,
    remove_mounts,
)
from resource_extend.storage.plan import VolumePlan, apply_plan
from resource_extend.storage.record import NodeResource, StorageRecord, combine, reconcile_usage
from resource_extend.storage.request import NodeRequest, WorkloadRequest, rollback_resource
from resource_extend.storage.size import parse_size, size_param
from resource_extend.storage.volume import first_volume, volumes_add, volumes_sub, volumes_total
from resource_extend.storage.workload import (
    EngineParams,
    WorkloadResource,
    delta_resource,
    disks_limit,
    engine_volumes,
    iops_options,
    plan_limit,
    volume_changed,
)

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40


def binding(text: str) -> VolumeBinding:
    return VolumeBinding.parse(text)


def disk(device: str, mounts: list[str] | None = None, *quota: int) -> Disk:
    return Disk(device, mounts, *quota)


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


# §5 workload requests ------------------------------------------------------------------------------------


def test_workload_request_aliases_pick_the_first_non_empty_list() -> None:
    request = WorkloadRequest.parse(
        {
            "volumes-request": [],
            "volume-request": ["AUTO:/dir:rw:1G", 7],
            "volumes": "not a list",
            "volume": ["AUTO:/dir:rw:2G"],
            "volume-limit": ["AUTO:/dir:rw:3G"],
        }
    )
    assert [b.size for b in request.volumes_request] == [GiB]
    assert [b.size for b in request.volumes_limit] == [2 * GiB]


def test_workload_request_uses_the_limits_as_requests_when_only_limits_are_given() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/dir:rw:1G"]})
    assert request.volumes_request == request.volumes_limit
    assert request.volumes_request[0] is not request.volumes_limit[0]


def test_workload_request_storage_key_overrides_request_and_limit() -> None:
    both = {"storage-request": "5G", "storage-limit": "5G"}
    assert WorkloadRequest.parse({**both, "storage": "1G"}).storage_request == GiB
    assert WorkloadRequest.parse({**both, "storage": None}).storage_limit == 0
    assert WorkloadRequest.parse({**both, "storage": 2 * GiB}).storage_request == 2 * GiB
    assert WorkloadRequest.parse({"storage-request": float(GiB)}).storage_request == GiB


def test_workload_request_parse_errors_are_verb_errors() -> None:
    with pytest.raises(PluginError, match="invalid volume"):
        WorkloadRequest.parse({"volumes": ["bad"]})
    with pytest.raises(PluginError, match="invalid size"):
        WorkloadRequest.parse({"storage": "xx"})


CONSEQUENCES: list[tuple[dict[str, Any], int, int]] = [
    ({"volumes": ["/src:/dst:rw:1G"], "storage": "1G"}, 2 * GiB, 2 * GiB),
    ({"volumes-request": ["/src:/dst:rw:2G"], "volumes": ["/src:/dst:rw:1G"]}, 2 * GiB, 2 * GiB),
    ({"volumes-request": ["/src:/dst:rw:1G"], "volumes": ["/src:/dst:rw"]}, GiB, 0),
    ({"volumes": ["/src:/dst"], "storage-request": "1G"}, GiB, 0),
    ({"volumes": ["/src:/dst"], "storage-limit": "1G"}, GiB, GiB),
    ({"volumes": ["/src:/dst"], "storage-request": "2G", "storage-limit": "1G"}, 2 * GiB, 2 * GiB),
    (
        {"volumes": ["/src:/dst"], "storage-request": "5G", "storage-limit": "5G", "storage": "1G"},
        GiB,
        GiB,
    ),
]


@pytest.mark.parametrize(("req", "storage_request", "storage_limit"), CONSEQUENCES)
def test_validation_settles_and_folds_storage_as_the_consequences_table(
    req: dict[str, Any], storage_request: int, storage_limit: int
) -> None:
    request = WorkloadRequest.parse(req).validated()
    assert (request.storage_request, request.storage_limit) == (storage_request, storage_limit)


def test_deploy_capacity_request_folds_the_monopoly_size_into_storage() -> None:
    req = {"volumes": ["AUTO:/dir0:rwm:1G"], "storage": "1099511627776"}
    assert WorkloadRequest.parse(req).validated().storage_request == TiB + GiB


def test_validation_raises_limits_to_requests() -> None:
    request = WorkloadRequest.parse(
        {
            "volume-request": ["AUTO:/dir:rw:2G:100:100:0:0"],
            "volume-limit": ["AUTO:/dir:rw:1G:50:50:0:0"],
            "storage-request": "2G",
            "storage-limit": "1G",
        }
    ).validated()
    assert request.volumes_limit[0].size == 2 * GiB
    assert request.volumes_limit[0].read_iops == 100
    assert request.storage_request == request.storage_limit


def test_validation_sorts_both_lists_by_stored_form() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/b:rw:1G", "AUTO:/a:rw:2G", "/m:/c"]}).validated()
    assert [b.destination for b in request.volumes_request] == ["/c", "/a", "/b"]
    assert [b.to_string() for b in request.volumes_limit] == [b.to_string() for b in request.volumes_request]


def test_validation_never_changes_the_request_it_is_called_on() -> None:
    request = WorkloadRequest.parse({"volume-request": ["AUTO:/b:rw:2G", "AUTO:/a:rw:1G"], "volume": []})
    request.volumes_limit = parse_bindings(["AUTO:/b:rw:1G", "AUTO:/a:rw:1G"])
    before = [b.to_string() for b in request.volumes_limit]
    request.validated()
    assert [b.to_string() for b in request.volumes_limit] == before


def test_validation_without_folding_keeps_storage_as_given() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/dir:rw:1G"], "storage-request": "1G"})
    assert request.validated().storage_request == 2 * GiB
    assert request.validated(fold=False).storage_request == GiB


def test_empty_request_is_valid_and_untouched() -> None:
    assert WorkloadRequest.parse({}).validated() == WorkloadRequest()


@pytest.mark.parametrize(
    ("request_list", "limit_list"),
    [
        (["AUTO:/dir1:rw:1G", "AUTO:/dir2:rw:1G"], ["AUTO:/dir1:rw:1G"]),
        (["AUTO:/dir1:rw:1G"], ["AUTO:/other:rw:1G"]),
        (["AUTO:/dir:mrw"], ["AUTO:/dir:mrw"]),
        (["AUTO:/dir:rw:0:-1:0:0:0"], ["AUTO:/dir:rw:0:-1:0:0:0"]),
    ],
)
def test_validation_rejects_unpaired_or_invalid_bindings_as_invalid_volume(
    request_list: list[str], limit_list: list[str]
) -> None:
    request = WorkloadRequest(parse_bindings(request_list), parse_bindings(limit_list))
    with pytest.raises(PluginError, match="invalid volume"):
        request.validated()


def test_request_only_bindings_fail_with_a_length_mismatch() -> None:
    with pytest.raises(PluginError, match="different length"):
        WorkloadRequest.parse({"volumes-request": ["AUTO:/d:rw:1G"]}).validated()


def test_negative_storage_is_invalid_storage_but_a_volume_error_wins() -> None:
    with pytest.raises(PluginError, match="invalid storage"):
        WorkloadRequest.parse({"storage": "-1"}).validated()
    with pytest.raises(PluginError, match="invalid volume"):
        WorkloadRequest.parse({"volumes-request": ["AUTO:/d:rw:1G"], "storage": "-1"}).validated()


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


def test_realloc_merge_adds_the_request_sizes_into_the_storages_once() -> None:
    current = WorkloadResource(
        volumes_request=parse_bindings(["AUTO:/d:rw:1G"]),
        volumes_limit=parse_bindings(["AUTO:/d:rw:1G"]),
        storage_request=3 * GiB,
        storage_limit=4 * GiB,
    )
    merged = WorkloadRequest.parse({"volumes": ["AUTO:/d:rw:1G"], "storage": "1G"}).realloc_merge(current)
    assert [b.size for b in merged.volumes_request] == [2 * GiB]
    assert (merged.storage_request, merged.storage_limit) == (5 * GiB, 6 * GiB)
    assert merged.validated(fold=False).storage_request == 5 * GiB


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
    extra.read_iops = 99
    assert added[1].read_iops == 10
    assert disks_add(added, [disk("/dev/vda", None, 1)])[0].mounts == ["/data"]


def test_disks_add_matches_only_disks_already_in_the_list() -> None:
    twice = disks_add([], [disk("/dev/x", None, 1), disk("/dev/x", None, 2)])
    assert [d.read_iops for d in twice] == [1, 2]


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


def test_plan_json_rerenders_human_keys_and_sorts() -> None:
    plan = VolumePlan.from_json({"AUTO:/dir0:rw:100GiB": {"/data0": 1}, "AUTO:/a:rw:1G": {"/d": 2}})
    assert list(plan.to_json()) == ["AUTO:/a:rw:1073741824:0:0:0:0", "AUTO:/dir0:rw:107374182400:0:0:0:0"]
    assert VolumePlan.from_json(None).to_json() == {}
    assert VolumePlan().to_json() == {}


def test_plan_decoding_fails_on_one_bad_key_or_value() -> None:
    with pytest.raises(PluginError, match="invalid volume"):
        VolumePlan.from_json({"AUTO:/a:rw:1G": {"/d": 1}, "bad": {"/d": 1}})
    with pytest.raises(PluginError):
        VolumePlan.from_json({"AUTO:/a:rw:1G": {"/d": "1G"}})


def test_plan_lookup_compares_destination_only() -> None:
    plan = VolumePlan([(binding("AUTO:/dir:mrw:1G"), {"/data0": GiB})])
    entry = plan.lookup(binding("/other:/dir:ro"))
    assert entry is not None and entry[1] == {"/data0": GiB}
    assert plan.lookup(binding("AUTO:/elsewhere")) is None


def test_apply_plan_moves_planned_bindings_and_grows_them() -> None:
    bindings = parse_bindings(["AUTO:/dir1:mrw:1G", "/mnt:/dir2:rw"])
    plan = VolumePlan([(bindings[0], {"/data0": 4 * GiB})])
    applied = apply_plan(bindings, plan)
    assert [b.to_string() for b in applied] == ["/data0:/dir1:mrw:4294967296:0:0:0:0", "/mnt:/dir2:rw:0:0:0:0:0"]
    assert bindings[0].source == "AUTO"
    bigger = apply_plan(parse_bindings(["AUTO:/dir1:rw:8G"]), plan)
    assert bigger[0].size == 8 * GiB


def test_plan_merge_sums_entries_for_the_same_destination() -> None:
    plan = VolumePlan([(binding("AUTO:/dir1:rw:1G"), {"/data0": GiB})])
    plan = plan.merged(VolumePlan([(binding("AUTO:/dir2:rw:1G"), {"/data1": GiB})]))
    assert len(plan) == 2
    expand = VolumePlan([(binding("AUTO:/dir1:rw:2G:1:0:0:0"), {"/data0": 2 * GiB})])
    merged = plan.merged(expand)
    entry = merged.lookup(binding("AUTO:/dir1"))
    assert entry is not None
    assert (entry[0].size, entry[0].read_iops, entry[1]) == (3 * GiB, 1, {"/data0": 3 * GiB})
    assert len(merged) == 2
    assert expand.entries[0][1] == {"/data0": 2 * GiB}
    assert plan.lookup(binding("AUTO:/dir1")) == (binding("AUTO:/dir1:rw:1G"), {"/data0": GiB})


def test_plan_volumes_sums_per_device_and_add_appends() -> None:
    plan = VolumePlan()
    plan.add(binding("AUTO:/a:rw:1G"), "/d0", 1)
    plan.add(binding("AUTO:/b:rw:1G"), "/d0", 2)
    plan.add(binding("AUTO:/c:rw:1G"), "/d1", 3)
    assert plan.volumes() == {"/d0": 3, "/d1": 3}
    assert [entry[0].destination for entry in plan] == ["/a", "/b", "/c"]


# §8 node requests ----------------------------------------------------------------------------------------


def test_node_request_parse_folds_volumes_into_storage() -> None:
    request = NodeRequest.parse(
        {
            "volumes": ["/data0:1T", "/data1:1G", 3],
            "storage": "1G",
            "disks": ["/dev/vda:/,/data0:100:200:1G:2G"],
            "rm-disks": "/dev/vdb,/dev/vdc",
        }
    )
    assert request.volumes == {"/data0": TiB, "/data1": GiB}
    assert request.storage == TiB + 2 * GiB
    assert [d.device for d in request.disks] == ["/dev/vda"]
    assert request.rm_disks == ["/dev/vdb", "/dev/vdc"]


@pytest.mark.parametrize("storage", ["100G", 107374182400, 107374182400.0])
def test_node_request_storage_takes_both_forms(storage: object) -> None:
    assert NodeRequest.parse({"volumes": ["/data0:1G"], "storage": storage}).storage == 101 * GiB


def test_node_request_details() -> None:
    assert NodeRequest.parse({"volumes": ["/d:1G", "/d:2G"]}).volumes == {"/d": 2 * GiB}
    assert NodeRequest.parse({"rm-disks": 5}).rm_disks == [""]
    assert NodeRequest.parse({}).rm_disks is None
    request = NodeRequest.parse({"volumes": "nope", "disks": None})
    assert (request.volumes, request.disks, request.present) == ({}, [], frozenset({"volumes", "disks"}))


@pytest.mark.parametrize(
    ("req", "message"),
    [
        ({"volumes": ["/data0"]}, "invalid volume"),
        ({"volumes": ["/data0:1:2"]}, "invalid volume"),
        ({"volumes": ["/data0:xx"]}, "invalid size"),
        ({"storage": "xx"}, "invalid size"),
        ({"disks": ["/dev/vda:/:x:1:1:1"]}, "wrong disk format: /dev/vda:/:x:1:1:1"),
    ],
)
def test_node_request_parse_errors(req: dict[str, Any], message: str) -> None:
    with pytest.raises(PluginError, match=message):
        NodeRequest.parse(req)


@pytest.mark.parametrize(
    ("req", "storage_total", "storage"),
    [
        ({"volumes": ["/data0:1T"]}, 10**12, TiB),
        ({}, 10**12, 800000000000),
        ({}, 0, 0),
        ({}, 15, 12),
        ({"storage": "1G"}, 10**12, GiB),
    ],
)
def test_add_node_capacity_defaults_to_80_percent_of_the_engine_total(
    req: dict[str, Any], storage_total: int, storage: int
) -> None:
    assert NodeRequest.parse(req).capacity_for_add(storage_total).storage == storage


def test_skip_empty_fills_absent_keys_from_the_stored_capacity() -> None:
    stored = NodeResource({"/data0": GiB}, [disk("/dev/vda")], 3 * GiB)
    kept = NodeRequest.parse({}).skip_empty(stored).as_resource()
    assert kept == stored
    changed = NodeRequest.parse({"volumes": ["/data0:4G"]}).skip_empty(stored).as_resource()
    assert changed == NodeResource({"/data0": 4 * GiB}, [disk("/dev/vda")], 6 * GiB)
    given = NodeRequest.parse({"storage": "1G", "disks": []}).skip_empty(stored).as_resource()
    assert given == NodeResource({"/data0": GiB}, [], GiB)


def test_rollback_is_recognised_only_for_an_absolute_full_parsed_resource() -> None:
    before = {"volumes": {"/d": 1}, "disks": [], "storage": 5}
    assert rollback_resource(None, before, False, False) == NodeResource({"/d": 1}, [], 5)
    assert rollback_resource("x", before, False, False) is not None
    assert rollback_resource({}, before, False, False) is None
    assert rollback_resource(None, before, True, False) is None
    assert rollback_resource(None, before, False, True) is None
    assert rollback_resource(None, {"volumes": {}, "disks": []}, False, False) is None
    assert rollback_resource(None, {**before, "volumes": ["/d:1G"]}, False, False) is None


# §9 parsed node resources, §10 records -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [{"storage": "1T"}, {"storage": 1.5}, {"volumes": ["/d:1G"]}, {"volumes": {"/d": "1G"}}, {"disks": {}}, []]
)
def test_parsed_node_resource_is_decoded_strictly(value: Any) -> None:
    with pytest.raises(PluginError):
        NodeResource.from_json(value)


def test_parsed_node_resource_ignores_unknown_keys_and_keeps_absent_ones_null() -> None:
    resource = NodeResource.from_json({"storage": 3.0, "extra": "x", "Storage": 9})
    assert resource == NodeResource(None, None, 3)
    assert resource.to_json() == {"volumes": None, "disks": None, "storage": 3}


STORED = (
    '{"capacity":{"volumes":{"/data0":1099511627776,"/data1":1},"disks":[{"device":"/dev/vda",'
    '"mounts":["/","/data0"],"read_IOPS":1000,"write_IOPS":1000,"read_bps":1073741824,'
    '"write_bps":1073741824}],"storage":2199023255552},"usage":{"volumes":{"/data0":0},"disks":[],"storage":0}}'
)


@pytest.mark.parametrize(
    "text",
    [
        STORED,
        '{"capacity":{"volumes":{},"disks":[],"storage":0},"usage":{"volumes":{},"disks":[],"storage":0}}',
        '{"capacity":{"volumes":{"/a":1},"disks":null,"storage":1},"usage":{"volumes":null,"disks":[],"storage":0}}',
        '{"capacity":null,"usage":null}',
    ],
)
def test_stored_record_round_trips_byte_for_byte(text: str) -> None:
    record = StorageRecord.from_json(jsonio.loads_request(text.encode()))
    assert jsonio.dumps(record.to_json()) == text


def test_stored_record_writes_volume_keys_sorted() -> None:
    record = StorageRecord(NodeResource({"/b": 1, "/a": 2}), NodeResource())
    assert jsonio.dumps(record.to_json()).startswith('{"capacity":{"volumes":{"/a":2,"/b":1}')


def test_empty_record_shape() -> None:
    assert StorageRecord.empty().to_json() == {
        "capacity": {"volumes": {}, "disks": [], "storage": 0},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
    }


def test_node_resource_arithmetic_follows_the_reference_example() -> None:
    res = NodeResource({"/data0": 10}, [], 100)
    added = res.add(NodeResource({"/data1": 5}, None, 50))
    assert (added.storage, added.volumes) == (150, {"/data0": 10, "/data1": 5})
    back = added.sub(NodeResource({"/data1": 5}, None, 50)).without_empty_volumes()
    assert back.volumes == {"/data0": 10}
    assert res == NodeResource({"/data0": 10}, [], 100)
    clone = res.copy()
    assert clone.volumes is not None
    clone.volumes["/data0"] = 0
    assert res.volumes == {"/data0": 10}


def test_node_resource_copy_turns_missing_fields_empty_like_the_reference() -> None:
    assert NodeResource(None, None, 1).copy() == NodeResource({}, [], 1)
    assert NodeResource(None, None, 1).without_empty_volumes().volumes is None


def test_available_is_capacity_minus_usage() -> None:
    record = StorageRecord(
        NodeResource({"/d": 10}, [disk("/dev/a", ["/"], 10, 10, 10, 10)], 100),
        NodeResource({"/d": 4}, [disk("/dev/a", None, 1, 2, 3, 4)], 40),
    )
    assert record.available() == NodeResource({"/d": 6}, [disk("/dev/a", ["/"], 9, 8, 7, 6)], 60)


def capacity_example() -> NodeResource:
    return NodeResource({"/data0": GiB}, [disk("/dev/vda", ["/"], 100)], GiB)


def test_validation_requires_capacity_and_synthesizes_usage() -> None:
    with pytest.raises(PluginError, match="invalid capacity"):
        StorageRecord(None, None).validated()
    record = StorageRecord(capacity_example(), None).validated()
    assert record.usage == NodeResource({"/data0": 0}, [disk("/dev/vda", ["/"])], 0)


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        (NodeResource({"/data0": 2 * GiB}, [], 0), "invalid volume"),
        (NodeResource({"/data0": -1}, [], 0), "invalid volume"),
        (NodeResource({"/data0": 0}, [], -1), "invalid storage"),
        (NodeResource({"/data0": 0}, [disk("/dev/vda", ["/"], 200)], 0), "invalid disk"),
        (NodeResource({}, [disk("/dev/vda", None, 0, -1)], 0), "invalid disk"),
        (NodeResource({}, [disk("/dev/gone", None, 1)], 0), "disk /dev/gone not found in capacity"),
    ],
)
def test_validation_rejects_bad_usage(usage: NodeResource, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        StorageRecord(capacity_example(), usage).validated()


@pytest.mark.parametrize(
    ("capacity", "message"),
    [
        (NodeResource({"/d": -1}, [], 0), "invalid volume"),
        (NodeResource({}, [], -1), "invalid storage"),
        (NodeResource({}, [disk("/dev/a", None, -1)], 0), "invalid disk"),
    ],
)
def test_validation_rejects_negative_capacity(capacity: NodeResource, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        StorageRecord(capacity, NodeResource()).validated()


def test_validation_reports_every_group_that_fails() -> None:
    record = StorageRecord(NodeResource({"/d": -1}, [disk("/dev/a", None, -1)], -1), NodeResource())
    with pytest.raises(PluginError) as caught:
        record.validated()
    for text in ("invalid volume", "invalid storage", "invalid disk"):
        assert text in str(caught.value)
    assert "\n" not in str(caught.value)


def test_validation_allows_usage_over_capacity_storage_and_unknown_usage_volumes() -> None:
    StorageRecord(NodeResource({}, [], 1), NodeResource({"/unknown": 5}, [], 2)).validated()


def test_validation_sorts_disks_copies_mounts_and_scrubs_zero_orphans_without_mutating() -> None:
    capacity = NodeResource({}, [disk("/dev/vdb", ["/b"], 9), disk("/dev/vda", ["/a"], 9)], 0)
    usage = NodeResource({}, [disk("/dev/vdb", None, 1), disk("/dev/gone"), disk("/dev/vda", ["/x"])], 0)
    record = StorageRecord(capacity, usage)
    result = record.validated()
    assert result.capacity is not None and result.usage is not None
    assert [d.device for d in result.capacity.disks or ()] == ["/dev/vda", "/dev/vdb"]
    assert result.usage.disks == [disk("/dev/vda", ["/a"]), disk("/dev/vdb", ["/b"], 1)]
    assert [d.device for d in capacity.disks or ()] == ["/dev/vdb", "/dev/vda"]
    assert len(usage.disks or ()) == 3
    assert StorageRecord(NodeResource({}, [], 0), NodeResource({}, [disk("/dev/gone")], 0)).validated().usage == (
        NodeResource({}, [], 0)
    )


def test_validation_keeps_null_fields_null() -> None:
    record = StorageRecord(NodeResource({"/a": 1}, None, 1), NodeResource(None, [], 0)).validated()
    assert record.to_json() == {
        "capacity": {"volumes": {"/a": 1}, "disks": None, "storage": 1},
        "usage": {"volumes": None, "disks": [], "storage": 0},
    }


# §8.2 combine, §10.4 usage recomputation -----------------------------------------------------------------

FOUR_TIB = NodeResource({f"/data{i}": TiB for i in range(4)}, [disk("/dev/vda", ["/"], 1)], 4 * TiB)


def test_combine_delta_adds_or_subtracts_and_absolute_rebuilds_from_zero() -> None:
    request = NodeRequest.parse({"volumes": ["/data4:1T"], "storage": "1T"}).as_resource()
    incr = combine(FOUR_TIB, request, [], delta=True, incr=True)
    assert incr.storage == 6 * TiB
    decr = combine(incr, request, [], delta=True, incr=False).without_empty_volumes()
    assert decr.storage == 4 * TiB
    assert decr.volumes is not None and "/data4" not in decr.volumes
    absolute = combine(FOUR_TIB, request, [], delta=False, incr=False)
    assert absolute == NodeResource({"/data4": TiB}, [], 2 * TiB)
    assert combine(FOUR_TIB, None, [], delta=False, incr=True) == NodeResource()


def test_combine_applies_workloads_when_no_resource_is_given() -> None:
    workload = WorkloadResource(
        volume_plan_request=VolumePlan([(binding("AUTO:/d:rw:1G"), {"/data0": GiB})]),
        storage_request=2 * GiB,
        disks_request=[disk("/dev/vda", None, 1)],
    )
    used = combine(NodeResource(), None, [workload, workload], delta=True, incr=True)
    assert used == NodeResource({"/data0": 2 * GiB}, [disk("/dev/vda", None, 2)], 4 * GiB)
    freed = combine(used, None, [workload], delta=True, incr=False)
    assert freed == NodeResource({"/data0": GiB}, [disk("/dev/vda", None, 1)], 2 * GiB)


def test_reconcile_usage_reports_storage_differences() -> None:
    workloads = [WorkloadResource.from_json({"storage_request": 1}), WorkloadResource.from_json({"storage_limit": 1})]
    computed, diffs = reconcile_usage(NodeResource(), workloads)
    assert diffs == ["node.Storage != sum(workload.Storage): 0 != 1"]
    assert computed == NodeResource({}, [], 1)


def test_reconcile_usage_reports_volume_and_disk_differences() -> None:
    stored = NodeResource({"/data0": 5, "/data1": 0}, [disk("/dev/vda", ["/"], 3), disk("/dev/vdb", ["/b"])], 0)
    workload = WorkloadResource(
        volume_plan_request=VolumePlan(
            [(binding("AUTO:/a:rw:1G"), {"/data0": 4}), (binding("AUTO:/b:rw:1G"), {"/data2": 7})]
        ),
        disks_request=[disk("/dev/vda", ["/ignored"], 1), disk("/dev/vdb", None, 0)],
    )
    computed, diffs = reconcile_usage(stored, [workload])
    assert sorted(diffs) == sorted(
        [
            "node.Volumes[/data0] != sum(workload.Volumes[/data0]): 5 != 4",
            "node.Volumes[/data2] != sum(workload.Volumes[/data2]): 0 != 7",
            "node.Disks[/dev/vda] != sum(workload.Disks[/dev/vda]): /dev/vda:/:3:0:0:0 != /dev/vda:/:1:0:0:0",
        ]
    )
    assert computed == NodeResource(
        {"/data0": 4, "/data2": 7}, [disk("/dev/vda", ["/"], 1), disk("/dev/vdb", ["/b"])], 0
    )


def test_reconcile_usage_compares_a_missing_computed_disk_as_zero() -> None:
    _, diffs = reconcile_usage(NodeResource({}, [disk("/dev/x", ["/m"], 1)], 0), [])
    assert diffs == ["node.Disks[/dev/x] != sum(workload.Disks[/dev/x]): /dev/x:/m:1:0:0:0 != /dev/x:/m:0:0:0:0"]


# §11 workload resources, §12 engine params ---------------------------------------------------------------

WORKLOAD = (
    '{"volumes_request":["AUTO:/dir:rw:1073741824:0:0:0:0"],"volumes_limit":["AUTO:/dir:rw:1073741824:0:0:0:0"],'
    '"volume_plan_request":{"AUTO:/dir:rw:1073741824:0:0:0:0":{"/data0":1073741824}},'
    '"volume_plan_limit":{"AUTO:/dir:rw:1073741824:0:0:0:0":{"/data0":1073741824}},'
    '"storage_request":1073741824,"storage_limit":1073741824,"disks_request":[],"disks_limit":null}'
)


def test_workload_resource_round_trips_byte_for_byte() -> None:
    resource = WorkloadResource.from_json(jsonio.loads_request(WORKLOAD.encode()))
    assert jsonio.dumps(resource.to_json()) == WORKLOAD


def test_workload_resource_defaults_missing_keys() -> None:
    assert WorkloadResource.from_json(None).to_json() == {
        "volumes_request": [],
        "volumes_limit": [],
        "volume_plan_request": {},
        "volume_plan_limit": {},
        "storage_request": 0,
        "storage_limit": 0,
        "disks_request": None,
        "disks_limit": None,
    }


@pytest.mark.parametrize(
    "value",
    [
        {"volumes_request": ["bad"]},
        {"volumes_limit": [3]},
        {"volume_plan_limit": {"bad": {"/d": 1}}},
        {"storage_request": "1G"},
        {"disks_request": [{"read_IOPS": "x"}]},
        [],
    ],
)
def test_workload_resource_decoding_fails_on_bad_values(value: Any) -> None:
    with pytest.raises(PluginError):
        WorkloadResource.from_json(value)


def test_plan_limit_keeps_the_limit_headroom_and_skips_mounts() -> None:
    request = parse_bindings(["/m:/mnt:rw", "AUTO:/dir:rw:1G"])
    limit = parse_bindings(["/m:/mnt:rw", "AUTO:/dir:rw:2G"])
    plan = VolumePlan([(request[1], {"/data0": GiB})])
    result = plan_limit(request, limit, plan)
    assert result.to_json() == {"AUTO:/dir:rw:2147483648:0:0:0:0": {"/data0": 2 * GiB}}


def test_plan_limit_matches_by_full_key_not_destination() -> None:
    plan = VolumePlan([(binding("AUTO:/dir:mrw:1G"), {"/data0": GiB})])
    limit = parse_bindings(["AUTO:/dir:rw:1G"])
    assert len(plan_limit(limit, limit, plan)) == 0


def test_disks_limit_charges_mounts_and_planned_devices_to_covering_disks() -> None:
    disks = [disk("/dev/vda", ["/"]), disk("/dev/vdb", ["/data0"]), disk("/dev/vdc", ["/data/sub/"])]
    limit = parse_bindings(["/data/sub/x:/dir:rw:0:100:200:1M:2M", "AUTO:/p:rw:1G:1:2:3:4", "/etc:/e:rw:0:5:0:0:0"])
    limit_plan = VolumePlan([(limit[1], {"/data0": GiB})])
    result = disks_limit(limit, limit_plan, disks)
    assert result == [
        disk("/dev/vdc", ["/data/sub/"], 100, 200, MiB, 2 * MiB),
        disk("/dev/vda", ["/"], 5, 0, 0, 0),
        disk("/dev/vdb", ["/data0"], 1, 2, 3, 4),
    ]
    assert iops_options(result)["/dev/vdc"] == "100:200:1048576:2097152"
    assert disks_limit(limit, limit_plan, []) == []


def test_engine_params_shape() -> None:
    params = EngineParams(
        engine_volumes(parse_bindings(["/src:/dst:orw"])), False, GiB, {"/dev/b": "1:2:3:4", "/dev/a": "0:0:0:0"}
    )
    assert jsonio.dumps(params.to_json()) == (
        '{"volumes":["/src:/dst:rowo:0"],"volume_changed":false,"storage":1073741824,'
        '"iops_options":{"/dev/a":"0:0:0:0","/dev/b":"1:2:3:4"}}'
    )
    assert EngineParams().to_json() == {"volumes": None, "volume_changed": False, "storage": 0, "iops_options": {}}
    assert engine_volumes([]) is None


def test_engine_volume_of_a_monopoly_binding_uses_the_planned_device_and_size() -> None:
    limit = parse_bindings(["AUTO:/dir:wrm:1G"])
    plan = VolumePlan([(limit[0], {"/data0": TiB})])
    assert engine_volumes(apply_plan(limit, plan)) == ["/data0:/dir:rw:1099511627776"]


def test_volume_changed_compares_applied_keys_not_sizes() -> None:
    origin = WorkloadResource(
        volumes_limit=parse_bindings(["AUTO:/d:rw:1G", "/m:/n:rw"]),
        volume_plan_limit=VolumePlan([(binding("AUTO:/d:rw:1G"), {"/data0": GiB})]),
    )
    grown = apply_plan(parse_bindings(["AUTO:/d:rw:2G", "/m:/n:rw"]), origin.volume_plan_limit)
    assert not volume_changed(grown, origin)
    moved = apply_plan(parse_bindings(["AUTO:/d:rw:2G", "/m:/n:rw"]), VolumePlan([(binding("AUTO:/d"), {"/x": 1})]))
    assert volume_changed(moved, origin)
    assert volume_changed(grown[:1], origin)


def test_delta_resource_reports_per_device_differences() -> None:
    origin = WorkloadResource(
        volume_plan_request=VolumePlan([(binding("AUTO:/a:rw:1G"), {"/data0": GiB})]),
        storage_request=GiB,
        disks_request=[disk("/dev/a", None, 5)],
    )
    target = WorkloadResource(
        volume_plan_request=VolumePlan([(binding("AUTO:/a:rw:3G"), {"/data1": 3 * GiB})]),
        storage_request=3 * GiB,
    )
    assert delta_resource(origin, target).to_json() == {
        "volumes_request": [],
        "volumes_limit": [],
        "volume_plan_request": {
            "fake-source:fake-destination:fake-flags:0:0:0:0:0": {"/data0": -GiB, "/data1": 3 * GiB}
        },
        "volume_plan_limit": {},
        "storage_request": 2 * GiB,
        "storage_limit": 0,
        "disks_request": [
            {"device": "/dev/a", "mounts": None, "read_IOPS": -5, "write_IOPS": 0, "read_bps": 0, "write_bps": 0}
        ],
        "disks_limit": None,
    }
    assert delta_resource(origin, origin).disks_request == [disk("/dev/a", None, 0)]
    assert delta_resource(target, target).disks_request == []
