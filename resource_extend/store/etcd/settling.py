"""The gateway's words for settling a guarded write: a failed compare's answer and reads pinned to a revision.

Imported only when a guarded write's answer was not a clean success (a lost race, a lost or unreadable
answer): the store then asks etcd whose change came first after the revision the write guarded
(store/nodes.py, decision 20). Every revision here is read strictly (``messages.int64``): an answer that
cannot be read is a bad reply, never an internal error.
"""

from __future__ import annotations

from resource_extend.store.etcd import base64text
from resource_extend.store.etcd.kv import Entry, Snapshot
from resource_extend.store.etcd.messages import int64, stamped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


def found(doc: dict[str, Any], revision: int, asked: int) -> Snapshot:
    """The ``Snapshot`` a transaction's ``asked`` range responses make, at the answer's ``revision``."""
    responses = doc.get("responses")
    if responses.__class__ is not list or len(responses) != asked:
        raise ValueError(f"{asked} ranges asked, {len(responses) if isinstance(responses, list) else 0} answered")
    entries: list[Entry | None] = []
    for response in responses:
        ranged = response.get("response_range") if response.__class__ is dict else None
        if ranged.__class__ is not dict:
            raise ValueError("a range answered with other than its range")
        kvs = ranged.get("kvs") or []
        if kvs.__class__ is not list or len(kvs) > 1:
            raise ValueError("a range of one key answered with more")
        entries.append(stamped(kvs[0], base64text.decode) if kvs else None)
    return Snapshot(revision, entries)


def history_request(keys: list[str], revision: int) -> dict[str, Any]:
    """A read-only transaction of one range per key, at ``revision`` (0: the latest)."""
    at = {"revision": str(revision)} if revision else {}
    return {"success": [{"request_range": {"key": base64text.encode(key.encode()), **at}} for key in keys]}


def history_answer(asked: int, revision: int) -> Callable[[Any], Snapshot]:
    """The parse of ``history_request``'s answer: the snapshot at ``revision``, or at the answer's (0)."""

    def parse(doc: Any) -> Snapshot:
        now = int64(doc["header"]["revision"])
        if now <= 0:
            raise ValueError("an answer without its revision")
        return found(doc, revision or now, asked)

    return parse
