"""Workload resources and engine params (storage/workload.py) against the examples of
spec/storage-types.md."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend.errors import PluginError
from resource_extend.formats import jsonio
from resource_extend.storage.binding import parse_bindings
from resource_extend.storage.plan import VolumePlan, apply_plan
from resource_extend.storage.scheduler.resize import delta_resource
from resource_extend.storage.scheduler.workloads import volume_changed
from resource_extend.storage.workload import (
    EngineParams,
    WorkloadResource,
    disks_limit,
    engine_volumes,
    iops_options,
    plan_limit,
)
from tests.support import GiB, MiB, TiB, binding, disk

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
