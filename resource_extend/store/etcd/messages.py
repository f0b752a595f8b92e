"""The v3 JSON gateway's words, shared by the gateway's single reads and writes (gateway.py), its bulk reads
(gatewaybulk.py), its greeting (greeting.py) and its failures (failing.py): the paths, an answer's JSON and
the entries in it, and what a bad answer raises.
"""

from __future__ import annotations

from resource_extend.formats import jsonio
from resource_extend.store.etcd.kv import Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    Decoder = Callable[[str], bytes]


RANGE = "/v3/kv/range"
TXN = "/v3/kv/txn"

# What parsing an answer's JSON can raise when the bytes are not what etcd sends: a JSON or base64 error
# (ValueError), a missing or mistyped field; RecursionError: nesting deeper than the interpreter's stack;
# OverflowError: a number no integer holds (``Infinity``, ``1e999``) where etcd writes an int64.
# (jsonio.loads never lets the C scanner's SystemError of 3.10/3.11 out: it falls back to the json package.)
BAD_REPLY = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError, OverflowError)


def document(data: bytes, unique: bool = False) -> dict[str, Any]:
    """An answer's JSON object, which always carries etcd's header; else a ValueError. ``unique``: a key
    named twice with different values is a ValueError too (the answers a write is settled by)."""
    doc = jsonio.loads_unique(data) if unique else jsonio.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("header"), dict):
        raise ValueError("not an etcd answer")
    return doc


def int64(value: Any) -> int:
    """One of etcd's int64s as the gateway writes it (a decimal string; a plain integer is read too): a
    float, a constant such as ``Infinity`` or anything else is a ValueError, never an OverflowError."""
    if value.__class__ is str or value.__class__ is int:
        return int(value)
    raise ValueError(f"{str(value)[:20]} is not an integer")


def entries(reply: dict[str, Any], decode: Decoder) -> list[Entry]:
    return [
        Entry(decode(kv["key"]).decode("utf-8", errors="replace"), *value(kv, decode)) for kv in reply.get("kvs") or ()
    ]


def value(kv: dict[str, Any], decode: Decoder) -> tuple[bytes, int]:
    return decode(kv.get("value", "")), int(kv.get("mod_revision", 0))


def stamped(kv: dict[str, Any], decode: Decoder) -> Entry:
    """An entry with its create revision, every revision read strictly (``int64``): for settling a write."""
    key = decode(kv["key"]).decode("utf-8", errors="replace")
    revisions = int64(kv.get("mod_revision", 0)), int64(kv.get("create_revision", 0))
    return Entry(key, decode(kv.get("value", "")), *revisions)
