"""How many workloads of a request fit on a node (spec storage-scheduler.md §3.9, §6.3), with the flat storage
counted too, and for ``explain`` what stopped the count: get-nodes-deploy-capacity's and explain's scheduler
entry points. Apart from ``placement`` and ``workloads`` so that calculate-deploy, which only places, never
loads this code nor creates these classes."""

from __future__ import annotations

from resource_extend.capacity import Limit
from resource_extend.goarith import ratio
from resource_extend.storage.binding import need_schedule, total_size
from resource_extend.storage.scheduler.classes import ClassifiedRequest
from resource_extend.storage.scheduler.host import Host
from resource_extend.storage.scheduler.passes import schedule
from resource_extend.storage.scheduler.workloads import sides, storage_room
from resource_extend.storage.volume import volumes_total

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.record import StorageRecord
    from resource_extend.storage.workload_request import WorkloadRequest


def volume_capacity(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> int:
    """How many placements ``volume_plans`` would return for the same arguments, without building them.

    get-nodes-deploy-capacity calls it with ``bound = scheduler.max_deploy_count`` (spec §3.9), node after
    node: ``VolumeCount`` does that with the request classified once.
    """
    return VolumeCount(bindings).capacity(node, bound)


def volume_limit(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> tuple[int, Limit | None]:
    """``volume_capacity``'s count and, when it is under ``bound``, what stopped it: for ``explain``."""
    return VolumeCount(bindings).limit(node, bound)


class VolumeCount:
    """``volume_capacity`` and ``volume_limit`` of one request, node after node: what depends on the
    request alone (whether it schedules, its classes and sums) is worked out once, not once per node.
    The request is only read, never changed, by the passes."""

    __slots__ = ("largest", "request", "schedules", "smallest", "step", "whole")

    def __init__(self, bindings: Sequence[VolumeBinding]) -> None:
        self.schedules = need_schedule(bindings)
        request = self.request = ClassifiedRequest(bindings)
        # ``bounds`` hold for normal bindings of positive sizes that draw no quota, without monopoly groups.
        sizes = request.normal_sizes
        plain = bool(sizes) and request.sizes_only and not request.mono and min(sizes, default=0) > 0
        self.whole = request.normal_size_per_plan if plain else 0
        self.smallest = self.largest = self.step = 0
        if plain:
            self.smallest, self.largest = sizes[0], sizes[-1]  # sizes ascend (classify_bindings)
            step = 0
            for size in sizes:  # their greatest common divisor: every byte count a volume takes is a multiple
                while size:
                    step, size = size, step % size
            self.step = step

    def capacity(self, node: StorageRecord, bound: int) -> int:
        bound = max(bound, 0)
        if not self.schedules:
            return bound
        frees = self._frees(node)
        known = None if frees is None else self._settled(frees, self._low(frees), bound)
        return self._count(Host(node), bound) if known is None else known

    def _count(self, host: Host, bound: int) -> int:
        request = self.request
        if request.places_volumes and not host.free:
            return 0
        result = schedule(host, request, bound, keep=0)
        return min(result.normal_count, result.mono_count, bound)

    def capacity_or_room(self, node: StorageRecord, bound: int, room: int) -> int:
        """``min(capacity(node, bound), room)``: without running the passes when ``bounds`` show the count
        reaches ``room`` (a node whose flat storage runs out before its volumes do) or settle it."""
        bound = max(bound, 0)
        if not self.schedules:
            return min(bound, room)
        frees = self._frees(node)
        known = None
        if frees is not None:
            low = self._low(frees)
            if room <= bound and room <= low:
                return room  # the upper sum is not needed
            known = self._settled(frees, low, bound)
        return min(self._count(Host(node), bound) if known is None else known, room)

    def _settled(self, frees: list[int], low: int, bound: int) -> int | None:
        """The count (``bound`` >= 0 applied) where the bounds settle it, else None."""
        if low >= bound:
            return bound
        return low if low == self._high(frees) else None

    def floor(self, node: StorageRecord) -> int:
        """``bounds``' lower one, 0 where they do not hold."""
        frees = self._frees(node)
        return 0 if frees is None else self._low(frees)

    def bounds(self, node: StorageRecord) -> tuple[int, int] | None:
        """Counts the passes reach on ``node`` at least and at most, ``bound`` aside (``min(count, bound)``
        is at least ``min(low, bound)`` and at most ``high``); None when the request is not of the kind they
        hold for, or a disk's quota is already negative (which keeps volumes out of the enumeration). Where
        the two meet, or the lower one reaches the bound, the count is known without the passes.

        The lower one is each volume's free bytes over the bytes of one plan (``whole``), summed. Why it
        holds, for normal bindings of positive sizes that draw no quota and no monopoly group: the promotion
        loop then ends with every volume that can take a binding in the last pass (or with the count at
        ``bound``), and that pass places attempt after attempt, each binding (smallest first) on the volume
        of least free bytes that holds it. An attempt touches at most one volume holding a whole plan: the
        first such volume it puts a binding on was the best fit for it, so every volume it passed over was
        smaller, and it keeps room for the attempt's later bindings, each of which it beats every other
        untouched volume to. So no attempt fails while some volume holds a whole plan, and each lowers the
        sum by at most one.

        The upper one: every plan takes ``whole`` bytes, and what a volume gives is a sum of binding sizes
        within its free bytes, so a multiple of their greatest common divisor (none from a volume too small
        for the smallest); and every plan puts its largest binding on a volume, which holds free // largest
        of them at most. tests/unit/storage/test_scheduler_floor.py checks the count against both and
        against the attempt-by-attempt simulation."""
        frees = self._frees(node)
        return None if frees is None else (self._low(frees), self._high(frees))

    def _frees(self, node: StorageRecord) -> list[int] | None:
        """The free bytes of the node's volumes that hold the smallest binding, or None where the bounds do
        not hold (the request's kind, or a negative quota)."""
        capacity, usage = node.capacity, node.usage
        if not self.whole or capacity is None:
            return None
        if usage is not None and usage.disks:  # the quota left is the capacity's less the usage's, by device
            host = Host(node)
            if min(map(min, host.quotas), default=0) < 0:
                return None
            frees = list(host.free.values())
        else:  # Host's free bytes and quota, without the rest of its set-up (~7 µs a node)
            if any(min(disk.quota) < 0 for disk in capacity.disks or ()):
                return None
            volumes, used = capacity.volumes or {}, (None if usage is None else usage.volumes)
            frees = [size - used.get(device, 0) for device, size in volumes.items()] if used else [*volumes.values()]
        smallest = self.smallest
        return [left for left in frees if left >= smallest]

    def _low(self, frees: list[int]) -> int:
        whole = self.whole
        return sum([left // whole for left in frees])

    def _high(self, frees: list[int]) -> int:
        step, largest = self.step, self.largest
        return min(sum([left // step for left in frees]) * step // self.whole, sum([left // largest for left in frees]))

    def limit(self, node: StorageRecord, bound: int) -> tuple[int, Limit | None]:
        """The same passes as ``capacity``; each records, where it stops, the binding and the volume or
        disk numbers it stopped on (``Pass.why``), which a count leaves unrecorded."""
        bound = max(bound, 0)
        if not self.schedules:
            return bound, None
        host, request = Host(node), self.request
        if request.places_volumes and not host.free:
            from resource_extend.storage.scheduler.limits import binding_text  # explain's words only

            first = (*request.normal, *request.mono, *request.unlimited)[0]
            return 0, Limit("volume space", f"volume {binding_text(first)}: the node has no volumes")
        result = schedule(host, request, bound, keep=0, why=True)
        count = min(result.normal_count, result.mono_count, bound)
        if count >= bound:
            return count, None
        stop = result.stop if result.normal_count <= result.mono_count else result.mono_stop
        return count, stop or Limit("volume space", f"volume plan: room for {count}")


def node_deploy_capacity(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, float, float]:
    """How many workloads of the validated ``request`` fit on the node, the node's usage and the request's
    rate (spec §6.3): the placement count and the storage count, whichever is smaller."""
    return DeployCount(request, bound)(record)


def node_deploy_limit(record: StorageRecord, request: WorkloadRequest, bound: int) -> tuple[int, Limit]:
    """``node_deploy_capacity``'s count and the first limit it reached, from the same scheduler passes."""
    return DeployCount(request, bound).limit(record)


class DeployCount:
    """``node_deploy_capacity`` (call it) and ``node_deploy_limit`` of one request, for node after node
    (get-nodes-deploy-capacity, explain): the request is classified once (``VolumeCount``), not per node."""

    __slots__ = ("bound", "request", "size", "volumes")

    def __init__(self, request: WorkloadRequest, bound: int) -> None:
        self.request, self.bound = request, bound
        self.volumes = VolumeCount(request.volumes_request)
        self.size = total_size(request.volumes_request)

    def __call__(self, record: StorageRecord) -> tuple[int, float, float]:
        request, volumes = self.request, self.volumes
        count = self.bound
        if request.storage_request > 0:
            room = storage_room(record, request.storage_request)
            count = volumes.capacity_or_room(record, count, room) if volumes.schedules else min(count, room)
        elif volumes.schedules:
            count = volumes.capacity(record, count)
        return (count, *self._usage_rate(record))

    def limit(self, record: StorageRecord) -> tuple[int, Limit]:
        """The count and the first limit it reached: ``volume_limit`` runs the count's passes, recording
        where they stop (for ``explain``), unless the storage stops the count before them (``room`` below
        ``floor``: where the two meet, the volumes' own limit is the one named, so the passes run)."""
        request, bound = self.request, self.bound
        volumes, room = self.volumes, None
        if request.storage_request > 0:
            room = storage_room(record, request.storage_request)
            if volumes.schedules and room < max(bound, 0) and room < volumes.floor(record):
                return room, self._storage_limit(record)
        count, limit = volumes.limit(record, bound) if volumes.schedules else (bound, None)
        if room is not None and room < count:
            count, limit = room, self._storage_limit(record)
        return count, limit or Limit("cap", f"scheduler.max_deploy_count is {bound}")

    def _storage_limit(self, record: StorageRecord) -> Limit:
        from resource_extend.storage.scheduler.limits import size_text  # explain's words only

        capacity, usage = sides(record)
        each = size_text(self.request.storage_request)
        if usage.storage > capacity.storage:  # not "-7G free": the node is over-committed, which doctor checks
            used, has = size_text(usage.storage), size_text(capacity.storage)
            over = size_text(usage.storage - capacity.storage)
            return Limit("storage", f"storage: over-committed, {used} used of {has} ({over} over; run doctor)")
        return Limit("storage", f"storage: {size_text(capacity.storage - usage.storage)} free, {each} per workload")

    def _usage_rate(self, record: StorageRecord) -> tuple[float, float]:
        capacity, usage = sides(record)
        request = self.request
        if request.volumes_request or request.storage_request == 0:
            volumes = volumes_total(capacity.volumes)
            return ratio(volumes_total(usage.volumes), volumes), ratio(self.size, volumes)
        return ratio(usage.storage, capacity.storage), ratio(request.storage_request, capacity.storage)
