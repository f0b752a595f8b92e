"""The dial: a TCP connection to an etcd member within one timeout, its name resolved within the same time.

Shared by the gateway's connections (connection.py), TLS (tls.py) and the bulk reads over h2c (h2/), on the C
half of the socket module. The system's resolver has no deadline of its own: a DNS server that never answers
holds a lookup for the resolver's timeouts and attempts, 10 s and more with two servers, past any of the
call's. So a name is looked up in a thread of its own, and the dial waits for it at most its own time. An
address (every cluster of the tests and the bench) is read at once, with no thread.
"""

from __future__ import annotations

import _socket
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Slow(_socket.timeout):
    """A dial that timed out on something other than the member, its words saying what (failing.reason
    keeps them): a timeout, as any dial's is, on every python3 (3.9's ``socket.timeout`` is no
    ``TimeoutError``)."""


class SlowName(Slow):
    """A host name the resolver did not answer for within the dial's time (``addresses``)."""

    def __init__(self, name: str, timeout: float) -> None:
        super().__init__(f"resolving {name} took longer than {timeout:g} s")


def connect(host: str | bytes, port: int, timeout: float) -> _socket.socket:
    """``socket.create_connection`` on the C socket module: each address in turn, the last error raised. Resolving
    the name (``addresses``) and connecting share ``timeout``: a dial never takes longer, whatever it tries."""
    end = time.monotonic() + timeout
    errors: list[OSError] = []
    for family, kind, proto, _, address in addresses(host, port, timeout):
        left = end - time.monotonic()
        if left <= 0:
            errors[:] = [_socket.timeout("timed out")]
            break
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(left)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            errors[:] = [exc]
            continue
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        return sock
    if errors:
        raise errors[-1]
    raise OSError("getaddrinfo returns an empty list")


def addresses(host: str | bytes, port: int, timeout: float) -> list[tuple[Any, ...]]:
    """``getaddrinfo`` of a stream to ``host``, given at most ``timeout`` seconds: an address at once, a name
    by ``resolve`` (the system's resolver has no deadline of its own)."""
    try:  # an address: no resolver involved
        return _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM, 0, _socket.AI_NUMERICHOST)
    except _socket.gaierror:
        return resolve(host, port, timeout)


def resolve(host: str | bytes, port: int, timeout: float) -> list[tuple[Any, ...]]:
    """``getaddrinfo`` of a stream to ``host``, or ``SlowName`` past ``timeout`` seconds. A lookup
    given up is left to finish alone: a call's process exits without waiting for it. Where no thread can be
    started, the lookup runs in this one, bounded by the resolver's own timeouts only, rather than fail."""
    import _thread  # a cluster named by host names pays for this, no other

    done = _thread.allocate_lock()
    done.acquire()
    found: list[Any] = []

    def lookup() -> None:
        try:
            found.append(_socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM))
        except BaseException as exc:  # handed to the dial: a thread's own would print a traceback
            found.append(exc)
        finally:
            done.release()

    try:
        _thread.start_new_thread(lookup, ())
    except RuntimeError:  # no thread to be had (a pids cgroup, RLIMIT_NPROC): the lookup as it was, unbounded
        return _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM)
    if not done.acquire(True, max(timeout, 0.0)):
        raise SlowName(host.decode("ascii") if isinstance(host, bytes) else host, timeout)
    if isinstance(found[0], BaseException):
        raise found[0]
    result: list[tuple[Any, ...]] = found[0]
    return result
