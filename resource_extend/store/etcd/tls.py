"""TLS for the gateway's connections, and what each TLS failure means to an operator.

Imported only by a connection to an ``https://`` member or to explain a failure, so that calls to a
plain cluster never pay for ``ssl``.
"""

from __future__ import annotations

import socket
import ssl
import time

from resource_extend.errors import PluginError
from resource_extend.store.etcd import dial

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.config import EtcdConfig
    from resource_extend.endpoints import Endpoint


def connect(host: str | bytes, endpoint: Endpoint, config: EtcdConfig, timeout: float) -> socket.socket:
    """A TLS connection to ``endpoint`` (at ``host``, its name as connection.py passes it) within ``timeout``,
    the TLS files loaded within it too: ssl wraps only the socket module's sockets."""
    end = time.monotonic() + timeout
    return wrap(_tcp(host, endpoint.port, timeout), endpoint, config, end)


def _tcp(host: str | bytes, port: int, timeout: float) -> socket.socket:
    """dial.py's connection (its name resolved within ``timeout`` too), as the socket module's socket, which is
    the only kind ssl wraps."""
    raw = dial.connect(host, port, timeout)
    family, kind, proto = raw.family, raw.type, raw.proto
    fd = raw.detach()
    try:
        tcp = socket.socket(family, kind, proto, fileno=fd)
    except BaseException:
        import posix

        posix.close(fd)  # detached: nothing else owns it
        raise
    tcp.settimeout(timeout)
    return tcp


class SlowFiles(dial.Slow):
    """TLS files that did not load within the connection's time (``context``): a timeout, as a dial that
    timed out is, so the call tries again within its deadline, never past it, and says what was slow."""

    def __init__(self, config: EtcdConfig, timeout: float) -> None:
        files = [f"etcd.{name} {path} ({_megabytes(path)})" for name, path in _files(config)]
        what = ", ".join(files) or "the system trust store"
        super().__init__(f"TLS: loading {what} took longer than {timeout:.1f} s: keep only the CAs etcd needs")


# The context each set of TLS files gives, loading or loaded: (done, [the context or what loading raised]).
# Loaded once a process, whatever its connections; a load given up on by one connection is waited for by
# the next, never started again. Keyed by the files as they are (``_key``): a process that outlives a
# certificate's renewal loads the new one.
_CONTEXTS: dict[tuple[Any, ...], tuple[Any, list[Any]]] = {}


def _key(config: EtcdConfig) -> tuple[Any, ...]:
    import posix

    key: list[Any] = []
    for _, path in _files(config):
        try:
            found = posix.stat(path)
            key.append((path, found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns))
        except OSError:  # _check_files names it
            key.append((path,))
    return tuple(key)


def context(config: EtcdConfig, end: float) -> ssl.SSLContext:
    """The SSL context of ``config``'s TLS files, or ``SlowFiles`` past ``end`` (time.monotonic()).

    OpenSSL reads a CA bundle in one C call that nothing interrupts, ~0.2 s a megabyte (a 50 MB bundle held
    calls with a 1 s total_timeout for 4.4–4.7 s, loaded again by every connection): it runs in a thread of
    its own (the call's process exits without waiting for it), and the connection waits at most its time."""
    import _thread

    key = _key(config)
    pending = _CONTEXTS.get(key)
    if pending is None:
        _check_files(config)
        done = _thread.allocate_lock()
        done.acquire()
        found: list[Any] = []
        # setdefault: of the race's threads connecting at once (several https:// members), one loads.
        pending = _CONTEXTS.setdefault(key, (done, found))

        def load() -> None:
            try:
                found.append(_load(config))
            except BaseException as exc:  # handed to the connection: a thread's own would print a traceback
                found.append(exc)
            finally:
                done.release()

        if pending[0] is done:
            try:
                _thread.start_new_thread(load, ())
            except RuntimeError:  # no thread to be had (a pids cgroup, RLIMIT_NPROC): loaded here, as it was
                load()
    done, found = pending
    left = end - time.monotonic()
    if not done.acquire(True, max(left, 0.0)):
        raise SlowFiles(config, max(left, 0.0))
    done.release()  # loaded: every later connection takes it at once
    if isinstance(found[0], BaseException):
        raise found[0]
    loaded: ssl.SSLContext = found[0]
    return loaded


def _load(config: EtcdConfig) -> ssl.SSLContext:
    try:
        # No etcd.ca: the system trust store, as for any https:// URL.
        loaded = ssl.create_default_context(cafile=config.ca or None)
    except (OSError, ssl.SSLError) as exc:
        raise PluginError(f"{config.where}: etcd.ca: cannot load {config.ca}: {_ssl_reason(exc)}") from None
    if config.client_certificate:
        try:
            loaded.load_cert_chain(config.cert, config.key)
        except (OSError, ssl.SSLError) as exc:
            raise PluginError(
                f"{config.where}: etcd.cert/etcd.key: cannot load the client certificate {config.cert} "
                f"with key {config.key}: {_ssl_reason(exc)}"
            ) from None
    return loaded


def _files(config: EtcdConfig) -> list[tuple[str, str]]:
    named = [("ca", config.ca)]
    if config.client_certificate:
        named += [("cert", config.cert), ("key", config.key)]
    return [(name, path) for name, path in named if path]


def _megabytes(path: str) -> str:
    import posix

    try:
        return f"{posix.stat(path).st_size / 1e6:.1f} MB"
    except OSError as exc:
        return exc.strerror or str(exc)


def wrap(sock: socket.socket, endpoint: Endpoint, config: EtcdConfig, end: float) -> socket.socket:
    try:
        loaded = context(config, end)
    except BaseException:
        sock.close()
        raise
    try:
        return loaded.wrap_socket(sock, server_hostname=endpoint.host)
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        raise ConnectionError(_verify_failure(exc, endpoint, config)) from None
    except ssl.SSLError as exc:
        sock.close()
        found = alert(exc.reason, config.client_certificate)
        if found is None and _speaks_plain_http(endpoint):  # etcd drops a TLS hello on a plain port
            found = _ALERTS["WRONG_VERSION_NUMBER"]
        raise ConnectionError(found or f"TLS handshake failed: {_ssl_reason(exc)}") from None
    except OSError:
        sock.close()
        if _speaks_plain_http(endpoint):
            raise ConnectionError(_ALERTS["WRONG_VERSION_NUMBER"]) from None
        raise


def alert(reason: object, client_certificate: bool) -> str | None:
    """What a TLS alert from the member (``ssl.SSLError.reason``) asks the operator to change, if known."""
    if not isinstance(reason, str):
        return None
    if not client_certificate and reason in ("SSLV3_ALERT_BAD_CERTIFICATE", "TLSV13_ALERT_CERTIFICATE_REQUIRED"):
        # etcd answers "bad certificate" when none was sent, too.
        return _ALERTS["TLSV13_ALERT_CERTIFICATE_REQUIRED"]
    return _ALERTS.get(reason)


# TLS failures after the handshake (TLS 1.3 reports a refused client certificate on the first read).
_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "TLS: this member requires a client certificate: set etcd.cert and etcd.key",
    "SSLV3_ALERT_BAD_CERTIFICATE": "TLS: this member refused the client certificate in etcd.cert",
    "TLSV1_ALERT_UNKNOWN_CA": "TLS: this member does not trust the CA that signed etcd.cert",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "TLS: this member says the client certificate in etcd.cert has expired",
    "WRONG_VERSION_NUMBER": "TLS: this member does not serve TLS: use http:// in etcd.machines",
}

# Only on the error paths below: which protocol a member that hung up on us does speak.
_PROBE_TIMEOUT = 1.0


def served(endpoint: Endpoint) -> bool:
    """Whether ``endpoint`` speaks TLS (a plain request to it was dropped without a word)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a probe of the protocol only; nothing is sent over it
    try:
        with _tcp(endpoint.host, endpoint.port, _PROBE_TIMEOUT) as sock:
            context.wrap_socket(sock).close()
        return True
    except ssl.SSLError as exc:
        return "ALERT" in (exc.reason or "")  # it spoke TLS, and wanted a client certificate
    except OSError:
        return False


def _speaks_plain_http(endpoint: Endpoint) -> bool:
    try:
        with _tcp(endpoint.host, endpoint.port, _PROBE_TIMEOUT) as sock:
            sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except OSError:
        return False


def _check_files(config: EtcdConfig) -> None:
    """The same check config loading does, for an EtcdConfig built without a file (library use)."""
    from resource_extend.config import tls_file_problem

    problem = tls_file_problem(config.ca, config.cert, config.key)
    if problem:
        raise PluginError(f"{config.where}: {problem}")


# OpenSSL's X509_V_ERR codes for "the issuer is not one we trust".
_UNTRUSTED = (2, 18, 19, 20, 21)


def _verify_failure(exc: Any, endpoint: Endpoint, config: EtcdConfig) -> str:
    code, message = getattr(exc, "verify_code", 0), getattr(exc, "verify_message", "") or str(exc)
    if code == 10:  # X509_V_ERR_CERT_HAS_EXPIRED
        return f"TLS: the server's certificate has expired ({message}): renew it on the etcd member"
    if code == 9:  # X509_V_ERR_CERT_NOT_YET_VALID
        return f"TLS: the server's certificate is not valid yet ({message}): check the clocks"
    if code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
        return (
            f"TLS: the server's certificate does not name host {endpoint.host!r} ({message}): "
            "use a host name or address the certificate lists in etcd.machines"
        )
    if code in _UNTRUSTED:
        trusted = f"the CA in etcd.ca ({config.ca})" if config.ca else "a CA in the system trust store (set etcd.ca)"
        return f"TLS: the server's certificate is not signed by {trusted} ({message})"
    return f"TLS: certificate verify failed: {message}"


def _ssl_reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        return reason.lower().replace("_", " ")
    return getattr(exc, "strerror", None) or str(exc)
