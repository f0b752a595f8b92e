"""Volume plans: for each binding that needed placement, the device chosen and the bytes reserved on it.

In JSON a plan is an object keyed by the binding's stored form, e.g.
``{"AUTO:/data:rw:1073741824:0:0:0:0": {"/data0": 1073741824}}``. Entries are matched by destination only.
"""

from __future__ import annotations

from resource_extend import decoding
from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.volume import Volumes, first_volume, volumes_from_json
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

PlanEntry = tuple[VolumeBinding, Volumes]


class VolumePlan(Fields):
    __slots__ = ("entries",)

    def __init__(self, entries: list[PlanEntry] | None = None) -> None:
        self.entries: list[PlanEntry] = [] if entries is None else entries

    @classmethod
    def from_json(cls, value: Any, where: str = "volume plan") -> VolumePlan:
        """Keys are parsed as bindings (human sizes allowed); one bad key fails the plan. Null is empty."""
        source = decoding.object_or_none(value, where)
        entries = []
        for text, volumes in (source or {}).items():
            entries.append((VolumeBinding.parse(text), volumes_from_json(volumes, f"{where}[{text}]") or {}))
        return cls(entries)

    def to_json(self) -> dict[str, Volumes]:
        rendered = {binding.to_string(): dict(sorted(volumes.items())) for binding, volumes in self.entries}
        return dict(sorted(rendered.items()))

    def __iter__(self) -> Iterator[PlanEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, binding: VolumeBinding, device: str, size: int) -> None:
        self.entries.append((binding, {device: size}))

    def copy(self) -> VolumePlan:
        return VolumePlan([(binding.copy(), dict(volumes)) for binding, volumes in self.entries])

    def lookup(self, binding: VolumeBinding) -> PlanEntry | None:
        """The entry planned for the same destination (flags, source and size do not matter)."""
        return next((entry for entry in self.entries if entry[0].destination == binding.destination), None)

    def merged(self, other: VolumePlan) -> VolumePlan:
        """This plan with ``other``'s entries folded in; an entry for a destination already planned
        replaces it, with sizes and quotas summed and the device taken from ``other``."""
        result = self.copy()
        for binding, volumes in other.entries:
            device, size = first_volume(volumes)
            old = result.lookup(binding)
            if old is None:
                result.entries.append((binding.copy(), dict(volumes)))
                continue
            result.entries.remove(old)
            old_binding, old_volumes = old
            combined = VolumeBinding(
                binding.source,
                binding.destination,
                binding.flags,
                binding.size + old_binding.size,
                *binding.quota.plus(old_binding.quota),
            )
            result.entries.append((combined, {device: size + first_volume(old_volumes)[1]}))
        return result

    def volumes(self) -> Volumes:
        """Bytes reserved per device over the whole plan."""
        total: Volumes = {}
        for _, volumes in self.entries:
            for device, size in volumes.items():
                total[device] = total.get(device, 0) + size
        return total


def apply_plan(bindings: Iterable[VolumeBinding], plan: VolumePlan) -> list[VolumeBinding]:
    """Copies of the bindings with planned ones moved onto their device and grown to the planned size."""
    applied = []
    for binding in bindings:
        copy = binding.copy()
        entry = plan.lookup(binding)
        if entry is not None:
            copy.source, size = first_volume(entry[1])
            copy.size = max(copy.size, size)
        applied.append(copy)
    return applied
