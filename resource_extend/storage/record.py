"""A node's storage resources and the record stored for it in etcd.

``{"capacity": NodeResource, "usage": NodeResource}``, each ``{"volumes": {device: bytes}, "disks": [...],
"storage": bytes}``. Records are shared with the Go plugin, so they are read and written in exactly its
shape, ``null`` fields included; the validation run before every write is the only normalisation.
"""

from __future__ import annotations

from resource_extend.errors import PluginError
from resource_extend.formats import decoding, jsonio
from resource_extend.formats.decoding import int64_problem
from resource_extend.storage.disk import (
    ZERO,
    Disk,
    Quota,
    disk_by_device,
    disks_add,
    disks_from_json,
    disks_sub,
    disks_to_json,
    remove_mounts,
)
from resource_extend.storage.volume import (
    Volumes,
    volumes_add,
    volumes_from_json,
    volumes_sub,
    volumes_to_json,
)
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, TypedDict

    from resource_extend.storage.workload import WorkloadResource

    class NodeResourceJSON(TypedDict):
        """The wire and stored shape of a node's capacity or usage."""

        volumes: Volumes | None
        disks: list[dict[str, Any]] | None
        storage: int

    class StorageRecordJSON(TypedDict):
        capacity: NodeResourceJSON | None
        usage: NodeResourceJSON | None


# What NodeResource() starts with when a side is not given: fresh empties, since None means null.
_FRESH: Any = object()


class NodeResource(Fields):
    # None is a field the JSON had as null or lacked; it is written back the same way.
    __slots__ = ("disks", "storage", "volumes")

    def __init__(self, volumes: Volumes | None = _FRESH, disks: list[Disk] | None = _FRESH, storage: int = 0) -> None:
        self.volumes: Volumes | None = {} if volumes is _FRESH else volumes
        self.disks: list[Disk] | None = [] if disks is _FRESH else disks
        self.storage = storage

    @classmethod
    def from_json(cls, value: Any, where: str = "node resource") -> NodeResource:
        """Decode the parsed form: exact key names, integral numbers (``"storage": "1T"`` is an error)."""
        if type(value) is dict:
            plain = _plain_side(value)
            if plain is not None:
                return plain
        source = decoding.object_or_none(value, where)
        if source is None:
            raise PluginError(f"{where} must be an object, not null")
        return cls(
            volumes_from_json(source.get("volumes"), f"{where}.volumes"),
            disks_from_json(decoding.list_field(source, "disks", where)),
            decoding.int_field(source, "storage", where),
        )

    @classmethod
    def from_workload(cls, workload: WorkloadResource) -> NodeResource:
        """What one workload holds: its planned volumes, requested storage and requested disk quotas."""
        return cls(workload.volume_plan_request.volumes(), workload.disks_request, workload.storage_request)

    def to_json(self) -> NodeResourceJSON:
        return {
            "volumes": volumes_to_json(self.volumes),
            "disks": disks_to_json(self.disks),
            "storage": self.storage,
        }

    def copy(self) -> NodeResource:
        """A deep copy; like the reference's, a missing map or list comes back empty."""
        disks = [disk.copy() for disk in self.disks or ()]
        return NodeResource(dict(self.volumes or {}), disks, self.storage)

    def add(self, other: NodeResource) -> NodeResource:
        return NodeResource(
            volumes_add(self.volumes or {}, other.volumes or {}),
            disks_add(self.disks or (), other.disks or ()),
            self.storage + other.storage,
        )

    def sub(self, other: NodeResource) -> NodeResource:
        return NodeResource(
            volumes_sub(self.volumes or {}, other.volumes or {}),
            disks_sub(self.disks or (), other.disks or ()),
            self.storage - other.storage,
        )

    def without_empty_volumes(self) -> NodeResource:
        """A copy without the volumes whose size is exactly 0 (storage is left alone)."""
        result = self.copy()
        if self.volumes is None:
            result.volumes = None
        else:
            result.volumes = {device: size for device, size in self.volumes.items() if size != 0}
        return result


class StorageRecord(Fields):
    __slots__ = ("capacity", "usage")

    def __init__(self, capacity: NodeResource | None, usage: NodeResource | None) -> None:
        self.capacity = capacity
        self.usage = usage

    @classmethod
    def empty(cls) -> StorageRecord:
        """What a node with nothing stored reads as."""
        return cls(NodeResource(), NodeResource())

    @classmethod
    def decode(cls, data: bytes) -> StorageRecord:
        """A stored record; one without a capacity is refused, one without a usage gets a nothing-used one."""
        record = cls.from_json(jsonio.load_document(data))
        # No answer about a node can be given without its capacity, and no write would keep it (the
        # reference's "invalid capacity"): such a record was written by something else (decision 9).
        if record.capacity is None:
            raise PluginError("capacity is missing or null")
        # A missing usage reads as what the next write stores for it: nothing used on any device.
        return record if record.usage is not None else cls(record.capacity, synthesized_usage(record.capacity))

    def encode(self) -> bytes:
        return jsonio.dump_record(self.to_json())

    def checked(self) -> StorageRecord:
        return self.validated()

    def problems(self) -> list[str]:
        return problems(self)

    @classmethod
    def from_json(cls, value: Any) -> StorageRecord:
        if type(value) is dict:
            plain = _plain_record(value)
            if plain is not None:
                return plain
        source = decoding.object_or_none(value, "storage record") or {}
        return cls(_resource_or_none(source, "capacity"), _resource_or_none(source, "usage"))

    def to_json(self) -> StorageRecordJSON:
        return {
            "capacity": None if self.capacity is None else self.capacity.to_json(),
            "usage": None if self.usage is None else self.usage.to_json(),
        }

    def available(self) -> NodeResource:
        """Capacity minus usage."""
        return (self.capacity or NodeResource()).copy().sub(self.usage or NodeResource())

    def validated(self) -> StorageRecord:
        """The record as it may be written: usage filled in if missing, disks sorted by device, usage disks
        given their capacity disk's mounts and orphan all-zero usage disks dropped. Raises ``PluginError``
        naming every problem (int64, volumes, storage, disks) when it may not be written."""
        record, found = self._settled()
        if found:
            raise PluginError("; ".join(found))
        return record

    def _settled(self) -> tuple[StorageRecord, list[str]]:
        """``validated``'s record and its problems, without raising; ``self`` is never changed."""
        if self.capacity is None:
            return self, ["invalid capacity"]
        capacity = _faithful_copy(self.capacity)
        usage = synthesized_usage(capacity) if self.usage is None else _faithful_copy(self.usage)
        if capacity.disks is not None:
            capacity.disks.sort(key=_device)
        if usage.disks is not None:
            usage.disks.sort(key=_device)
        # Past int64 first (decision 9): the Go reference and this plugin's own reader refuse such a record.
        found = _int64_problems("capacity", capacity) + _int64_problems("usage", usage)
        found += [
            problem for problem in (_volume_problem(capacity, usage), _storage_problem(capacity, usage)) if problem
        ]
        disk_problem = _reconcile_disks(capacity, usage)
        if disk_problem:
            found.append(disk_problem)
        return StorageRecord(capacity, usage), found


def write_problems(record: StorageRecord) -> list[str]:
    """Why the record may not be written; ``[]`` when ``validated`` accepts it."""
    return record._settled()[1]


def problems(record: StorageRecord) -> list[str]:
    """Everything wrong with a record, for an operator's check of the store: what a write refuses, and what
    the reference lets a write store but no capacity backs (usage above the flat storage, volume usage on a
    device the capacity lacks)."""
    found = write_problems(record)
    if record.capacity is None:
        return found
    capacity, usage = record.capacity, record.usage or NodeResource()
    if 0 <= capacity.storage < usage.storage:  # a negative capacity is reported already
        found.append(f"usage.storage is {usage.storage}, above its capacity {capacity.storage}")
    known = capacity.volumes or {}
    for device, size in sorted((usage.volumes or {}).items()):
        if device not in known and size != 0:
            found.append(f"usage.volumes[{device!r}] is {size} on a device the capacity lacks")
    return found


def combine(
    origin: NodeResource,
    resource: NodeResource | None,
    workloads: Iterable[WorkloadResource],
    delta: bool,
    incr: bool,
) -> NodeResource:
    """The new capacity or usage after a set-node-resource-* call.

    Absolute mode (not ``delta``) starts from nothing and always adds; delta mode adds to or subtracts
    from ``origin``. ``resource`` (a parsed request or resource) wins over ``workloads``.
    """
    if delta:
        result = origin.copy()
    else:
        result = NodeResource()
        incr = True
    parts = [resource] if resource is not None else [NodeResource.from_workload(w) for w in workloads]
    for part in parts:
        result = result.add(part) if incr else result.sub(part)
    return result


def reconcile_usage(stored: NodeResource, workloads: Iterable[WorkloadResource]) -> tuple[NodeResource, list[str]]:
    """Recompute usage from the workloads on the node and describe where the stored usage differs.

    The computed usage's disks carry the stored disks' mounts, as the reference leaves them.
    """
    volumes: Volumes = {}
    disks: list[Disk] = []
    storage = 0
    for workload in workloads:
        volumes = volumes_add(volumes, workload.volume_plan_request.volumes())
        storage += workload.storage_request
        disks = disks_add(disks, remove_mounts(workload.disks_request or ()))

    diffs = []
    if stored.storage != storage:
        diffs.append(f"node.Storage != sum(workload.Storage): {stored.storage} != {storage}")
    stored_volumes = stored.volumes or {}
    for device, size in stored_volumes.items():
        if volumes.get(device, 0) != size:
            diffs.append(_volume_diff(device, size, volumes.get(device, 0)))
    for device, size in volumes.items():
        if device not in stored_volumes and size != 0:
            diffs.append(_volume_diff(device, 0, size))
    for disk in stored.disks or ():
        found = disk_by_device(disks, disk.device)
        summed = disk.stamped(found.quota if found is not None else ZERO)
        if found is not None:
            found.mounts = summed.mounts
        if summed.disk_string() != disk.disk_string():
            diffs.append(
                f"node.Disks[{disk.device}] != sum(workload.Disks[{disk.device}]): "
                f"{disk.disk_string()} != {summed.disk_string()}"
            )
    return NodeResource(volumes, disks, storage), diffs


def _volume_diff(device: str, stored: int, computed: int) -> str:
    return f"node.Volumes[{device}] != sum(workload.Volumes[{device}]): {stored} != {computed}"


_STRINGS = frozenset((str,))
_new_disk = Disk.__new__
_new_quota = tuple.__new__


def _plain_side(value: dict[str, Any]) -> NodeResource | None:
    """The side as both plugins store it — every number a plain int64, devices and mounts strings, no null
    inside a field — decoded without the field readers; None for anything else, which they decode or
    refuse with their errors. Every number goes through one ``plain_int64s``, which switches this off too."""
    numbers: list[Any] = []
    strings: list[Any] = []
    side = _plain_shape(value, numbers, strings)
    return side if side is not None and _plain(numbers, strings) else None


def _plain_record(value: dict[str, Any]) -> StorageRecord | None:
    """``_plain_side`` of both sides at once, their numbers and strings each checked in one go: a stored
    record (1000 are decoded per get-metrics or capacity call) reads in ~3.5 µs instead of ~7 µs. A record
    with a side missing or null, or anything else, goes the field readers' way."""
    capacity, usage = value.get("capacity"), value.get("usage")
    if type(capacity) is not dict or type(usage) is not dict:
        return None
    numbers: list[Any] = []
    strings: list[Any] = []
    held, used = _plain_shape(capacity, numbers, strings), _plain_shape(usage, numbers, strings)
    if held is None or used is None or not _plain(numbers, strings):
        return None
    return StorageRecord(held, used)


def _plain(numbers: list[Any], strings: list[Any]) -> bool:
    return {*map(type, strings)} <= _STRINGS and decoding.plain_int64s(numbers)


def _plain_shape(value: dict[str, Any], numbers: list[Any], strings: list[Any]) -> NodeResource | None:
    """The side read from a stored shape, or None for a shape the field readers must read. Its numbers are
    appended to ``numbers`` and its devices and mounts to ``strings``, unchecked: the side is what the
    field readers would read only when they all turn out plain int64s and strings (``_plain``)."""
    get = value.get
    volumes, items, storage = get("volumes"), get("disks"), get("storage", 0)
    numbers.append(storage)
    if volumes is not None:
        if type(volumes) is not dict:
            return None
        numbers += volumes.values()
        volumes = dict(volumes)
    disks = None
    if items is not None:
        if type(items) is not list:
            return None
        disks = []
        for item in items:
            if type(item) is not dict:
                return None
            device: Any = item.get("device")  # a string once _plain has checked it
            mounts = item.get("mounts")
            strings.append(device)
            if mounts is not None:
                if type(mounts) is not list:
                    return None
                strings += mounts
                mounts = list(mounts)
            quota: tuple[Any, ...] = (
                item.get("read_IOPS"), item.get("write_IOPS"), item.get("read_bps"), item.get("write_bps")
            )  # fmt: skip
            numbers += quota
            # Disk.holding and Quota(), without their frames.
            disk = _new_disk(Disk)
            disk.device, disk.mounts, disk.quota = device, mounts, _new_quota(Quota, quota)
            disks.append(disk)
    return NodeResource(volumes, disks, storage)


def _resource_or_none(source: dict[str, Any], key: str) -> NodeResource | None:
    value = source.get(key)
    return None if value is None else NodeResource.from_json(value, key)


def _faithful_copy(resource: NodeResource) -> NodeResource:
    # Unlike NodeResource.copy, keeps null fields null so a record is written back in its own shape.
    return NodeResource(
        None if resource.volumes is None else dict(resource.volumes),
        None if resource.disks is None else [disk.copy() for disk in resource.disks],
        resource.storage,
    )


def synthesized_usage(capacity: NodeResource) -> NodeResource:
    """The usage of a record stored without one: every capacity volume and disk, nothing used."""
    return NodeResource(
        {device: 0 for device in capacity.volumes or {}},
        [disk.stamped((0, 0, 0, 0)) for disk in capacity.disks or ()],
        0,
    )


def _device(disk: Disk) -> str:
    return disk.device


def _int64_problems(side: str, resource: NodeResource) -> list[str]:
    found = []
    for device, size in sorted((resource.volumes or {}).items()):
        problem = int64_problem(f"{side}.volumes[{device!r}]", size)
        if problem:
            found.append(f"{problem}: invalid volume")
    problem = int64_problem(f"{side}.storage", resource.storage)
    if problem:
        found.append(f"{problem}: invalid storage")
    for disk in resource.disks or ():
        for name, value in zip(Quota.FIELDS, disk.quota):
            problem = int64_problem(f"{side}.disks[{disk.device!r}].{name}", value)
            if problem:
                found.append(f"{problem}: invalid disk")
    return found


def _volume_problem(capacity: NodeResource, usage: NodeResource) -> str | None:
    used = usage.volumes or {}
    for device, size in sorted((capacity.volumes or {}).items()):
        if size < 0:
            return f"volume size should not be less than 0: {device} is {size}: invalid volume"
        if device in used and not 0 <= used[device] <= size:
            return f"invalid size in usage: {device} uses {used[device]} of {size}: invalid volume"
    return None


def _storage_problem(capacity: NodeResource, usage: NodeResource) -> str | None:
    if capacity.storage < 0:
        return f"storage capacity can't be negative: {capacity.storage}: invalid storage"
    if usage.storage < 0:
        return f"storage usage can't be negative: {usage.storage}: invalid storage"
    return None


def _reconcile_disks(capacity: NodeResource, usage: NodeResource) -> str | None:
    """Check disk quotas, copying capacity mounts onto usage disks and dropping orphan all-zero ones."""
    capacity_disks = capacity.disks or []
    usage_disks = usage.disks or []
    for disk in capacity_disks:
        if min(disk.quota) < 0:
            return f"disk IOPS / BPS can't be negative: {disk.disk_string()}: invalid disk"
        used = disk_by_device(usage_disks, disk.device)
        if used is None:
            continue
        used.mounts = None if disk.mounts is None else list(disk.mounts)
        if min(used.quota) < 0:
            return f"disk IOPS / BPS can't be negative: usage {used.disk_string()}: invalid disk"
        if not used.quota.fits(disk.quota):
            return (
                f"disk IOPS / BPS usage can't be greater than capacity: "
                f"{used.disk_string()} > {disk.disk_string()}: invalid disk"
            )
    known = {disk.device for disk in capacity_disks}
    for disk in usage_disks:
        if disk.device not in known and any(disk.quota):
            return f"disk {disk.device} not found in capacity: invalid disk"
    if usage.disks is not None:
        usage.disks = [disk for disk in usage.disks if disk.device in known]
    return None
