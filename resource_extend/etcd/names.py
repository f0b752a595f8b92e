"""A member's host name resolved within the dial's time (connection.addresses), for a cluster named by names.

The system's resolver has no deadline of its own: a DNS server that never answers holds a lookup for the
resolver's timeouts and attempts, 10 s and more with two servers, past any of the call's. So the lookup runs
in a thread of its own, and the dial waits for it at most its own time. Imported only for a name: an
address (every cluster of the tests and the bench) is read at once.
"""

from __future__ import annotations

import _socket
import _thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def resolve(host: str | bytes, port: int, timeout: float) -> list[tuple[Any, ...]]:
    """``getaddrinfo`` of a stream to ``host``, or failing.py's ``SlowName`` past ``timeout`` seconds. A lookup
    given up is left to finish alone: a call's process exits without waiting for it. Where no thread can be
    started, the lookup runs in this one, bounded by the resolver's own timeouts only, rather than fail."""
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
        from resource_extend.etcd import failing

        raise failing.SlowName(host.decode("ascii") if isinstance(host, bytes) else host, timeout)
    if isinstance(found[0], BaseException):
        raise found[0]
    result: list[tuple[Any, ...]] = found[0]
    return result
