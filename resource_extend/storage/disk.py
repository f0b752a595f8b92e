"""Disks: a block device, the paths it is mounted at, and its IOPS / bytes-per-second quotas.

Disk lists are matched by device name. Every list operation here returns new disks, because the same
list is often both a stored record's and an intermediate result's.
"""

from __future__ import annotations

from collections.abc import Iterable

from resource_extend import decoding
from resource_extend.decoding import parse_int64
from resource_extend.errors import PluginError
from resource_extend.storage.size import parse_size
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Disk(Fields):
    __slots__ = ("device", "mounts", "read_bps", "read_iops", "write_bps", "write_iops")

    def __init__(
        self,
        device: str,
        mounts: list[str] | None,
        read_iops: int = 0,
        write_iops: int = 0,
        read_bps: int = 0,
        write_bps: int = 0,
    ) -> None:
        self.device = device
        self.mounts = mounts
        self.read_iops = read_iops
        self.write_iops = write_iops
        self.read_bps = read_bps
        self.write_bps = write_bps

    @classmethod
    def parse(cls, text: str) -> Disk:
        """A node request's ``device:mounts:read_IOPS:write_IOPS:read_BPS:write_BPS``."""
        parts = text.split(":")
        try:
            if len(parts) != 6:
                raise PluginError("invalid disk")
            return cls(
                parts[0],
                parts[1].split(","),
                parse_int64(parts[2]),
                parse_int64(parts[3]),
                parse_size(parts[4]),
                parse_size(parts[5]),
            )
        except PluginError as cause:
            raise PluginError(f"wrong disk format: {text}, {cause}: invalid disk") from None

    @classmethod
    def from_json(cls, value: Any) -> Disk:
        source = decoding.object_or_none(value, "disk")
        if source is None:
            raise PluginError("disk must be an object, not null: invalid disk")
        mounts = decoding.list_field(source, "mounts", "disk")
        return cls(
            decoding.str_field(source, "device", "disk"),
            None if mounts is None else decoding.str_list(mounts, "disk.mounts"),
            decoding.int_field(source, "read_IOPS", "disk"),
            decoding.int_field(source, "write_IOPS", "disk"),
            decoding.int_field(source, "read_bps", "disk"),
            decoding.int_field(source, "write_bps", "disk"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "mounts": _copy_mounts(self.mounts),
            "read_IOPS": self.read_iops,
            "write_IOPS": self.write_iops,
            "read_bps": self.read_bps,
            "write_bps": self.write_bps,
        }

    @property
    def quota(self) -> tuple[int, int, int, int]:
        return (self.read_iops, self.write_iops, self.read_bps, self.write_bps)

    def copy(self) -> Disk:
        return Disk(self.device, _copy_mounts(self.mounts), *self.quota)

    def stamped(self, quota: tuple[int, int, int, int]) -> Disk:
        """A new disk with this one's device and mounts carrying ``quota``: what a charge against it is."""
        return Disk(self.device, _copy_mounts(self.mounts), *quota)

    def disk_string(self) -> str:
        """``device:mount,mount:rIOPS:wIOPS:rBPS:wBPS``, the form diff messages compare."""
        mounts = ",".join(self.mounts or ())
        return f"{self.device}:{mounts}:{self.read_iops}:{self.write_iops}:{self.read_bps}:{self.write_bps}"


def disks_from_json(items: list[Any] | None) -> list[Disk] | None:
    """Disk objects from a JSON array; ``None`` (null) stays distinct from ``[]`` on the way back out."""
    return None if items is None else [Disk.from_json(item) for item in items]


def disks_to_json(disks: list[Disk] | None) -> list[dict[str, Any]] | None:
    return None if disks is None else [disk.to_json() for disk in disks]


def disks_copy(disks: Iterable[Disk]) -> list[Disk]:
    return [disk.copy() for disk in disks]


def remove_mounts(disks: Iterable[Disk]) -> list[Disk]:
    """Copies with ``mounts`` unset, so adding them never overwrites the mounts of the disks they join."""
    return [Disk(disk.device, None, *disk.quota) for disk in disks]


def disk_by_device(disks: Iterable[Disk], device: str) -> Disk | None:
    return next((disk for disk in disks if disk.device == device), None)


def disks_add(disks: Iterable[Disk], other: Iterable[Disk]) -> list[Disk]:
    return _combine(disks, other, 1)


def disks_sub(disks: Iterable[Disk], other: Iterable[Disk]) -> list[Disk]:
    """Like ``disks_add`` with quotas subtracted; an unknown device joins with negated quotas."""
    return _combine(disks, other, -1)


def _combine(disks: Iterable[Disk], other: Iterable[Disk], sign: int) -> list[Disk]:
    result = disks_copy(disks)
    by_device: dict[str, Disk] = {}
    for disk in result:
        by_device.setdefault(disk.device, disk)
    appended = []
    for item in other:
        found = by_device.get(item.device)
        if found is None:
            # Only disks already in the list absorb; new devices join at the end, one entry per item.
            appended.append(Disk(item.device, _copy_mounts(item.mounts), *(sign * q for q in item.quota)))
            continue
        found.read_iops += sign * item.read_iops
        found.write_iops += sign * item.write_iops
        found.read_bps += sign * item.read_bps
        found.write_bps += sign * item.write_bps
        if item.mounts:
            found.mounts = list(item.mounts)
    return result + appended


def _copy_mounts(mounts: list[str] | None) -> list[str] | None:
    return None if mounts is None else list(mounts)


def disk_by_path(disks: Iterable[Disk], path: str) -> Disk | None:
    """The disk whose mount most deeply covers ``path``; on equal depth the later mount wins."""
    if path.endswith("/"):
        path = path[:-1]
    best: Disk | None = None
    best_depth = 0
    for disk in disks:
        for mount in disk.mounts or ():
            base = mount[:-1] if mount.endswith("/") else mount
            depth = base.count("/") + 1
            covers = path == base or (path.startswith(base) and path[len(base) : len(base) + 1] == "/")
            if covers and depth >= best_depth:
                best, best_depth = disk, depth
    return best
