"""The host model (spec §3.1): free bytes per volume and remaining quota per disk, and quota arithmetic."""

from __future__ import annotations

import sys

from resource_extend.goarith import trunc_div
from resource_extend.storage.disk import ZERO, Disk, DiskIndex, Quota, disks_add, disks_sub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.record import StorageRecord

# Remaining quota per disk, [read_iops, write_iops, read_bps, write_bps] each, indexed like the host's disks.
Quotas = list[list[int]]

UNBOUNDED = sys.maxsize


class Host:
    """Free bytes per volume and remaining quota per disk; mutated by promotion and by realloc."""

    def __init__(self, node: StorageRecord) -> None:
        capacity, usage = node.capacity, node.usage
        capacity_volumes = None if capacity is None else capacity.volumes
        usage_volumes = None if usage is None else usage.volumes
        capacity_disks = None if capacity is None else capacity.disks
        usage_disks = None if usage is None else usage.disks
        # Only device and mounts of these disks are read, never changed (quotas live in ``quotas``): without
        # usage disks to subtract, the record's own disks serve.
        self.disks = disks_sub(capacity_disks or (), usage_disks) if usage_disks else list(capacity_disks or ())
        self.capacity_disks = capacity_disks or ()  # for explain's "300 of 1000 left"
        self.quotas: Quotas = [list(disk.quota) for disk in self.disks]
        self.free: dict[str, int] = {}
        used: list[tuple[int, str]] = []
        unused: list[tuple[int, str]] = []
        usage_volumes = usage_volumes or {}
        for device, size in (capacity_volumes or {}).items():
            taken = usage_volumes.get(device, 0)
            left = self.free[device] = size - taken
            (unused if taken == 0 else used).append((left, device))
        # By (free, name), names being distinct. The lists keep their order from here on: promotion
        # appends, realloc changes sizes in place.
        used.sort()
        unused.sort()
        self.used = [device for _, device in used]
        self.unused = [device for _, device in unused]
        # Mounts never change: a path's disk is looked up in an index of them (a few dictionary lookups,
        # however many volumes and mounts the node has), and cached.
        self._disk_index = DiskIndex(self.disks)
        self._disk_at: dict[str, int | None] = {}
        self._first_disk: dict[str, int] | None = None

    def disk_at(self, path: str) -> int | None:
        """Index of the disk covering ``path`` (``disk_by_path``'s disk, at its last place in the list)."""
        if path not in self._disk_at:
            self._disk_at[path] = self._disk_index.index(path)
        return self._disk_at[path]

    def first_disk_of(self, device: str) -> int:
        # A monopoly charge is subtracted by device name, as the reference's Disks.Sub finds it.
        if self._first_disk is None:
            self._first_disk = {}
            for index, disk in enumerate(self.disks):
                self._first_disk.setdefault(disk.device, index)
        return self._first_disk[device]

    def stamp(self, index: int, quota: Quota) -> Disk:
        return self.disks[index].stamped(quota)

    def charge_mounts(
        self,
        mounts: Sequence[VolumeBinding],
        quotas: Quotas | None = None,
    ) -> list[Disk] | None:
        """Charge each mount binding to the disk under its source; ``None`` when one does not fit.

        Charges made before a failure stay, as in the reference.
        """
        quotas = self.quotas if quotas is None else quotas
        charged: list[Disk] = []
        for mount in mounts:
            index = self.disk_at(mount.source)
            quota = mount.quota
            if not quota.fits(quota_of(quotas, index)):
                return None
            if index is not None:
                charge(quotas[index], quota)
                charged = disks_add(charged, [self.stamp(index, quota)])
        return charged

    def promote(self, min_size: int) -> bool:
        """Move the first unused volume holding ``min_size`` to the end of the used list."""
        index = self.promotable(min_size)
        if index is None:
            return False
        self.used.append(self.unused.pop(index))
        return True

    def promotable(self, min_size: int) -> int | None:
        """Where in ``unused`` the volume ``promote`` takes is, by a binary search as the reference does
        it: on the sorted list that is the smallest adequate volume, and after a realloc hand-back (list
        no longer sorted) it is still the reference's pick.
        """
        low, high = 0, len(self.unused)
        while low < high:
            middle = (low + high) // 2
            if self.free[self.unused[middle]] < min_size:
                low = middle + 1
            else:
                high = middle
        return None if low == len(self.unused) else low


def quota_of(quotas: Quotas, index: int | None) -> Sequence[int]:
    # A path no disk covers reads as a disk with nothing left: fine without IOPS, never with them.
    return ZERO if index is None else quotas[index]


def charge(left: list[int], quota: Sequence[int]) -> None:
    left[0] -= quota[0]
    left[1] -= quota[1]
    left[2] -= quota[2]
    left[3] -= quota[3]


def refill(left: list[int], quota: Sequence[int]) -> None:
    left[0] += quota[0]
    left[1] += quota[1]
    left[2] += quota[2]
    left[3] += quota[3]


def headroom(left: Sequence[int], per_attempt: Sequence[int]) -> int:
    """How many more whole ``per_attempt`` charges ``left`` holds (``UNBOUNDED`` when it charges nothing)."""
    head = UNBOUNDED
    for have, need in zip(left, per_attempt):
        if need > 0:
            head = min(head, trunc_div(have, need))  # a quota may already be negative
    return head
