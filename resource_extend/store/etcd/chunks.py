"""The plan of a read of many keys, shared by both transports: chunks of sorted keys, each counted and then
read as its span or by point reads of its keys (``dense``); and the span of a whole prefix (a scan).

Imported by bulk reads and scans only: a single-node call reads one key and never loads this code.
"""

from __future__ import annotations

# Keys per chunk of a bulk read: etcd refuses a transaction of more operations than --max-txn-ops, 128 by
# default, and a bulk read sends a chunk of keys as one (the counts, or the point reads).
CHUNK_KEYS = 128
# A chunk of this many keys or fewer, read alone, is read by point reads at once: counting its span first
# would cost a second round trip for nothing.
FEW_KEYS = 8


def dense(count: int, wanted: int) -> bool:
    """Whether a chunk's span, holding ``count`` keys of which ``wanted`` are asked for, is read as one
    range rather than as point reads of the wanted keys.

    Both transports share this plan: first one transaction counts the keys of each chunk's span
    (``count_only``: etcd answers from its index, moving no record), then a chunk whose span holds at
    most as many other keys as wanted ones is read as one range (etcd serves it ~2x faster than point
    reads of the same keys: 1000 storage records in ~20 ms, not ~45, over the gateway), and any other
    by point reads of its keys in one read-only transaction. So the keys between wanted ones never cost
    more than the wanted ones: two nodes with 300 big records of others between them, read as a span,
    cost 8 s and 939 MB (issue 20).
    """
    return count <= 2 * wanted


def span(keys: list[str]) -> tuple[bytes, bytes]:
    """etcd's (key, range_end) from a sorted chunk's first key to its last, inclusive. etcd orders keys
    by their bytes, which for UTF-8 is code point order, so ``sorted`` over ``str`` keys picks the ends."""
    return raw(keys[0]), raw(keys[-1]) + b"\0"


def raw(key: str) -> bytes:
    return key.encode("utf-8", "surrogatepass")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with ``prefix`` (etcd's range_end)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"  # every key
