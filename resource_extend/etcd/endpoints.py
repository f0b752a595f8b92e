"""etcd client URLs, split once when the config is loaded.

``http(s)://host[:port][/]``: the scheme decides TLS, so it is required (decision 15).
"""

from __future__ import annotations

import re

from resource_extend.errors import PluginError

_URL = re.compile(
    r"(?P<scheme>[Hh][Tt][Tt][Pp][Ss]?)://(?P<host>\[[0-9A-Fa-f:.]+\]|[^/:\[\]\s@?#]+)(?::(?P<port>[0-9]{1,5}))?/?\Z"
)


class Endpoint:
    """One etcd client URL, split once at load."""

    __slots__ = ("host", "port", "scheme", "url")

    def __init__(self, url: str, scheme: str, host: str, port: int) -> None:
        self.url, self.scheme, self.host, self.port = url, scheme, host, port

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    def __repr__(self) -> str:
        return f"Endpoint({self.url!r})"


def parse_endpoint(url: str) -> Endpoint:
    match = _URL.match(url)
    port = int(match["port"]) if match and match["port"] else 2379
    if match is None or not 0 < port < 65536 or match["host"] in ("", "[]"):
        raise PluginError(f"etcd.machines: {url!r} is not an http://host[:port] or https://host[:port] URL")
    return Endpoint(url, match["scheme"].lower(), match["host"].strip("[]"), port)
