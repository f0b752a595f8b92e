"""``Record``: what the node store needs of a plugin's record class, and ``RecordJSON``, a record as stored.

Types for the type checker only, like plugin/protocols.py (which names them in a plugin's manifest): at run
time a plugin's record class (``GpuRecord``, ``StorageRecord``) is one, structurally, and no call imports this
module. Declared with the store, which uses them, so that the store names nothing of the command tree.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol, Self, TypedDict

    class RecordJSON(TypedDict):
        """A record as stored and as get-nodes-resource-info shows it; each plugin types the sides."""

        capacity: Any
        usage: Any

    class Record(Protocol):
        """What the store needs of a plugin's record class; ``GpuRecord`` and ``StorageRecord`` are one."""

        @classmethod
        def empty(cls) -> Self:
            """What a node with nothing stored reads as."""

        @classmethod
        def decode(cls, data: bytes) -> Self:
            """The stored record, or a PluginError naming the field that cannot be read."""

        def encode(self) -> bytes:
            """The bytes to store, written the way the Go reference marshals the record."""

        def checked(self) -> Self:
            """The record as it will be stored, or a PluginError saying why it may not be."""

        def problems(self) -> list[str]:
            """Everything wrong with a decoded record, one sentence each; ``[]`` for a sound one.

            A superset of what ``checked`` refuses: it also names what a write tolerates (as the reference
            does) but an operator checking the store wants to see, such as usage above capacity.
            """

        def to_json(self) -> RecordJSON: ...
