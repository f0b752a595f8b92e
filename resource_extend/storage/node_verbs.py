"""The storage plugin's ``Kind``: what the shared node verbs in ``command/nodeverbs`` need of storage records,
as pure functions of records and request values (record in, record or answer out). The command tree reads
the request, the store and writes; nothing here touches either (issue 37: one way). Behaviour is the
reference's (spec storage-scheduler.md §6.1, §6.2, §6.6–§6.10, storage-types.md §8–§10).
"""

from __future__ import annotations

from resource_extend.storage.record import NodeResource, StorageRecord, combine, reconcile_usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from resource_extend.envelope.sides import SetCapacity, SetUsage
    from resource_extend.plugin.answers import MostIdle
    from resource_extend.storage.node_request import NodeRequest
    from resource_extend.storage.record import NodeResourceJSON
    from resource_extend.storage.workload import WorkloadResource

# get-most-idle-node does not compare storage nodes: the first one named wins, with this priority.
PRIORITY = 1


# -- pure helpers ------------------------------------------------------------------------------------


def new_capacity(
    capacity: NodeResource,
    request: NodeRequest | None,
    resource: NodeResource | None,
    delta: bool,
    incr: bool,
) -> NodeResource:
    """set-node-resource-capacity's new capacity from the stored one (spec §6.6).

    A request wins over ``resource``. rm-disks drop capacity disks first; an absolute request keeps what
    it leaves out; a delta drops the volumes that reach exactly 0.
    """
    from resource_extend.storage.node_request import check_rm_disks

    check_rm_disks(request, delta)
    origin = capacity.copy()
    if request is not None:
        if request.rm_disks:
            removed = set(request.rm_disks)
            origin.disks = [disk for disk in origin.disks or () if disk.device not in removed]
        if not delta:
            request = request.skip_empty(origin)
        resource = request.as_resource()
    result = combine(origin, resource, [], delta, incr)
    return result.without_empty_volumes() if delta else result


def _usage(record: StorageRecord) -> NodeResource:
    return record.usage if record.usage is not None else NodeResource()


def _capacity(record: StorageRecord) -> NodeResource:
    return record.capacity if record.capacity is not None else NodeResource()


# -- the kind: what the shared node verbs in nodeverbs need to know of storage records ----------------


def reconcile(record: StorageRecord, held: list[WorkloadResource]) -> tuple[StorageRecord, list[str]]:
    computed, diffs = reconcile_usage(_usage(record), held)
    return StorageRecord(record.capacity, computed), diffs


# -- the sides set-node-resource-capacity and set-node-resource-usage answer with, before and after -------


def capacity_before(record: StorageRecord) -> NodeResourceJSON:
    return _capacity(record).copy().to_json()


def capacity_after(record: StorageRecord) -> NodeResourceJSON:
    return _capacity(record).to_json()


def usage_before(record: StorageRecord) -> NodeResourceJSON:
    return _usage(record).copy().to_json()


def usage_after(record: StorageRecord) -> NodeResourceJSON:
    return _usage(record).to_json()


def capacity_change(request: SetCapacity[Any, Any]) -> Callable[[StorageRecord], StorageRecord]:
    """set-node-resource-capacity's change of a stored record."""

    def change(record: StorageRecord) -> StorageRecord:
        capacity = new_capacity(_capacity(record), request.request, request.resource, request.delta, request.incr)
        return StorageRecord(capacity, record.usage)

    return change


def usage_change(request: SetUsage[Any, Any]) -> Callable[[StorageRecord], StorageRecord]:
    """set-node-resource-usage's change of a stored record."""

    def change(record: StorageRecord) -> StorageRecord:
        usage = combine(_usage(record), request.resource, request.workloads, request.delta, request.incr)
        return StorageRecord(record.capacity, usage)

    return change


def most_idle(nodes: list[str], records: Callable[[], dict[str, StorageRecord]]) -> MostIdle:
    # The reference does not weigh storage nodes against each other and reads no record (``records`` unused).
    return {"nodename": nodes[0], "priority": PRIORITY}
