"""What one pass (spec §3.3) records: counts, the devices of the plans kept, bytes per device, and for
``explain`` what stopped it. Plans themselves are built only for the pass taken (``assembly``)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.capacity import Limit
    from resource_extend.storage.disk import Disk


class Pass:
    __slots__ = (
        "keep",
        "mono",
        "mono_bytes",
        "mono_count",
        "mono_placeholders",
        "mono_stop",
        "mount_only_disks",
        "normal_bytes",
        "normal_count",
        "normal_devices",
        "stop",
        "why",
    )

    def __init__(self, why: bool = False, keep: int = 0) -> None:
        # How many plans the pass records (0 for a count, which records none: only how many fit).
        self.keep = keep
        self.normal_count = 0
        self.mono_count = 0
        # Devices of the normal bindings, per kept attempt; None when the request has no normal binding.
        self.normal_devices: list[tuple[str, ...]] | None = None
        # The disk plan every attempt charges when there are only mount bindings.
        self.mount_only_disks: list[Disk] | None = None
        # Bytes per device over all normal plans of the pass, kept or not (for the unlimited target);
        # a count, which keeps no plan, leaves them out.
        self.normal_bytes: dict[str, int] = {}
        # Per kept monopoly plan: the device and each binding's share (shares empty unless kept).
        self.mono: list[tuple[str, list[int]]] = []
        self.mono_bytes: dict[str, int] = {}
        self.mono_placeholders = False
        # Only explain asks why (``why``): what stopped the normal and the monopoly enumerations.
        self.why = why
        self.stop: Limit | None = None
        self.mono_stop: Limit | None = None
