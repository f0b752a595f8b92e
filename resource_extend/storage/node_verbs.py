"""The storage plugin's node verbs: the ``Kind`` the shared ones in ``nodeverbs`` use, and those only it answers.

Each verb reads its request into its value (``request``), works out the new record with the pure functions
below and touches the store once; a write that depends on what was stored is one guarded step
(``NodeStore.update``). Behaviour is the reference's (spec storage-scheduler.md §6.1, §6.2, §6.6–§6.10,
storage-types.md §8–§10).
"""

from __future__ import annotations

from resource_extend import requests
from resource_extend.command.nodeverbs import set_side
from resource_extend.command.verb import Call
from resource_extend.storage.record import NodeResource, StorageRecord, combine, reconcile_usage
from resource_extend.storage.request import PAYLOADS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.command.answers import BeforeAfter, MostIdle
    from resource_extend.storage.node_request import NodeRequest
    from resource_extend.storage.record import NodeResourceJSON
    from resource_extend.storage.workload import WorkloadResource

StorageCall = Call[StorageRecord]

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


# -- verbs ------------------------------------------------------------------------------------------


def _capacity_before(record: StorageRecord) -> NodeResourceJSON:
    return _capacity(record).copy().to_json()


def _capacity_after(record: StorageRecord) -> NodeResourceJSON:
    return _capacity(record).to_json()


def _usage_before(record: StorageRecord) -> NodeResourceJSON:
    return _usage(record).copy().to_json()


def _usage_after(record: StorageRecord) -> NodeResourceJSON:
    return _usage(record).to_json()


def set_node_resource_capacity(call: StorageCall) -> BeforeAfter[NodeResourceJSON]:
    from resource_extend.requests.sides import SetCapacity  # each verb creates its own request classes only
    from resource_extend.storage import node_request  # noqa: F401  (read below: loaded with the verb's code)

    request = SetCapacity.from_json(call.request, PAYLOADS)

    def change(record: StorageRecord) -> StorageRecord:
        capacity = new_capacity(_capacity(record), request.request, request.resource, request.delta, request.incr)
        return StorageRecord(capacity, record.usage)

    return set_side(call, request.nodename, change, _capacity_before, _capacity_after)


def set_node_resource_usage(call: StorageCall) -> BeforeAfter[NodeResourceJSON]:
    from resource_extend.requests.sides import SetUsage

    request = SetUsage.from_json(call.request, PAYLOADS)

    def change(record: StorageRecord) -> StorageRecord:
        usage = combine(_usage(record), request.resource, request.workloads, request.delta, request.incr)
        return StorageRecord(record.capacity, usage)

    return set_side(call, request.nodename, change, _usage_before, _usage_after)


def get_most_idle_node(call: StorageCall) -> MostIdle:
    # The reference does not weigh storage nodes against each other and reads no record.
    return {"nodename": requests.nodenames(call.request)[0], "priority": PRIORITY}
