"""Settling a guarded write whose answer was not a clean success: did it land? (decision 20)

Every guarded write of a record (nodes.py's ``NodeStore._write``) also writes a token of its own, unique to
that attempt of that call, to the node's token key, in the same transaction: so the token key's value at
a revision names the attempt whose transaction made that revision's change, if any of ours did. A write
whose answer was lost, cut or unreadable, or answered as a failed compare (which a member or a proxy in
between may also say of a write that applied), is settled by what etcd holds, never by the record's bytes,
which another writer's equal change also produces:

- An attempt guarded at mod_revision ``g`` can only land as the first change of the record after ``g``
  (its compare holds until then, and never again: a key's mod_revision only grows, and a deleted key's is
  0). So that change is found (a binary search over reads pinned to a revision), and the token key's value
  at its revision tells whose it was: this call's attempt (it landed, the call is done), or another
  writer's (the attempt is dead: the change is made again on what is stored now). While the record has not
  changed since ``g``, the attempt may still land: the next attempt guards the same ``g``, so at most one
  of them lands, and a later settle finds which.
- A record's absence holds again after a remove-node, so a write where no record was stored (a create)
  also guards the token key's mod_revision as read, and nothing deletes a token key: a delete writes its
  token as the node's tombstone. That revision only grows, so such an attempt can land only as the first
  change of the token key after it was read, found the same way.
- The token key's value now, when it is one of this call's tokens, says at once that that attempt landed
  (only that attempt's transaction writes it).

Only when etcd has compacted the revisions that would tell, or cannot be read, does the call fail, saying
that whether the write applied is unknown. Imported only when a write was not a clean success.
"""

from __future__ import annotations

from resource_extend import errors
from resource_extend.store.etcd.kv import Snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    from resource_extend.store.etcd.kv import Entry
    from resource_extend.store.etcd.protocol import KV

UNKNOWN = "whether the write applied is unknown"


class Attempt:
    """One guarded write this call sent whose outcome is not known yet: the record's mod_revision it
    guarded (0: the record's absence), its token, the number of the change it carried, and what its answer
    was instead of a clean success. A write where no record was stored also guarded the token key's
    mod_revision (``token_guard``, 0: absent), as read at revision ``since``."""

    __slots__ = ("guard", "number", "since", "token", "token_guard", "why")

    def __init__(
        self, guard: int, token: bytes, number: int, why: str, token_guard: int | None = None, since: int = 0
    ) -> None:
        self.guard = guard
        self.token = token
        self.number = number
        self.why = why
        self.token_guard = token_guard
        self.since = since


def now(kv: KV, node: str, key: str, tokens: str, pending: list[Attempt], found: Snapshot | None) -> Snapshot:
    """The record and its token key as they are now: what a failed compare found, or a fresh read."""
    if found is not None:
        return found
    try:
        return kv.history([key, tokens], 0)
    except errors.StoreUnavailable as exc:
        raise unknown(node, pending, exc) from None


def landed(kv: KV, node: str, key: str, tokens: str, pending: list[Attempt], now: Snapshot) -> Attempt | None:
    """The attempt of ``pending`` that landed, if one did; else ``pending`` keeps only the attempts that may
    still land (the record has not changed since the revision they guarded)."""
    token = now.entries[1]
    for attempt in pending:
        if token is not None and token.value == attempt.token:
            return attempt
    alive: list[Attempt] = []
    for guards in dict.fromkeys((attempt.guard, attempt.token_guard) for attempt in pending):
        group = [attempt for attempt in pending if (attempt.guard, attempt.token_guard) == guards]
        try:
            if guards[1] is None:
                first = first_change(kv, key, tokens, guards[0], now)
            else:
                first = first_token(kv, key, tokens, guards[1], min(a.since for a in group), now)
        except errors.StoreUnavailable as exc:
            raise unknown(node, pending, exc) from None
        if first is None:
            alive += group
            continue
        made = first.entries[1]  # the token key at the first change: whose change it was
        for attempt in group:
            if made is not None and made.mod_revision == first.revision and made.value == attempt.token:
                return attempt
    pending[:] = alive
    return None


def first_change(kv: KV, key: str, tokens: str, guard: int, now: Snapshot) -> Snapshot | None:
    """The record and its token key at the first change of the record after ``guard`` (its mod_revision
    when read, > 0), or None when it has not changed since."""
    record = now.entries[0]
    if record is not None and record.mod_revision == guard:
        return None
    # Unchanged at ``low``, changed at ``high``: the first change lies in (low, high].
    high, seen = (now.revision, now) if record is None else (record.mod_revision, _pinned(now, record.mod_revision))
    return _search(kv, key, tokens, guard, high, seen, lambda at: _mod(at.entries[0]) == guard)


def first_token(kv: KV, key: str, tokens: str, token_guard: int, since: int, now: Snapshot) -> Snapshot | None:
    """The record and its token key at the first change of the token key after it held ``token_guard`` (its
    mod_revision, 0: absent) at revision ``since``, or None when it has not changed since. Every guarded
    write changes the token key and nothing deletes it, so its mod_revision only grows: a write guarded by
    its absence (and the token key's revision) can land only as that change."""
    token = now.entries[1]
    if _mod(token) == token_guard:
        return None
    if token is None or token.mod_revision <= since:
        # Nothing deletes a token key, nor changes it before it was read: etcd's answers contradict each other.
        raise errors.StoreUnavailable(
            f"etcd: bad reply: the write token read at revision {since} with revision {token_guard} is now "
            f"{'absent' if token is None else f'at revision {token.mod_revision}'}"
        )
    seen = Snapshot(token.mod_revision, [None, token])  # the token key last changed there: it is now's
    return _search(kv, key, tokens, since, token.mod_revision, seen, lambda at: _mod(at.entries[1]) == token_guard)


def _search(
    kv: KV, key: str, tokens: str, low: int, high: int, seen: Snapshot, unchanged: Callable[[Snapshot], bool]
) -> Snapshot:
    """The snapshot at the first revision in (low, high] where ``unchanged`` no longer holds: it holds at
    ``low``, not at ``high`` (whose snapshot is ``seen``), and once false stays so."""
    probe = high - 1  # most often the change found is the only one since the guard
    while high - low > 1:
        at = kv.history([key, tokens], probe)
        if unchanged(at):
            low = probe
        else:
            high, seen = probe, at
        probe = (low + high) // 2
    return seen


def _mod(entry: Entry | None) -> int:
    return 0 if entry is None else entry.mod_revision


def _pinned(now: Snapshot, revision: int) -> Snapshot:
    """``now`` as the snapshot at ``revision``, the record's mod_revision: neither key has changed since,
    as the token key is only written with the record."""
    return Snapshot(revision, now.entries)


def unknown(node: str, pending: list[Attempt], exc: errors.StoreUnavailable) -> errors.StoreUnavailable:
    """The failure of a call that could not settle its writes: it says the outcome is unknown."""
    if not pending:
        return exc  # nothing of this call's may have landed: the failure as it is
    why = str(exc)
    if isinstance(exc, errors.HistoryCompacted):
        why = f"{why} (the revisions that would tell whose change came first are gone)"
    return errors.StoreUnavailable(f"node {node}: {why}; {UNKNOWN}")


def gave_up(node: str, pending: list[Attempt], attempts: int) -> errors.PluginError:
    if pending:
        last = pending[-1].why
        return errors.StoreUnavailable(
            f"node {node}: {attempts} writes sent, none answered cleanly (the last: {last}); {UNKNOWN}"
        )
    return errors.Conflict(f"node {node}: gave up after {attempts} conflicting concurrent writes")
