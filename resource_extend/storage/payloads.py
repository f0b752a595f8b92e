"""The storage plugin's requests: one value per verb, and the resources in the form operators write them.

A handler reads its request here once, where the call starts, as the reference decodes a request into a
struct before its logic runs, and then works on the value; the fields are read in the order, and refused
with the messages, they always were. add-node's resource and get-node-resource-info's workloads are
decoded later (``envelope.records.AddNode.record``, ``envelope.nodeinfo.NodeWorkloads.held``): the reference
reads them only after the store has answered. ``WorkloadRequest`` (storage/workload_request.py) and
``NodeRequest`` (storage/node_request.py) read core's loosely typed resource maps the way the reference does
(aliases, human sizes, non-string list elements dropped); each is imported where its form is read, so a store
call in stored form creates neither.
"""

from __future__ import annotations

from resource_extend.formats import decoding
from resource_extend.formats.decoding import strict_int
from resource_extend.storage.record import NodeResource, StorageRecord

# ``binding`` and ``workload`` (with ``plan``) are imported where a workload or its volumes are read: a node
# verb without workloads, most store calls, loads neither (~30 KB of code and six classes per call).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.envelope import JSONObject
    from resource_extend.storage.node_request import NodeRequest
    from resource_extend.storage.workload import WorkloadResource
    from resource_extend.storage.workload_request import WorkloadRequest

# -- the verbs' requests --------------------------------------------------------------------------------


def workload(doc: JSONObject) -> WorkloadResource:
    """One entry of ``workloads_resource``: what a workload on the node holds; any bad binding text fails."""
    from resource_extend.storage.workload import WorkloadResource

    return WorkloadResource.from_json(doc)


def storage_total(info: JSONObject) -> int:
    """The engine report's ``StorageTotal`` (already type-checked by ``envelope.engine_info``), 0 if absent."""
    value = info.get("StorageTotal")
    return 0 if value is None else strict_int(value, "info.StorageTotal")


def stored_form(value: JSONObject | None, where: str) -> NodeResource:
    """set-node-resource-info's ``capacity`` / ``usage``: absent reads as a resource with null fields."""
    return NodeResource.from_json(value or {}, where)


def resource_param(req: JSONObject, key: str) -> NodeResource | None:
    """A node resource in stored form (``resource``); absent or not an object is ``None``."""
    value = decoding.obj(req, key)
    return None if value is None else NodeResource.from_json(value, key)


def request_param(req: JSONObject, key: str) -> NodeRequest | None:
    """A node resource in request form (``resource_request``); present even when ``{}``."""
    value = decoding.obj(req, key)
    if value is None:
        return None
    from resource_extend.storage.node_request import NodeRequest

    return NodeRequest.parse(value)


class StoragePayloads:
    """How the storage plugin reads its own payloads, for the shared request values in ``envelope``."""

    __slots__ = ()

    # The work of a storage workload grows with its bindings, the request's and the limit's lists (decision 18).
    ITEMS = "volume bindings"

    def added(self, resource: JSONObject | None, info: JSONObject) -> StorageRecord:
        """The new node's record: the request's resource (with no storage and no volumes, 80% of the
        engine's ``StorageTotal``); nothing used."""
        from resource_extend.storage.node_request import NodeRequest

        capacity = NodeRequest.parse(resource or {}).capacity_for_add(storage_total(info))
        return StorageRecord(capacity, NodeResource())

    def record(self, capacity: JSONObject | None, usage: JSONObject | None) -> StorageRecord:
        # Stored as given (decision 12): core's RemoveNode rollback, the only caller, sends the stored form
        # read from get-node-resource-info, whose storage already counts the volumes. The reference adds the
        # volume total again, so each rollback grew the node.
        return StorageRecord(stored_form(capacity, "capacity"), stored_form(usage, "usage"))

    def workload(self, doc: JSONObject) -> WorkloadResource:
        return workload(doc)

    def usage(self, doc: JSONObject) -> NodeResource | None:
        # Unlike the GPU plugin's, ``resource`` is not read at all when ``resource_request`` is present.
        request = request_param(doc, "resource_request")
        return request.as_resource() if request is not None else resource_param(doc, "resource")

    def capacity(self, doc: JSONObject, delta: bool, incr: bool) -> tuple[NodeRequest | None, NodeResource | None]:
        from resource_extend.storage.node_request import check_rm_disks, rollback_resource

        # A rollback's snapshot is the ``resource``, restored as it is.
        restored = rollback_resource(doc.get("resource"), doc.get("resource_request"), delta, incr)
        if restored is not None:
            return None, restored
        request = request_param(doc, "resource_request")
        resource = resource_param(doc, "resource")
        check_rm_disks(request, delta)
        return request, resource

    def request(self, doc: JSONObject, key: str) -> WorkloadRequest:
        from resource_extend.storage.workload_request import new_workload

        return new_workload(doc, key)

    def change(self, value: JSONObject | None) -> WorkloadRequest:
        from resource_extend.storage.workload_request import WorkloadRequest

        # Validated only once merged with what the workload holds: a change may shrink a volume.
        return WorkloadRequest.parse(value or {})

    def current(self, value: JSONObject | None) -> WorkloadResource:
        from resource_extend.storage.workload import WorkloadResource

        return WorkloadResource.from_json(value)

    def items(self, request: WorkloadRequest) -> int:
        return max(len(request.volumes_request), len(request.volumes_limit))

    def change_items(self, change: WorkloadRequest) -> int:
        return self.items(change)

    def current_items(self, current: WorkloadResource) -> int:
        return max(
            len(current.volumes_request),
            len(current.volumes_limit),
            len(current.volume_plan_request),
            len(current.volume_plan_limit),
        )


PAYLOADS = StoragePayloads()
