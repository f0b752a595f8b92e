"""etcd client URLs, split once when the config is loaded.

``http(s)://host[:port][/]``: the scheme decides TLS, so it is required (decision 15).
"""

from __future__ import annotations

from resource_extend.errors import PluginError

# http(s)://host[:port][/]: the scheme decides TLS, so it is required (decision 15). The grammar, as the
# regular expression tests/unit/test_endpoints.py holds parse_endpoint to (``re`` itself is not
# imported on a call):
#   ([Hh][Tt][Tt][Pp][Ss]?)://(\[[0-9A-Fa-f:.]+\]|[^/:\[\]\s@?#]+)(?::([0-9]{1,5}))?/?\Z
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:.")
_NOT_IN_HOST = frozenset("/:[]@?#")


class Endpoint:
    """One etcd client URL, split once at load."""

    __slots__ = ("host", "port", "scheme", "url")

    def __init__(self, url: str, scheme: str, host: str, port: int) -> None:
        self.url, self.scheme, self.host, self.port = url, scheme, host, port

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    @property
    def authority(self) -> str:
        """``host:port`` as an HTTP Host header or h2's ``:authority`` names it: an IPv6 address in brackets."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __repr__(self) -> str:
        return f"Endpoint({self.url!r})"


def parse_endpoint(url: str) -> Endpoint:
    parts = _split_url(url)
    port = int(parts[2]) if parts and parts[2] else 2379
    if parts is None or not 0 < port < 65536:
        raise PluginError(f"etcd.machines: {url!r} is not an http://host[:port] or https://host[:port] URL")
    return Endpoint(url, parts[0].lower(), parts[1].strip("[]"), port)


def _split_url(url: str) -> tuple[str, str, str] | None:
    """(scheme, host, port text) of a URL in the grammar above, else None."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme.isascii() or scheme.lower() not in ("http", "https"):
        return None
    if rest.endswith("/"):
        rest = rest[:-1]
    if rest.startswith("["):
        end = rest.find("]")
        host, after = rest[: end + 1], rest[end + 1 :]
        if end < 2 or not set(host[1:-1]) <= _IPV6_CHARS:
            return None
    else:
        host, colon, port = rest.partition(":")
        after = colon + port
        if not host or any(char in _NOT_IN_HOST or char.isspace() for char in host):
            return None
    port = after[1:]
    if after and not (after[0] == ":" and 0 < len(port) <= 5 and port.isascii() and port.isdigit()):
        return None
    return scheme, host, port
