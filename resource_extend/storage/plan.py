"""Volume plans: for each binding that needed placement, the device chosen and the bytes reserved on it.

In JSON a plan is an object keyed by the binding's stored form, e.g.
``{"AUTO:/data:rw:1073741824:0:0:0:0": {"/data0": 1073741824}}``. Entries are matched by destination only.
"""

from __future__ import annotations

from resource_extend.formats import decoding
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
        return self.by_destination().get(binding.destination)

    def by_destination(self) -> dict[str, PlanEntry]:
        """``lookup`` for every destination at once: the first entry planned for each.

        Callers that look up many bindings build this once, so a plan of n entries costs n, not n².
        """
        index: dict[str, PlanEntry] = {}
        for entry in self.entries:
            index.setdefault(entry[0].destination, entry)
        return index

    def merged(self, other: VolumePlan) -> VolumePlan:
        """This plan with ``other``'s entries folded in; an entry for a destination already planned
        replaces it, with sizes and quotas summed and the device taken from ``other``.

        The replaced entry leaves its place and the sum goes last. Entries are kept in slots, and each
        destination's slots in order, so finding the first live entry of a destination is one step.
        """
        slots: list[PlanEntry | None] = [(binding.copy(), dict(volumes)) for binding, volumes in self.entries]
        at: dict[str, list[int]] = {}  # per destination, its slots in order; those before ``first`` are gone
        for position, (binding, _) in enumerate(self.entries):
            at.setdefault(binding.destination, []).append(position)
        first: dict[str, int] = {}
        for binding, volumes in other.entries:
            device, size = first_volume(volumes)
            positions = at.setdefault(binding.destination, [])
            head = first.get(binding.destination, 0)
            old = None if head == len(positions) else slots[positions[head]]
            if old is None:
                positions.append(len(slots))
                slots.append((binding.copy(), dict(volumes)))
                continue
            slots[positions[head]] = None
            first[binding.destination] = head + 1
            old_binding, old_volumes = old
            combined = VolumeBinding(
                binding.source,
                binding.destination,
                binding.flags,
                binding.size + old_binding.size,
                *binding.quota.plus(old_binding.quota),
            )
            positions.append(len(slots))
            slots.append((combined, {device: size + first_volume(old_volumes)[1]}))
        return VolumePlan([entry for entry in slots if entry is not None])

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
    planned = plan.by_destination()
    for binding in bindings:
        copy = binding.copy()
        entry = planned.get(binding.destination)
        if entry is not None:
            copy.source, size = first_volume(entry[1])
            copy.size = max(copy.size, size)
        applied.append(copy)
    return applied
