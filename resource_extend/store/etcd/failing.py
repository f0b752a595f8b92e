"""What the gateway does once something failed: the error's words, the retry or the give-up, the ambiguous write.

gateway.py and connection.py keep what a call that succeeds runs; this module is imported the first time
an endpoint fails to connect or answer, an answer is an error or unreadable, or a reply's bytes are not
HTTP/1.1, so a call that succeeds never loads its code or creates ``BadReply``.
"""

from __future__ import annotations

import _socket

from resource_extend import errors
from resource_extend.formats import jsonio
from resource_extend.store.etcd import dial, retry
from resource_extend.store.etcd.kv import COMPACTED
from resource_extend.store.etcd.messages import BAD_REPLY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig
    from resource_extend.endpoints import Endpoint
    from resource_extend.store.etcd.policy import Policy


class BadReply(ConnectionError):
    """Bytes that are not an HTTP/1.1 answer (a garbled status line, a bad chunk size or Content-Length):
    the member, or something between it and us, is broken. An ``OSError``, so it fails the endpoint as a
    lost connection does, and a guarded write it answered is ambiguous."""


def bad_reply(why: str) -> BadReply:
    return BadReply(f"bad reply: {why}")


def closed(endpoint: Endpoint, answered: bool) -> ConnectionError:
    """The error of a connection the member closed before the answer was whole."""
    if not answered and not endpoint.tls:
        from resource_extend.store.etcd import tls

        if tls.served(endpoint):
            # A TLS member drops plain HTTP without a word: say so rather than "closed".
            return ConnectionError("this member serves TLS: use https:// in etcd.machines")
    return ConnectionError("etcd closed the connection")


def reason(exc: OSError, client_certificate: bool = False) -> str:
    """Why a connection failed, in the words of configuration.md's Errors section."""
    if isinstance(exc, _socket.timeout):
        return str(exc) if isinstance(exc, dial.Slow) else "timed out"
    why = getattr(exc, "reason", None)  # ssl.SSLError: what the peer said
    if isinstance(why, str):
        from resource_extend.store.etcd import tls  # ssl is loaded already: the error is one of its

        alert = tls.alert(why, client_certificate)
        if alert:
            return alert
    return exc.strerror or str(exc) or type(exc).__name__


def why(config: EtcdConfig, exc: OSError) -> str:
    return reason(exc, config.client_certificate)


def unreachable(config: EtcdConfig, endpoint: Endpoint, exc: OSError, failures: list[str]) -> errors.PluginError:
    """The error of a call whose only endpoint could not be connected to."""
    failures.append(f"{endpoint.url}: {why(config, exc)}")
    return errors.StoreUnavailable(f"etcd unavailable: {summary(failures)}")


# The functions below decide what follows a failed request on a connection to ``endpoint``. The connection is
# the gateway's own: it closes it itself where they say so (``lost`` and ``garbled`` always, ``refused`` when
# it returns), so that nothing here reaches into the client's state.


def lost(
    policy: Policy, config: EtcdConfig, endpoint: Endpoint, path: str, exc: OSError, failures: list[str], resend: bool
) -> None:
    """A request whose answer did not come, its connection given up: the next attempt goes elsewhere, unless it
    was a guarded write etcd may have (``resend`` false: an ``AmbiguousWrite``). A guarded write that never
    left (``Connection.sent``) may go again: the caller says so with ``resend``."""
    failures.append(f"{endpoint.url}: {why(config, exc)}")
    retry.rotate(policy, endpoint)
    if not resend:
        raise ambiguous_write(policy, endpoint, path, f"no answer: {why(config, exc)}")


def garbled(
    policy: Policy, endpoint: Endpoint, path: str, exc: BaseException, data: bytes, failures: list[str], resend: bool
) -> None:
    """A 200 whose body is not the answer asked for, cut short or garbled on the way; its connection given up."""
    bad = f"bad reply: {unreadable(exc, data)}"
    failures.append(f"{endpoint.url}: {bad}")
    retry.rotate(policy, endpoint)
    if not resend:
        raise ambiguous_write(policy, endpoint, path, bad)


def refused(
    policy: Policy, endpoint: Endpoint, path: str, answer: tuple[int, bytes], failures: list[str], resend: bool
) -> None:
    """An answer other than 200: returns when the request may go again (a member that lost its leader or
    quorum: the caller gives its connection up and pauses, ``retry.pause``), else raises. A refusal that
    raises leaves the connection as it is: the member answered cleanly, and a write's read-back may use it."""
    status, data = answer
    is_transient = transient(status, data)
    if not resend and (is_transient or not clean_error(data)):
        raise ambiguous_write(policy, endpoint, path, f"HTTP {status}: {message(data)}")
    if not is_transient:
        if COMPACTED in message(data):
            raise errors.HistoryCompacted(f"etcd {endpoint.url}: {COMPACTED}")
        raise errors.StoreUnavailable(f"etcd {endpoint.url}{path}: {explain(status, message(data))}")
    # Another member, or this one after the election, can answer.
    failures.append(f"{endpoint.url}: HTTP {status}: {message(data)}")
    retry.rotate(policy, endpoint)


def ambiguous_write(policy: Policy, endpoint: Endpoint, path: str, why: str) -> errors.AmbiguousWrite:
    """The error of a guarded write that etcd may have applied; the store reads the key back, and has a
    little time for it past the deadline (retry.py's grace, given here)."""
    retry.grace(policy)
    return errors.AmbiguousWrite(f"etcd {endpoint.url}{path}: {why}")


def unreadable(exc: BaseException, data: bytes) -> str:
    """A bad answer in a few words: its size and what was wrong, never more than a few bytes of it."""
    # jsonio.reason: a JSON error in the same words on every interpreter (3.13 words a trailing comma apart).
    what = (jsonio.reason(exc) if isinstance(exc, ValueError) else str(exc))[:80] or type(exc).__name__
    return f"{len(data)} bytes, {what}"


def clean_error(data: bytes) -> bool:
    """Whether an error answer is etcd's own (grpc-gateway's ``{"code": …, "message": …}``): a refusal of
    the request, not bytes mangled on the way."""
    try:
        doc = jsonio.loads(data)
    except BAD_REPLY:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("code"), int) and isinstance(doc.get("message"), str)


# "context deadline exceeded": etcd's work on the request outlived the deadline it was given (a linearizable
# read on a member cut off from its leader), answered HTTP 500 (gRPC's UNKNOWN) by the gateway; another
# member may answer, as after "request timed out".
_TRANSIENT = ("leader changed", "no leader", "request timed out", "too many requests", "not capable",
              "context deadline exceeded")  # fmt: skip


def transient(status: int, data: bytes) -> bool:
    if status in (502, 503, 504):
        return True
    return status >= 500 and any(text in message(data) for text in _TRANSIENT)


def message(data: bytes) -> str:
    try:
        doc = jsonio.loads(data or b"{}")
    except BAD_REPLY:
        doc = None
    found = (doc.get("message") or doc.get("error")) if isinstance(doc, dict) else None
    return found if isinstance(found, str) else data[:200].decode("utf-8", errors="replace")


def explain(status: int, message: str) -> str:
    """An error answer in etcd's words, and what to change when the config is the cause."""
    message = message.strip()
    if status == 404 and "page not found" in message:
        return (
            f"HTTP 404: {message}: this member's v3 JSON gateway is off (--enable-grpc-gateway=false); "
            "set etcd.transport: grpc to reach it over gRPC"
        )
    if "HTTP request to an HTTPS server" in message:
        return f"HTTP {status}: this member serves TLS: use https:// in etcd.machines"
    if "user name is empty" in message:
        return (
            f"HTTP {status}: {message}: authentication is enabled on this cluster: "
            "set etcd.auth.username and etcd.auth.password"
        )
    return f"HTTP {status}: {message}"


def summary(failures: list[str]) -> str:
    """The failures once each, in order: a retried endpoint is named once, not once per try."""
    return "; ".join(dict.fromkeys(failures))
