"""Volume plans (storage/plan.py) against the examples of spec/storage-types.md."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.storage.binding import parse_bindings
from resource_extend.storage.plan import VolumePlan, apply_plan
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
