"""A node's resources in request form (add-node's ``resource``, set-node-resource-capacity's and -usage's
``resource_request``), as operators write them: ``device:size`` volumes, human sizes, disk specs, rm-disks.

Imported where such a request is read: a store call in stored form (core's set-node-resource-usage) creates
none of this.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.formats.decoding import control_character
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource
from resource_extend.storage.size import parse_size, size_param
from resource_extend.storage.volume import Volumes, volumes_total
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
        for text in decoding.string_list(req, "volumes"):
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
        disks = [Disk.parse(text) for text in decoding.string_list(req, "disks")]
        rm_disks = decoding.string(req, "rm-disks").split(",") if "rm-disks" in req else None
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


def check_rm_disks(request: NodeRequest | None, delta: bool) -> None:
    """Removing disks is only meaningful for an absolute capacity: with delta it is core's bad engine args."""
    if request is not None and request.rm_disks and delta:
        removed = ",".join(request.rm_disks)
        raise PluginError(f'invalid engine args: rm-disks "{removed}" cannot be used with delta')
