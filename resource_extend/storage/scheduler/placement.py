"""The scheduler's entry point for a deploy (spec §3): the placements of a request on one node. Their count
(and for ``explain`` what stopped it) is ``count``'s, which calculate-deploy never loads."""

from __future__ import annotations

from resource_extend.storage.scheduler.assembly import plans
from resource_extend.storage.scheduler.host import Host

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
