"""Volume bindings: ``source:destination[:flags[:size[:read_IOPS:write_IOPS:read_BPS:write_BPS]]]``.

Bindings always travel as strings; the stored (full, 8-field) form is what records and plan keys hold, the
engine form is what a container runtime is given.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.errors import PluginError
from resource_extend.storage.disk import Quota
from resource_extend.storage.size import parse_size
from resource_extend.typeshim import Fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_AUTO = "AUTO"
_GRAMMAR = "source:destination[:flags[:size[:read_IOPS:write_IOPS:read_BPS:write_BPS]]]"
_SIZE_FIELDS = ("size", "read_IOPS", "write_IOPS", "read_BPS", "write_BPS")
# r read, w write, o "only" (rw+o is rendered rowo), m monopoly.
_FLAG_LETTERS = frozenset("rwom")


def _size_field(text: str, name: str, part: str) -> int:
    try:
        return parse_size(part)
    except PluginError as cause:
        raise PluginError(f"volume binding {text!r}: {name} {part!r}: {cause}") from None


def _check_flags(text: str, flags: str) -> None:
    """Decision 14: the letters r, w, m at most once each, and one o per r or w — the stored form writes
    ``orw`` as ``rowo``, which must read back (empty flags read as rw)."""
    letters_ok = set(flags) <= _FLAG_LETTERS and all(flags.count(letter) <= 1 for letter in "rwm")
    if letters_ok and flags.count("o") <= flags.count("r") + flags.count("w"):
        return
    raise errors.InvalidVolume(
        f"volume binding {text!r}: flags {flags!r}: use the letters r, w, o, m, each at most once (e.g. rw, ro, rwm)"
    )


class QuotaHolder(Fields):
    """A value that carries a ``quota`` (a volume binding), its numbers also readable by name."""

    __slots__ = ()
    quota: Quota

    def _set(self, index: int, value: int) -> None:
        # Each holder lists "quota" in its own __slots__, where Fields finds what to compare.
        self.quota = self.quota.replaced(index, value)  # type: ignore[misc]

    @property
    def read_iops(self) -> int:
        return self.quota[0]

    @read_iops.setter
    def read_iops(self, value: int) -> None:
        self._set(0, value)

    @property
    def write_iops(self) -> int:
        return self.quota[1]

    @write_iops.setter
    def write_iops(self, value: int) -> None:
        self._set(1, value)

    @property
    def read_bps(self) -> int:
        return self.quota[2]

    @read_bps.setter
    def read_bps(self, value: int) -> None:
        self._set(2, value)

    @property
    def write_bps(self) -> int:
        return self.quota[3]

    @write_bps.setter
    def write_bps(self, value: int) -> None:
        self._set(3, value)


class VolumeBinding(QuotaHolder):
    __slots__ = ("destination", "flags", "quota", "size", "source")

    def __init__(
        self,
        source: str,
        destination: str,
        flags: str,
        size: int,
        *quota: int,
    ) -> None:
        """``quota`` in ``Quota`` order (read IOPS, write IOPS, read bps, write bps); missing numbers are 0."""
        self.source = source
        self.destination = destination
        self.flags = flags
        self.size = size
        self.quota = Quota(*quota)

    @classmethod
    def parse(cls, text: str) -> VolumeBinding:
        parts = text.split(":")
        if not 2 <= len(parts) <= 8:
            raise errors.InvalidVolume(
                f"volume binding {text!r} has {len(parts)} field{'s' if len(parts) != 1 else ''}, wants 2 to 8: "
                f"{_GRAMMAR} (e.g. AUTO:/data:rw:10G)"
            )
        if len(parts) == 2:
            parts.append("rw")
        parts += ["0"] * (8 - len(parts))
        size, *quota = (_size_field(text, name, part) for name, part in zip(_SIZE_FIELDS, parts[3:]))
        # Flags are a bag of letters; sorting makes "wrm" and "mrw" the same binding.
        flags = "".join(sorted(parts[2])) or "rw"
        if not parts[1]:
            raise errors.InvalidVolume(f"dest must be provided: {text}")
        return cls(parts[0], parts[1], flags, size, *quota)

    @property
    def require_schedule(self) -> bool:
        return self.source.endswith(_AUTO) or self.source == ""

    @property
    def monopoly(self) -> bool:
        return self.require_schedule and "m" in self.flags

    @property
    def unlimited(self) -> bool:
        return self.require_schedule and self.size == 0 and not any(self.quota)

    @property
    def require_iops(self) -> bool:
        return any(value > 0 for value in self.quota)

    @property
    def valid_io(self) -> bool:
        return all(value >= 0 for value in self.quota)

    @property
    def key(self) -> tuple[str, str, str]:
        """The identity realloc merges by."""
        return (self.source, self.destination, self.flags)

    def copy(self) -> VolumeBinding:
        return VolumeBinding(self.source, self.destination, self.flags, self.size, *self.quota)

    def to_string(self, normalize: bool = False) -> str:
        """The stored 8-field form, or (``normalize``) the engine form without the monopoly letter."""
        flags = self.flags.replace("m", "") if normalize else self.flags
        if "o" in flags:
            flags = flags.replace("o", "").replace("r", "ro").replace("w", "wo")
        head = f"{self.source}:{self.destination}"
        full = f"{head}:{flags}:{self.size}:{self.quota.text()}"
        if not normalize:
            return full
        # The engine form is chosen by the flags as parsed, not as rewritten above.
        if self.flags == "" and self.size == 0:
            return head
        if any(self.quota):
            return full
        return f"{head}:{flags}:{self.size}"

    def __str__(self) -> str:
        return self.to_string()


def parse_bindings(texts: Iterable[str]) -> list[VolumeBinding]:
    """Parse every string; the first bad one fails the whole list."""
    return [VolumeBinding.parse(text) for text in texts]


def parse_request_bindings(texts: Iterable[str]) -> list[VolumeBinding]:
    """A workload request's bindings: also refuse flags outside the grammar (decision 14). What core passes
    back (workload resources, plan keys, the realloc delta's synthetic ``fake-flags`` key) is the plugin's
    own output and is read as the reference reads it."""
    bindings = []
    for text in texts:
        binding = VolumeBinding.parse(text)
        _check_flags(text, text.split(":")[2] if text.count(":") >= 2 else "")
        bindings.append(binding)
    return bindings


def bindings_to_json(bindings: Iterable[VolumeBinding]) -> list[str]:
    return [binding.to_string() for binding in bindings]


def need_schedule(bindings: Iterable[VolumeBinding]) -> bool:
    """Whether the scheduler has anything to place or charge; if not, plans are empty."""
    return any(binding.require_schedule or binding.require_iops for binding in bindings)


def total_size(bindings: Iterable[VolumeBinding]) -> int:
    return sum(binding.size for binding in bindings)


def validate_bindings(bindings: Iterable[VolumeBinding]) -> None:
    for binding in bindings:
        if binding.monopoly and binding.size <= 0:
            raise errors.InvalidVolume(f"monopoly volume requires a positive size: {binding}")
        if not binding.valid_io:
            raise errors.InvalidVolume(f"invalid io parameters: {binding}")
