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
# (ValueError), a missing or mistyped field; RecursionError: nesting deeper than the interpreter's stack.
# (jsonio.loads never lets the C scanner's SystemError of 3.10/3.11 out: it falls back to the json package.)
BAD_REPLY = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def document(data: bytes) -> dict[str, Any]:
    """An answer's JSON object, which always carries etcd's header; else a ValueError."""
    doc = jsonio.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("header"), dict):
        raise ValueError("not an etcd answer")
    return doc


def entries(reply: dict[str, Any], decode: Decoder) -> list[Entry]:
    return [
        Entry(decode(kv["key"]).decode("utf-8", errors="replace"), *value(kv, decode)) for kv in reply.get("kvs") or ()
    ]


def value(kv: dict[str, Any], decode: Decoder) -> tuple[bytes, int]:
    return decode(kv.get("value", "")), int(kv.get("mod_revision", 0))
