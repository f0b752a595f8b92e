"""The scheduler's entry points for a deploy (spec §3): the placements of a request on one node, their
count, and for ``explain`` what stopped the count."""

from __future__ import annotations

from resource_extend.capacity import Limit
from resource_extend.storage.binding import need_schedule
from resource_extend.storage.scheduler.assembly import plans
from resource_extend.storage.scheduler.classes import ClassifiedRequest
from resource_extend.storage.scheduler.host import Host
from resource_extend.storage.scheduler.passes import schedule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.record import StorageRecord
    from resource_extend.storage.scheduler.assembly import Placement


def volume_plans(
    node: StorageRecord,
    bindings: Sequence[VolumeBinding],
    bound: int,
) -> list[Placement]:
    """Up to ``bound`` placements of ``bindings`` on the node (spec §3); empty when none fits.

    ``node`` is the node's record: its capacity and usage sides; a null side, map or list reads as empty.
    ``bound`` is ``deploy_count`` for calculate-deploy. Plans share the request's binding objects as keys
    (as the reference shares pointers); treat them as read-only.
    """
    host = Host(node)
    return plans(host, bindings, max(bound, 0))


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
