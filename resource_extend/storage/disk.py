"""Disks: a block device, the paths it is mounted at, and its IOPS / bytes-per-second quotas.

Disk lists are matched by device name. Every list operation here returns new disks, because the same
list is often both a stored record's and an intermediate result's.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.formats.decoding import parse_int64
from resource_extend.storage.size import parse_size
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any


class Quota(tuple[int, int, int, int]):
    """Read IOPS, write IOPS, read bytes/s, write bytes/s: what a disk offers and a binding or workload draws.

    A tuple, so a quota compares, unpacks and indexes as one value; the arithmetic is element-wise.
    """

    __slots__ = ()
    # The stored (record and resource JSON) names of the four numbers, in order.
    FIELDS = ("read_IOPS", "write_IOPS", "read_bps", "write_bps")

    def __new__(cls, read_iops: int = 0, write_iops: int = 0, read_bps: int = 0, write_bps: int = 0) -> Quota:
        return tuple.__new__(cls, (read_iops, write_iops, read_bps, write_bps))

    # The scheduler adds quotas per placement: skip __new__'s frame by building the tuple directly.
    def plus(self, other: Sequence[int]) -> Quota:
        return _new(Quota, (self[0] + other[0], self[1] + other[1], self[2] + other[2], self[3] + other[3]))

    def scaled(self, factor: int) -> Quota:
        return self if factor == 1 else _new(Quota, tuple(factor * value for value in self))

    def most(self, other: Sequence[int]) -> Quota:
        """The larger of each pair: a limit raised to its request."""
        return Quota(max(self[0], other[0]), max(self[1], other[1]), max(self[2], other[2]), max(self[3], other[3]))

    def fits(self, left: Sequence[int]) -> bool:
        """Whether ``left`` has room for this quota in each of the four."""
        return left[0] >= self[0] and left[1] >= self[1] and left[2] >= self[2] and left[3] >= self[3]

    def replaced(self, index: int, value: int) -> Quota:
        numbers = list(self)
        numbers[index] = value
        return Quota(*numbers)

    def text(self) -> str:
        """``rIOPS:wIOPS:rBPS:wBPS``, the form bindings, diff messages and engine options write."""
        return f"{self[0]}:{self[1]}:{self[2]}:{self[3]}"


_new = tuple.__new__
ZERO = Quota()


class Disk(Fields):
    # Its quota is read as a whole (``disk.quota``); bindings also name its numbers (binding.py QuotaHolder), a
    # disk does not: every storage call creates this class, and a base class costs a call as much as ~4 KB of code.
    __slots__ = ("device", "mounts", "quota")

    def __init__(self, device: str, mounts: list[str] | None, *quota: int) -> None:
        """``quota`` in ``Quota`` order (read IOPS, write IOPS, read bps, write bps); missing numbers are 0."""
        self.device = device
        self.mounts = mounts
        self.quota = Quota(*quota)

    @classmethod
    def parse(cls, text: str) -> Disk:
        """A node request's ``device:mounts:read_IOPS:write_IOPS:read_BPS:write_BPS``."""
        parts = text.split(":")
        try:
            if len(parts) != 6:
                raise PluginError(f"{len(parts)} part{'s' if len(parts) > 1 else ''}, want 6")
            return cls(
                parts[0],
                parts[1].split(","),
                parse_int64(parts[2]),
                parse_int64(parts[3]),
                parse_size(parts[4]),
                parse_size(parts[5]),
            )
        except PluginError as cause:
            # The format itself: an operator types these by hand (eru-cli's --disk), usually with a part missing.
            raise errors.InvalidDisk(
                f"wrong disk format: {text}, {cause} (want device:mounts:read_IOPS:write_IOPS:read_BPS:write_BPS,"
                " e.g. /dev/vda:/,/data:100:200:1G:2G)"
            ) from None

    @classmethod
    def from_json(cls, value: Any) -> Disk:
        source = decoding.object_or_none(value, "disk")
        if source is None:
            raise errors.InvalidDisk("disk must be an object, not null")
        mounts = decoding.list_field(source, "mounts", "disk")
        quota = (source.get("read_IOPS"), source.get("write_IOPS"), source.get("read_bps"), source.get("write_bps"))
        return cls.holding(
            decoding.str_field(source, "device", "disk"),
            None if mounts is None else decoding.str_list(mounts, "disk.mounts"),
            # Every disk of every record read passes here: a stored quota is four plain ints, taken as they are.
            _new(Quota, quota)
            if decoding.plain_int64s(quota)
            else Quota(*(decoding.int_field(source, name, "disk") for name in Quota.FIELDS)),
        )

    def to_json(self) -> dict[str, Any]:
        quota = self.quota
        return {
            "device": self.device,
            "mounts": _copy_mounts(self.mounts),
            "read_IOPS": quota[0],
            "write_IOPS": quota[1],
            "read_bps": quota[2],
            "write_bps": quota[3],
        }

    @classmethod
    def holding(cls, device: str, mounts: list[str] | None, quota: Sequence[int]) -> Disk:
        """A disk of ``quota``; a ``Quota`` is shared, not rebuilt (the scheduler makes thousands of disks)."""
        disk = cls.__new__(cls)
        disk.device = device
        disk.mounts = mounts
        disk.quota = quota if type(quota) is Quota else Quota(*quota)
        return disk

    def copy(self) -> Disk:
        return Disk.holding(self.device, _copy_mounts(self.mounts), self.quota)

    def stamped(self, quota: Sequence[int]) -> Disk:
        """A new disk with this one's device and mounts carrying ``quota``: what a charge against it is."""
        return Disk.holding(self.device, _copy_mounts(self.mounts), quota)

    def disk_string(self) -> str:
        """``device:mount,mount:rIOPS:wIOPS:rBPS:wBPS``, the form diff messages compare."""
        return f"{self.device}:{','.join(self.mounts or ())}:{self.quota.text()}"


def disks_from_json(items: list[Any] | None) -> list[Disk] | None:
    """Disk objects from a JSON array; ``None`` (null) stays distinct from ``[]`` on the way back out."""
    return None if items is None else [Disk.from_json(item) for item in items]


def disks_to_json(disks: list[Disk] | None) -> list[dict[str, Any]] | None:
    return None if disks is None else [disk.to_json() for disk in disks]


def disks_copy(disks: Iterable[Disk]) -> list[Disk]:
    return [disk.copy() for disk in disks]


def remove_mounts(disks: Iterable[Disk]) -> list[Disk]:
    """Copies with ``mounts`` unset, so adding them never overwrites the mounts of the disks they join."""
    return [Disk.holding(disk.device, None, disk.quota) for disk in disks]


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
            appended.append(Disk.holding(item.device, _copy_mounts(item.mounts), item.quota.scaled(sign)))
            continue
        found.quota = found.quota.plus(item.quota.scaled(sign))
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


class DiskIndex:
    """``disk_by_path`` for many paths over one disk list, in time that does not grow with its mounts.

    The mounts that cover a path are the path itself and its prefixes ending before a ``/``, each (one
    trailing ``/`` ignored) deeper by at least one ``/`` than the shorter ones: so the deepest cover is the
    longest mount (base) among them, and of a base listed more than once, the later. The index maps each base
    to the place of the disk listing it last, and a lookup tries the bases' lengths, longest first: a few
    dictionary lookups, where ``disk_by_path`` reads every mount of every disk.
    """

    __slots__ = ("_at", "_lengths", "disks")

    def __init__(self, disks: Sequence[Disk]) -> None:
        self.disks = disks
        self._at: dict[str, int] = {}
        for index, disk in enumerate(disks):
            for mount in disk.mounts or ():
                self._at[mount[:-1] if mount.endswith("/") else mount] = index
        self._lengths = sorted({len(base) for base in self._at}, reverse=True)

    def index(self, path: str) -> int | None:
        """The place in ``disks`` of the disk ``disk_by_path`` finds for ``path`` (its last place, when
        the list holds that disk object twice), or None."""
        if path.endswith("/"):
            path = path[:-1]
        at, size = self._at, len(path)
        for length in self._lengths:
            if length <= size and (length == size or path[length] == "/"):
                found = at.get(path[:length])
                if found is not None:
                    return found
        return None

    def find(self, path: str) -> Disk | None:
        found = self.index(path)
        return None if found is None else self.disks[found]
