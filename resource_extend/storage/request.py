"""The storage plugin's requests: one value per verb, and the resources in the form operators write them.

A handler reads its request here once, where the call starts, as the reference decodes a request into a
struct before its logic runs, and then works on the value; the fields are read in the order, and refused
with the messages, they always were. add-node's resource and get-node-resource-info's workloads are
decoded later (``params.records.AddNode.record``, ``params.nodeinfo.NodeWorkloads.held``): the reference
reads them only after the store has answered. ``WorkloadRequest`` and ``NodeRequest`` read core's loosely
typed resource maps the way the reference does (aliases, human sizes, non-string list elements dropped).
"""

from __future__ import annotations

from resource_extend import errors, params
from resource_extend.decoding import control_character, strict_int
from resource_extend.errors import PluginError
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.size import parse_size, size_param
from resource_extend.storage.volume import Volumes, volumes_total
from resource_extend.typeshim import Fields

# ``binding`` and ``workload`` (with ``plan``) are imported where a workload or its volumes are read: a node
# verb without workloads, most store calls, loads neither (~30 KB of code and six classes per call).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.params import JSONObject
    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.workload import WorkloadResource

_REQUEST_KEYS = ("volumes-request", "volume-request")
_LIMIT_KEYS = ("volumes", "volume", "volume-limit", "volumes-limit")


class WorkloadRequest(Fields):
    __slots__ = ("storage_limit", "storage_request", "volumes_limit", "volumes_request")

    def __init__(
        self,
        volumes_request: list[VolumeBinding] | None = None,
        volumes_limit: list[VolumeBinding] | None = None,
        storage_request: int = 0,
        storage_limit: int = 0,
    ) -> None:
        self.volumes_request: list[VolumeBinding] = [] if volumes_request is None else volumes_request
        self.volumes_limit: list[VolumeBinding] = [] if volumes_limit is None else volumes_limit
        self.storage_request = storage_request
        self.storage_limit = storage_limit

    @classmethod
    def parse(cls, req: dict[str, Any]) -> WorkloadRequest:
        """Read ``workload_resource_request``; bad binding or size text is an error."""
        from resource_extend.storage.binding import parse_request_bindings

        volumes_request = parse_request_bindings(_first_non_empty(req, _REQUEST_KEYS))
        volumes_limit = parse_request_bindings(_first_non_empty(req, _LIMIT_KEYS))
        storage_request = size_param(req, "storage-request")
        storage_limit = size_param(req, "storage-limit")
        if "storage" in req:
            storage_request = storage_limit = size_param(req, "storage")
        if volumes_limit and not volumes_request:
            volumes_request = [binding.copy() for binding in volumes_limit]
        return cls(volumes_request, volumes_limit, storage_request, storage_limit)

    def realloc_merge(self, current: WorkloadResource) -> WorkloadRequest:
        """The workload's new totals when this request is applied to what it holds (validate with
        ``fold=False``: the request's binding sizes are already counted into the storages here)."""
        from resource_extend.storage.binding import merge_bindings, total_size

        return WorkloadRequest(
            merge_bindings(self.volumes_request, current.volumes_request),
            merge_bindings(self.volumes_limit, current.volumes_limit),
            self.storage_request + current.storage_request + total_size(self.volumes_request),
            self.storage_limit + current.storage_limit + total_size(self.volumes_limit),
        )

    def validated(self, fold: bool = True) -> WorkloadRequest:
        """Check the request and return it normalised: both lists sorted by stored form and paired,
        limits raised to their requests, storages settled and (``fold``) the binding sizes added in.

        Raises ``PluginError`` (``invalid volume`` / ``invalid storage``); ``self`` is never changed.
        """
        result = WorkloadRequest(
            [binding.copy() for binding in self.volumes_request],
            [binding.copy() for binding in self.volumes_limit],
            self.storage_request,
            self.storage_limit,
        )
        if not (result.volumes_request or result.volumes_limit or result.storage_request or result.storage_limit):
            return result
        # The reference runs both checks even when the first fails; the first failure is reported.
        volume_error = _settle_volumes(result.volumes_request, result.volumes_limit)
        storage_error = _settle_storage(result, fold)
        error = volume_error or storage_error
        if error is not None:
            raise error
        return result


class NodeRequest(Fields):
    """A node's resources in request form; ``present`` records which keys the request had."""

    __slots__ = ("disks", "present", "rm_disks", "storage", "volumes")

    def __init__(
        self,
        volumes: Volumes | None = None,
        storage: int = 0,
        disks: list[Disk] | None = None,
        rm_disks: list[str] | None = None,
        present: frozenset[str] = frozenset(),
    ) -> None:
        self.volumes: Volumes = {} if volumes is None else volumes
        self.storage = storage
        self.disks: list[Disk] = [] if disks is None else disks
        self.rm_disks = rm_disks
        self.present = present

    @classmethod
    def parse(cls, req: dict[str, Any]) -> NodeRequest:
        """Read add-node's ``resource`` or set-*'s ``resource_request``; ``storage`` includes the volumes."""
        volumes: Volumes = {}
        for text in params.string_list(req, "volumes"):
            parts = text.split(":")
            if len(parts) != 2:
                raise errors.InvalidVolume(
                    f"volume should have 2 parts, device:size (e.g. /data0:1T), not {len(parts)}: {text!r}"
                )
            check_volume_device(parts[0], text)
            try:
                volumes[parts[0]] = parse_size(parts[1])
            except PluginError as cause:
                raise PluginError(f"volume {text!r}: size {parts[1]!r}: {cause}") from None
        storage = size_param(req, "storage") + volumes_total(volumes)
        disks = [Disk.parse(text) for text in params.string_list(req, "disks")]
        rm_disks = params.string(req, "rm-disks").split(",") if "rm-disks" in req else None
        present = frozenset(key for key in ("volumes", "storage", "disks") if key in req)
        return cls(volumes, storage, disks, rm_disks, present)

    def as_resource(self) -> NodeResource:
        return NodeResource(dict(self.volumes), [disk.copy() for disk in self.disks], self.storage)

    def capacity_for_add(self, storage_total: int) -> NodeResource:
        """add-node's capacity: with no storage and no volumes, 80% of what the engine reports."""
        resource = self.as_resource()
        if resource.storage == 0:
            scaled = abs(storage_total) * 8 // 10
            resource.storage = scaled if storage_total >= 0 else -scaled
        return resource

    def skip_empty(self, stored: NodeResource) -> NodeRequest:
        """For an absolute capacity update: keys the request left out keep their stored values; storage
        left out follows a change of volumes."""
        volumes = self.volumes if "volumes" in self.present else dict(stored.volumes or {})
        if "storage" in self.present:
            storage = self.storage
        elif "volumes" in self.present:
            storage = stored.storage - volumes_total(stored.volumes) + volumes_total(self.volumes)
        else:
            storage = stored.storage
        disks = self.disks if "disks" in self.present else [disk.copy() for disk in stored.disks or ()]
        return NodeRequest(volumes, storage, disks, self.rm_disks, self.present)


def check_volume_device(device: str, text: str) -> None:
    """Decision 14: a capacity volume's device is the host directory AUTO bindings are given, so an
    absolute path with no ``:`` or ``,`` (the separators of bindings and lists) and no control character.
    ``/`` is an absolute path and stays valid (disk mounts use it too)."""
    if device.startswith("/") and "," not in device and control_character(device) is None:
        return
    raise errors.InvalidVolume(
        f"volume {text!r}: device {device!r} must be an absolute path without ',' or control characters "
        "(e.g. /data0:1T)"
    )


def rollback_resource(resource: Any, resource_request: Any, delta: bool, incr: bool) -> NodeResource | None:
    """The capacity core asks to restore verbatim, if this set-node-resource-capacity call is a rollback.

    Core rolls back by sending a previous ``before`` as ``resource_request`` with no ``resource``, absolute;
    a request that only looks like one (e.g. ``volumes`` as strings) is processed as a normal request.
    """
    if isinstance(resource, dict) or delta or incr or not isinstance(resource_request, dict):
        return None
    if not {"volumes", "disks", "storage"} <= resource_request.keys():
        return None
    try:
        return NodeResource.from_json(resource_request, "resource_request")
    except PluginError:
        return None


def _first_non_empty(req: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    for key in keys:
        values = params.string_list(req, key)
        if values:
            return values
    return []


def _settle_volumes(requests: list[VolumeBinding], limits: list[VolumeBinding]) -> PluginError | None:
    from resource_extend.storage.binding import VolumeBinding, validate_bindings

    if len(requests) != len(limits):
        return errors.InvalidVolume(f"different length of request and limit ({len(requests)} != {len(limits)})")
    try:
        validate_bindings(requests)
        validate_bindings(limits)
    except PluginError as error:
        return error
    requests.sort(key=VolumeBinding.to_string)
    limits.sort(key=VolumeBinding.to_string)
    for request, limit in zip(requests, limits):
        if request.key != limit.key:
            return errors.InvalidVolume(f"request and limit not match: {request} vs {limit}")
        # A limit size of 0 means unlimited and is never raised.
        if request.size > 0 and limit.size > 0 and request.size > limit.size:
            limit.size = request.size
        limit.quota = limit.quota.most(request.quota)
    return None


def _settle_storage(request: WorkloadRequest, fold: bool) -> PluginError | None:
    if request.storage_request < 0 or request.storage_limit < 0:
        return errors.InvalidStorage(
            f"storage limit or request less than 0 (request {request.storage_request}, limit {request.storage_limit})"
        )
    if request.storage_request == 0:
        request.storage_request = request.storage_limit
    # A positive limit is a soft one: it never stays below the request. A limit of 0 means unlimited.
    if request.storage_limit > 0 and request.storage_request > request.storage_limit:
        request.storage_limit = request.storage_request
    if fold:
        from resource_extend.storage.binding import total_size

        request.storage_request += total_size(request.volumes_request)
        request.storage_limit += total_size(request.volumes_limit)
    return None


# -- the verbs' requests --------------------------------------------------------------------------------


def workload(doc: JSONObject) -> WorkloadResource:
    """One entry of ``workloads_resource``: what a workload on the node holds; any bad binding text fails."""
    from resource_extend.storage.workload import WorkloadResource

    return WorkloadResource.from_json(doc)


def storage_total(info: JSONObject) -> int:
    """The engine report's ``StorageTotal`` (already type-checked by ``params.engine_info``), 0 if absent."""
    value = info.get("StorageTotal")
    return 0 if value is None else strict_int(value, "info.StorageTotal")


def stored_form(value: JSONObject | None, where: str) -> NodeResource:
    """set-node-resource-info's ``capacity`` / ``usage``: absent reads as a resource with null fields."""
    return NodeResource.from_json(value or {}, where)


def resource_param(req: JSONObject, key: str) -> NodeResource | None:
    """A node resource in stored form (``resource``); absent or not an object is ``None``."""
    value = params.obj(req, key)
    return None if value is None else NodeResource.from_json(value, key)


def request_param(req: JSONObject, key: str) -> NodeRequest | None:
    """A node resource in request form (``resource_request``); present even when ``{}``."""
    value = params.obj(req, key)
    return None if value is None else NodeRequest.parse(value)


def check_rm_disks(request: NodeRequest | None, delta: bool) -> None:
    """Removing disks is only meaningful for an absolute capacity: with delta it is core's bad engine args."""
    if request is not None and request.rm_disks and delta:
        removed = ",".join(request.rm_disks)
        raise PluginError(f'invalid engine args: rm-disks "{removed}" cannot be used with delta')


def new_workload(req: JSONObject, key: str) -> WorkloadRequest:
    """A new workload's request as core sends it, parsed and validated (sizes folded into storage).

    A negative volume size is refused here (decision 14): only a realloc's change may shrink a volume.
    """
    request = WorkloadRequest.parse(params.obj(req, key) or {})
    for binding in (*request.volumes_request, *request.volumes_limit):
        if binding.size < 0:
            raise PluginError(
                f"{key}: volume {str(binding)!r} has a negative size ({binding.size} bytes); a new workload's "
                "volume takes a size of 0 (unlimited) or more, only calculate-realloc takes a negative change: "
                "invalid volume"
            )
    return request.validated()


class Payloads:
    """How the storage plugin reads its own payloads, for the shared request values in ``params``."""

    __slots__ = ()

    # The work of a storage workload grows with its bindings, the request's and the limit's lists (decision 18).
    ITEMS = "volume bindings"

    def added(self, resource: JSONObject | None, info: JSONObject) -> StorageRecord:
        """The new node's record: the request's resource (with no storage and no volumes, 80% of the
        engine's ``StorageTotal``); nothing used."""
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
        # A rollback's snapshot is the ``resource``, restored as it is.
        restored = rollback_resource(doc.get("resource"), doc.get("resource_request"), delta, incr)
        if restored is not None:
            return None, restored
        request = request_param(doc, "resource_request")
        resource = resource_param(doc, "resource")
        check_rm_disks(request, delta)
        return request, resource

    def request(self, doc: JSONObject, key: str) -> WorkloadRequest:
        return new_workload(doc, key)

    def change(self, value: JSONObject | None) -> WorkloadRequest:
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


PAYLOADS = Payloads()
