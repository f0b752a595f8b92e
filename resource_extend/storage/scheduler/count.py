"""How many workloads of a request fit on a node (spec storage-scheduler.md §3.9, §6.3), with the flat storage
counted too, and for ``explain`` what stopped the count: get-nodes-deploy-capacity's and explain's scheduler
entry points. Apart from ``placement`` and ``workloads`` so that calculate-deploy, which only places, never
loads this code nor creates these classes."""

from __future__ import annotations

from resource_extend.capacity import ratio
from resource_extend.deploycapacity import Limit
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

    __slots__ = ("request", "schedules")

    def __init__(self, bindings: Sequence[VolumeBinding]) -> None:
        self.schedules = need_schedule(bindings)
        self.request = ClassifiedRequest(bindings)

    def capacity(self, node: StorageRecord, bound: int) -> int:
        bound = max(bound, 0)
        if not self.schedules:
            return bound
        host, request = Host(node), self.request
        if request.places_volumes and not host.free:
            return 0
        result = schedule(host, request, bound, keep=0)
        return min(result.normal_count, result.mono_count, bound)

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
        request = self.request
        count = self.volumes.capacity(record, self.bound) if self.volumes.schedules else self.bound
        if request.storage_request > 0:
            count = min(count, storage_room(record, request.storage_request))
        return (count, *self._usage_rate(record))

    def limit(self, record: StorageRecord) -> tuple[int, Limit]:
        """The count and the first limit it reached: ``volume_limit`` runs the count's passes, recording
        where they stop (for ``explain``)."""
        request, bound = self.request, self.bound
        count, limit = self.volumes.limit(record, bound) if self.volumes.schedules else (bound, None)
        if request.storage_request > 0:
            room = storage_room(record, request.storage_request)
            if room < count:
                from resource_extend.storage.scheduler.limits import size_text  # explain's words only

                capacity, usage = sides(record)
                free, each = size_text(capacity.storage - usage.storage), size_text(request.storage_request)
                count, limit = room, Limit("storage", f"storage: {free} free, {each} per workload")
        return count, limit or Limit("cap", f"scheduler.max_deploy_count is {bound}")

    def _usage_rate(self, record: StorageRecord) -> tuple[float, float]:
        capacity, usage = sides(record)
        request = self.request
        if request.volumes_request or request.storage_request == 0:
            volumes = volumes_total(capacity.volumes)
            return ratio(volumes_total(usage.volumes), volumes), ratio(self.size, volumes)
        return ratio(usage.storage, capacity.storage), ratio(request.storage_request, capacity.storage)
