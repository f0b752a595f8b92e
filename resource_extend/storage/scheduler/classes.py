"""A request split the way the scheduler treats it (spec §2), once per scheduler run."""

from __future__ import annotations

from resource_extend.storage.disk import ZERO, Quota
from resource_extend.storage.scheduler.host import UNBOUNDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from resource_extend.storage.binding import VolumeBinding


class BindingClasses:
    """A request split the way the scheduler treats it (spec §2); unpacks as (mono, unlimited, normal, mount)."""

    __slots__ = ("mono", "mount", "normal", "unlimited")

    def __init__(
        self,
        mono: list[VolumeBinding],
        unlimited: list[VolumeBinding],
        normal: list[VolumeBinding],
        mount: list[VolumeBinding],
    ) -> None:
        self.mono = mono  # monopoly, by size ascending (stable)
        self.unlimited = unlimited  # size 0 and no quota, as given
        self.normal = normal  # every other binding to place, by size ascending (stable)
        self.mount = mount  # real host paths, as given

    def __iter__(self) -> Iterator[list[VolumeBinding]]:
        return iter((self.mono, self.unlimited, self.normal, self.mount))


def classify_bindings(bindings: Iterable[VolumeBinding]) -> BindingClasses:
    classes = BindingClasses([], [], [], [])
    for binding in bindings:
        # Monopoly is tested first, so a monopoly binding is never unlimited.
        if binding.monopoly:
            classes.mono.append(binding)
        elif binding.unlimited:
            classes.unlimited.append(binding)
        elif binding.require_schedule:
            classes.normal.append(binding)
        else:
            classes.mount.append(binding)
    classes.mono.sort(key=_size)
    classes.normal.sort(key=_size)
    return classes


def _size(binding: VolumeBinding) -> int:
    return binding.size


def _sum_quota(bindings: Iterable[VolumeBinding]) -> Quota:
    total = ZERO
    for binding in bindings:
        total = total.plus(binding.quota)
    return total


class ClassifiedRequest:
    """The bindings of one request by class, with the sums and facts the passes read again and again."""

    def __init__(self, bindings: Iterable[VolumeBinding]) -> None:
        self.bindings = list(bindings)
        self.mono, self.unlimited, self.normal, self.mount = classify_bindings(self.bindings)
        self.iops_mounts = [mount for mount in self.mount if mount.require_iops]
        self.places_volumes = bool(self.mono or self.unlimited or self.normal)
        self.mono_size = sum(binding.size for binding in self.mono)
        self.mono_quota = _sum_quota(self.mono)
        self.mono_needs_iops = any(value > 0 for value in self.mono_quota)
        # Merging plans that share no destination is plain concatenation (see assembly.Assembly).
        destinations = [binding.destination for binding in (*self.normal, *self.mono, *self.unlimited)]
        self.distinct_destinations = len(set(destinations)) == len(destinations)
        # Bytes one normal plan takes from the volumes; 0 (no shortcut) when a size could give some back.
        sizes = self.normal_sizes = [binding.size for binding in self.normal]
        self.normal_size_per_plan = sum(sizes) if all(size >= 0 for size in sizes) else 0
        # Nothing in the normal enumeration draws quota: placement depends on bytes alone
        # (enumeration.place_sizes).
        self.sizes_only = (
            not self.iops_mounts
            and all(size >= 0 for size in sizes)
            and not any(any(binding.quota) for binding in self.normal)
        )
        # A pass charges quota in the normal enumeration unless it is sizes-only, for mounts when there
        # are only mounts, and for monopoly groups that draw IOPS.
        self.charges_nothing = bool(self.normal) and self.sizes_only and not self.mono_needs_iops

    def normal_bound(self, bound: int, unused: int) -> int:
        """How far a pass enumerates normal plans (spec §3.7), exactly as the reference bounds it.

        The bound is behaviour, not only a saving: the unlimited target sees just the enumerated plans.
        It is lifted when monopoly and normal or mount bindings all draw IOPS, because then the quota the
        enumeration uses up decides which monopoly plans fit.
        """
        if not self.mono:
            return bound
        draws = any(b.require_iops for b in self.normal) or bool(self.iops_mounts)
        if not any(b.require_iops for b in self.mono) or not draws:
            return max(bound, unused + 1)
        return UNBOUNDED
