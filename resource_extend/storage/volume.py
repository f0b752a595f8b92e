"""Volume maps: ``device -> bytes``, the unit capacity, usage and plans are counted in.

Plain dicts, so they serialise as they are; the functions here never modify their arguments.
"""

from __future__ import annotations

from resource_extend.formats import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Volumes = dict[str, int]


def volumes_from_json(value: Any, where: str) -> Volumes | None:
    """An object of integers; ``None`` for null (kept distinct from ``{}`` on the way back out)."""
    source = decoding.object_or_none(value, where)
    if source is None:
        return None
    if decoding.plain_int64s(source.values()):
        return dict(source)
    return {device: decoding.int_field(source, device, where) for device in source}


def volumes_to_json(volumes: Volumes | None) -> Volumes | None:
    """Keys sorted, as Go marshals a map."""
    return None if volumes is None else dict(sorted(volumes.items()))


def volumes_add(volumes: Volumes, other: Volumes) -> Volumes:
    result = dict(volumes)
    for device, size in other.items():
        result[device] = result.get(device, 0) + size
    return result


def volumes_sub(volumes: Volumes, other: Volumes) -> Volumes:
    """Per-device difference; devices only in ``other`` appear negated, zero entries are kept."""
    result = dict(volumes)
    for device, size in other.items():
        result[device] = result.get(device, 0) - size
    return result


def volumes_total(volumes: Volumes | None) -> int:
    return sum(volumes.values()) if volumes else 0


def first_volume(volumes: Volumes) -> tuple[str, int]:
    """The (device, bytes) of a one-entry plan map; ``("", 0)`` when it is empty."""
    return next(iter(volumes.items()), ("", 0))
