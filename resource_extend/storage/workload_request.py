"""A new workload's storage request (``workload_resource_request``) as core sends it, and its normalising checks.

Read by the calculate verbs only (through ``Payloads.request`` and ``change``): a store call creates none of
this, nor imports the volume bindings it is made of.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.storage.binding import (
    VolumeBinding,
    parse_request_bindings,
    total_size,
    validate_bindings,
)
from resource_extend.storage.size import size_param
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.envelope import JSONObject

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
        volumes_request = parse_request_bindings(_first_non_empty(req, _REQUEST_KEYS))
        volumes_limit = parse_request_bindings(_first_non_empty(req, _LIMIT_KEYS))
        storage_request = size_param(req, "storage-request")
        storage_limit = size_param(req, "storage-limit")
        if "storage" in req:
            storage_request = storage_limit = size_param(req, "storage")
        if volumes_limit and not volumes_request:
            volumes_request = [binding.copy() for binding in volumes_limit]
        return cls(volumes_request, volumes_limit, storage_request, storage_limit)

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


def _first_non_empty(req: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    for key in keys:
        values = decoding.string_list(req, key)
        if values:
            return values
    return []


def _settle_volumes(requests: list[VolumeBinding], limits: list[VolumeBinding]) -> PluginError | None:
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
        request.storage_request += total_size(request.volumes_request)
        request.storage_limit += total_size(request.volumes_limit)
    return None


def new_workload(req: JSONObject, key: str) -> WorkloadRequest:
    """A new workload's request as core sends it, parsed and validated (sizes folded into storage).

    A negative volume size is refused here (decision 14): only a realloc's change may shrink a volume.
    """
    request = WorkloadRequest.parse(decoding.obj(req, key) or {})
    for binding in (*request.volumes_request, *request.volumes_limit):
        if binding.size < 0:
            raise PluginError(
                f"{key}: volume {str(binding)!r} has a negative size ({binding.size} bytes); a new workload's "
                "volume takes a size of 0 (unlimited) or more, only calculate-realloc takes a negative change: "
                "invalid volume"
            )
    return request.validated()
