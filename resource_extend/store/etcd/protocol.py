"""``KV``: the key-value operations the node store needs, as both transports (gateway.py, grpc.py) provide
them; the values and errors they deal in are kv.py's.

Types only, like protocols.py: no call imports this module, so everything here is under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol

    from resource_extend.store.etcd.kv import Entry

    class KV(Protocol):
        def get(self, key: str) -> Entry | None: ...

        def scan(self, prefix: str) -> list[Entry]:
            """Every key under ``prefix``."""
            ...

        def reads(self, chunks: list[list[str]]) -> Iterator[list[Entry | None]]:
            """``get(key)`` of every key, one chunk at a time, each chunk's list in its keys' order as soon as
            it is read; all at one revision, one consistent read. Each chunk holds keys in etcd's order
            (sorted), at most CHUNK_KEYS. Only the keys asked for are read (see ``dense``), however many
            others lie between them. A caller that decodes one chunk while the next is read overlaps its
            work with etcd's."""
            ...

        def prefetch(self, key: str) -> None:
            """Send ``get(key)`` now, if that can be done without waiting on etcd's answer: the next ``get(key)``
            reads the answer instead of sending again. Never raises; any other request first drops it. Best
            effort: a transport may do nothing."""
            ...

        def prefetch_reads(self, chunks: list[list[str]]) -> None:
            """``prefetch`` of the first request ``reads(chunks)`` sends."""
            ...

        def put(self, key: str, value: bytes) -> None: ...

        def put_if(self, key: str, value: bytes, mod_revision: int) -> bool:
            """Write only if the key's mod_revision still equals ``mod_revision`` (0: the key is absent)."""
            ...

        def delete(self, key: str) -> None: ...

        def close(self) -> None:
            """Drop the connection; a prefetched transaction nobody took is answered first (briefly)."""
            ...
