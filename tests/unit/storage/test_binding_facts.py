"""Every fact in tests/vectors/storage-parsing.json, run against the storage value types.

Each fact names a ``function``; each function has a runner here that returns what the fact's ``output``
describes. A fact whose function has no runner fails, and the per-function counts are pinned, so an entry
can be neither skipped silently nor lost.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from resource_extend.errors import PluginError
from resource_extend.storage.binding import VolumeBinding, parse_bindings
from resource_extend.storage.disk import Disk, disk_by_path, disks_add, disks_sub
from resource_extend.storage.node_request import NodeRequest
from resource_extend.storage.plan import VolumePlan
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler.resize import merge_bindings
from resource_extend.storage.size import parse_size
from resource_extend.storage.volume import volumes_add, volumes_sub, volumes_total
from resource_extend.storage.workload import disks_limit
from resource_extend.storage.workload_request import WorkloadRequest

FACTS_PATH = Path(__file__).resolve().parents[2] / "vectors" / "storage-parsing.json"
FACTS: list[dict[str, Any]] = json.loads(FACTS_PATH.read_text())

EXPECTED_COUNTS = {
    "parse_size": 37,
    "parse_volume_binding": 19,
    "parse_disk": 7,
    "classify_volume_binding": 6,
    "volume_binding_to_string": 5,
    "parse_node_resource_request": 5,
    "validate_node_resource_info": 4,
    "get_disk_by_path": 3,
    "merge_volume_bindings": 3,
    "disks_add": 3,
    "validate_workload_resource_request": 3,
    "get_disks_limit": 2,
    "disk_to_string": 1,
    "volume_plan_merge": 1,
    "volume_plan_json_roundtrip": 1,
    "volumes_arithmetic": 1,
    "disks_sub": 1,
    "skip_empty": 1,
}


def _binding_fields(text: str) -> dict[str, Any]:
    b = VolumeBinding.parse(text)
    return {
        "source": b.source,
        "destination": b.destination,
        "flags": b.flags,
        "size_in_bytes": b.size,
        "read_iops": b.read_iops,
        "write_iops": b.write_iops,
        "read_bps": b.read_bps,
        "write_bps": b.write_bps,
    }


def _classify(text: str) -> dict[str, bool]:
    b = VolumeBinding.parse(text)
    return {
        "require_schedule": b.require_schedule,
        "monopoly": b.monopoly,
        "unlimited": b.unlimited,
        "require_iops": b.require_iops,
    }


def _to_string(given: dict[str, Any]) -> str:
    return VolumeBinding.parse(given["binding"]).to_string(normalize=given["normalize"])


def _disks(items: list[dict[str, Any]]) -> list[Disk]:
    return [Disk.from_json(item) for item in items]


def _disk_by_path(given: dict[str, Any]) -> str | None:
    found = disk_by_path(_disks(given["disks"]), given["path"])
    return None if found is None else found.device


def _merge(given: dict[str, Any]) -> list[str]:
    # The reference's merge order is map order; the contract is the set of merged bindings.
    merged = merge_bindings(parse_bindings(given["new"]), parse_bindings(given["base"]))
    return sorted(binding.to_string() for binding in merged)


def _plan_merge(given: dict[str, Any]) -> dict[str, Any]:
    plan = VolumePlan.from_json(given["plan"])
    for other in given["merge"]:
        plan = plan.merged(VolumePlan.from_json(other))
    return plan.to_json()


def _volumes_arithmetic(given: dict[str, Any]) -> dict[str, Any]:
    after_add = volumes_add(given["start"], given["add"])
    after_sub = volumes_sub(after_add, given["sub"])
    return {"after_add": after_add, "after_sub": after_sub, "total": volumes_total(after_sub)}


def _node_request(given: dict[str, Any]) -> dict[str, Any]:
    request = NodeRequest.parse(given)
    return {
        "volumes": request.volumes,
        "storage": request.storage,
        "disks": [disk.to_json() for disk in request.disks],
        "rm_disks": request.rm_disks,
    }


def _skip_empty(given: dict[str, Any]) -> dict[str, Any]:
    request = NodeRequest.parse(given["request"]).skip_empty(NodeResource.from_json(given["origin"]))
    return dict(request.as_resource().to_json())


def _validate_record(given: dict[str, Any]) -> dict[str, Any]:
    return dict(StorageRecord.from_json(given).validated().to_json())


def _validate_workload_request(given: dict[str, Any]) -> dict[str, Any]:
    request = WorkloadRequest.parse(given).validated()
    return {
        "volumes_request": [b.to_string() for b in request.volumes_request],
        "volumes_limit": [b.to_string() for b in request.volumes_limit],
        "storage_request": request.storage_request,
        "storage_limit": request.storage_limit,
    }


def _disks_limit(given: dict[str, Any]) -> list[dict[str, Any]]:
    limit = parse_bindings(given["limit"])
    result = disks_limit(limit, VolumePlan.from_json(given["plan_limit"]), _disks(given["disks"]))
    return [disk.to_json() for disk in result]


RUNNERS: dict[str, Callable[[Any], Any]] = {
    "parse_size": parse_size,
    "parse_volume_binding": _binding_fields,
    "classify_volume_binding": _classify,
    "volume_binding_to_string": _to_string,
    "parse_disk": lambda text: Disk.parse(text).to_json(),
    "disk_to_string": lambda obj: Disk.from_json(obj).disk_string(),
    "get_disk_by_path": _disk_by_path,
    "merge_volume_bindings": _merge,
    "volume_plan_merge": _plan_merge,
    "volume_plan_json_roundtrip": lambda obj: VolumePlan.from_json(obj).to_json(),
    "volumes_arithmetic": _volumes_arithmetic,
    "disks_add": lambda given: [d.to_json() for d in disks_add(_disks(given["disks"]), _disks(given["add"]))],
    "disks_sub": lambda given: [d.to_json() for d in disks_sub(_disks(given["disks"]), _disks(given["sub"]))],
    "parse_node_resource_request": _node_request,
    "skip_empty": _skip_empty,
    "validate_node_resource_info": _validate_record,
    "validate_workload_resource_request": _validate_workload_request,
    "get_disks_limit": _disks_limit,
}


def _fact_id(index: int) -> str:
    fact = FACTS[index]
    return f"{index}-{fact['function']}-{json.dumps(fact['input'])[:40]}"


def test_every_fact_has_a_runner_and_none_is_missing() -> None:
    counts = Counter(fact["function"] for fact in FACTS)
    assert dict(counts) == EXPECTED_COUNTS
    assert set(counts) <= set(RUNNERS)
    assert all(("output" in fact) != fact.get("error", False) for fact in FACTS)


@pytest.mark.parametrize("index", range(len(FACTS)), ids=_fact_id)
def test_fact(index: int) -> None:
    fact = FACTS[index]
    run = RUNNERS[fact["function"]]
    if fact.get("error"):
        with pytest.raises(PluginError):
            run(fact["input"])
    else:
        expected = fact["output"]
        if fact["function"] == "merge_volume_bindings":
            expected = sorted(expected)
        assert run(fact["input"]) == expected


def test_fact_parametrisation_covers_the_whole_file() -> None:
    assert len(FACTS) == sum(EXPECTED_COUNTS.values()) == 103
