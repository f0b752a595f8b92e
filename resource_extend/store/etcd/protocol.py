"""``KV``: the key-value operations the node store needs, as both transports (gateway.py, grpc.py) provide
them; the values and errors they deal in are kv.py's.

Types only, like protocols.py: no call imports this module, so everything here is under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Protocol

    from resource_extend.store.etcd.kv import Entry, Snapshot

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

        def put_if(
            self,
            key: str,
            value: bytes | None,
            mod_revision: int,
            token_key: str,
            token: bytes,
            token_revision: int | None = None,
        ) -> Snapshot | None:
            """Write ``value`` to ``key`` (None: delete ``key``) and ``token`` to ``token_key`` in one
            transaction, only if ``key``'s mod_revision still equals ``mod_revision`` (0: the key is absent)
            and, when given, ``token_key``'s equals ``token_revision``. None: written. Else etcd's answer to
            the failed compare: ``key`` and ``token_key`` as it found them (a ``Snapshot``).
            ``AmbiguousWrite`` when etcd may have the request but its answer was lost or unreadable: the
            request is never sent twice (a second send would fail its compare if the first applied)."""
            ...

        def history(self, keys: list[str], revision: int) -> Snapshot:
            """``keys`` as they were at ``revision`` (0: now), in one read, with their create revisions.
            ``HistoryCompacted`` when etcd no longer holds that revision."""
            ...

        def delete(self, keys: list[str]) -> None:
            """Delete every key of ``keys`` in one transaction."""
            ...

        def close(self) -> None:
            """Drop the connection; a prefetched transaction nobody took is answered first (briefly)."""
            ...
