"""Volume plans (storage/plan.py) against the examples of spec/storage-types.md."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.errors import PluginError
from resource_extend.storage.binding import VolumeBinding, parse_bindings
from resource_extend.storage.plan import PlanEntry, VolumePlan, apply_plan
from resource_extend.storage.volume import first_volume
from tests.support import GiB, binding

# §7 volumes and plans ------------------------------------------------------------------------------------


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


# Lookups by an index built once, against the linear scan they replaced ---------------------------------


def scanned_lookup(plan: VolumePlan, wanted: VolumeBinding) -> PlanEntry | None:
    """The linear scan ``lookup`` was: the first entry planned for the destination."""
    return next((entry for entry in plan.entries if entry[0].destination == wanted.destination), None)


def scanned_merged(plan: VolumePlan, other: VolumePlan) -> VolumePlan:
    """``merged`` as it was: a scan and a list removal per entry of ``other``."""
    result = plan.copy()
    for entry_binding, volumes in other.entries:
        device, size = first_volume(volumes)
        old = scanned_lookup(result, entry_binding)
        if old is None:
            result.entries.append((entry_binding.copy(), dict(volumes)))
            continue
        result.entries.remove(old)
        old_binding, old_volumes = old
        combined = VolumeBinding(
            entry_binding.source,
            entry_binding.destination,
            entry_binding.flags,
            entry_binding.size + old_binding.size,
            *entry_binding.quota.plus(old_binding.quota),
        )
        result.entries.append((combined, {device: size + first_volume(old_volumes)[1]}))
    return result


def scanned_apply_plan(bindings: list[VolumeBinding], plan: VolumePlan) -> list[VolumeBinding]:
    applied = []
    for each in bindings:
        copy = each.copy()
        entry = scanned_lookup(plan, each)
        if entry is not None:
            copy.source, size = first_volume(entry[1])
            copy.size = max(copy.size, size)
        applied.append(copy)
    return applied


# Few destinations, so plans repeat them (within one plan too, as flags tell keys apart) and merges collide.
planned_bindings = st.builds(
    lambda destination, flags, size, iops: binding(f"AUTO:/{destination}:{flags}:{size}:{iops}:0:0:0"),
    st.sampled_from("abcd"),
    st.sampled_from(["rw", "ro", "rwm"]),
    st.integers(1, 4),
    st.integers(0, 2),
)
plans = st.lists(st.tuples(planned_bindings, st.sampled_from(["/data0", "/data1"]), st.integers(0, 9)), max_size=8).map(
    lambda rows: VolumePlan([(each, {device: size}) for each, device, size in rows])
)


@settings(max_examples=300, deadline=None)
@given(plans, plans, st.lists(planned_bindings, max_size=6))
def test_plan_lookups_answer_as_the_linear_scan_did(
    plan: VolumePlan, other: VolumePlan, wanted: list[VolumeBinding]
) -> None:
    for each in wanted:
        assert plan.lookup(each) == scanned_lookup(plan, each)
    assert plan.merged(other) == scanned_merged(plan, other)
    assert plan.merged(other).to_json() == scanned_merged(plan, other).to_json()
    assert apply_plan(wanted, plan) == scanned_apply_plan(wanted, plan)
