"""What ``resource-storage doctor`` checks in one stored storage record (pure: a decoded record in, findings out)."""

from __future__ import annotations

from resource_extend.plugin.diagnosis import ABOVE_CAPACITY, NEGATIVE, NO_CAPACITY, Finding, GoType
from resource_extend.storage.disk import Disk, Quota, disk_by_device
from resource_extend.storage.record import NodeResource, StorageRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The reference's record: NodeResourceInfo{Capacity, Usage *NodeResource}, as its json tags name the fields.
_DISK: GoType = (
    "struct",
    {
        "device": "string",
        "mounts": ("list", "string"),
        "read_IOPS": "int",
        "write_IOPS": "int",
        "read_bps": "int",
        "write_bps": "int",
    },
)
_RESOURCE: GoType = ("struct", {"volumes": ("map", "int"), "disks": ("list", _DISK), "storage": "int"})
GO_RECORD: GoType = ("struct", {"capacity": _RESOURCE, "usage": _RESOURCE})


def check_record(node: str, record: StorageRecord) -> list[Finding]:
    """Numbers a readable record should not hold: negative ones, and usage the capacity does not cover."""
    capacity = record.capacity or NodeResource()
    usage = record.usage or NodeResource()
    found = _negative(node, "capacity", capacity) + _negative(node, "usage", usage)
    if usage.storage > capacity.storage >= 0:
        found.append(Finding(node, ABOVE_CAPACITY, f"storage: usage {usage.storage} > capacity {capacity.storage}"))
    volumes = capacity.volumes or {}
    for device, used in sorted((usage.volumes or {}).items()):
        if used <= 0:
            continue
        if device not in volumes:
            found.append(Finding(node, NO_CAPACITY, f"usage has volume {device} ({used} bytes), capacity has none"))
        elif used > volumes[device] >= 0:
            found.append(Finding(node, ABOVE_CAPACITY, f"volume {device}: usage {used} > capacity {volumes[device]}"))
    for disk in usage.disks or ():
        if not any(q > 0 for q in disk.quota):
            continue
        have = disk_by_device(capacity.disks or [], disk.device)
        if have is None:
            found.append(Finding(node, NO_CAPACITY, f"usage has disk {disk.device}, capacity has none"))
            continue
        for name, used, cap in zip(Quota.FIELDS, disk.quota, have.quota):
            if used > cap >= 0:
                found.append(Finding(node, ABOVE_CAPACITY, f"disk {disk.device} {name}: usage {used} > capacity {cap}"))
    return found


def _negative(node: str, side: str, resource: NodeResource) -> list[Finding]:
    found = []
    if resource.storage < 0:
        found.append(Finding(node, NEGATIVE, f"{side} storage is {resource.storage}"))
    for device, size in sorted((resource.volumes or {}).items()):
        if size < 0:
            found.append(Finding(node, NEGATIVE, f"{side} volume {device} is {size}"))
    for disk in resource.disks or ():
        found += _negative_disk(node, side, disk)
    return found


def _negative_disk(node: str, side: str, disk: Disk) -> list[Finding]:
    return [
        Finding(node, NEGATIVE, f"{side} disk {disk.device} {name} is {value}")
        for name, value in zip(Quota.FIELDS, disk.quota)
        if value < 0
    ]


def corrected(doc: dict[str, Any]) -> dict[str, Any]:
    """The record ``doctor`` proposes from a salvaged one (``diagnosis.salvage``): the capacity as kept (none:
    an empty one, since no record may lack it), and usage only of what the capacity has, at most its capacity."""
    capacity, usage = _side(doc, "capacity"), _side(doc, "usage")
    disks = {disk["device"]: disk for disk in capacity["disks"]}
    capacity["disks"] = sorted(disks.values(), key=lambda disk: str(disk["device"]))
    volumes = capacity["volumes"]
    used_volumes = {
        device: min(used, volumes[device]) for device, used in usage["volumes"].items() if device in volumes
    }
    used_disks = []
    for disk in usage["disks"]:
        have = disks.get(disk["device"])
        if have is None:
            continue
        quota = {name: min(disk.get(name, 0), have.get(name, 0)) for name in Quota.FIELDS}
        used_disks.append({"device": disk["device"], "mounts": list(have.get("mounts") or []), **quota})
    usage = {
        "volumes": used_volumes,
        "disks": sorted({disk["device"]: disk for disk in used_disks}.values(), key=lambda disk: str(disk["device"])),
        "storage": min(usage["storage"], capacity["storage"]),
    }
    return {"capacity": capacity, "usage": usage}


def _side(doc: dict[str, Any], side: str) -> dict[str, Any]:
    value = doc.get(side) or {}
    disks = [disk for disk in value.get("disks") or [] if disk.get("device")]
    for disk in disks:
        disk.setdefault("mounts", [])
        for name in Quota.FIELDS:
            disk.setdefault(name, 0)
    return {"volumes": dict(value.get("volumes") or {}), "disks": disks, "storage": value.get("storage", 0)}
