"""The GPU node record stored in etcd: ``{"capacity": {"prod_count_map": …}, "usage": {…}}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.prodmap import MaybeMap
from resource_extend.store import JsonRecords


@dataclass(frozen=True)
class GpuRecord:
    capacity: MaybeMap
    usage: MaybeMap

    @classmethod
    def empty(cls) -> GpuRecord:
        return cls({}, {})

    @classmethod
    def from_json(cls, doc: Any) -> GpuRecord:
        # Reading overlays the stored JSON on an empty record: a missing side reads as empty.
        if not isinstance(doc, dict):
            raise PluginError("a GPU record must be a JSON object")
        sides: list[MaybeMap] = []
        for side in ("capacity", "usage"):
            value = doc.get(side)
            if value is None:
                sides.append({})
            elif isinstance(value, dict):
                sides.append(prodmap.parse(value, side))
            else:
                raise PluginError(f"{side} must be an object")
        return cls(sides[0], sides[1])

    def to_json(self) -> dict[str, Any]:
        return {"capacity": prodmap.to_json(self.capacity), "usage": prodmap.to_json(self.usage)}

    def available(self) -> prodmap.ProdMap:
        return prodmap.sub(self.capacity, self.usage)


class GpuRecords(JsonRecords[GpuRecord]):
    """The ``RecordType`` of the node store for GPU records."""

    def empty(self) -> GpuRecord:
        return GpuRecord.empty()

    def from_json(self, doc: Any) -> GpuRecord:
        return GpuRecord.from_json(doc)

    def checked(self, record: GpuRecord) -> GpuRecord:
        # Usage above capacity is deliberately not checked: the reference does not either.
        for side, m in (("capacity", record.capacity), ("usage", record.usage)):
            try:
                prodmap.validate(m)
            except PluginError as exc:
                raise PluginError(f"invalid {side}: {exc}") from None
        return record
