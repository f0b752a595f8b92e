"""etcd as the node store reaches it: ``open(config)`` returns the ``KV`` of the configured transport.

One job per module:

- kv.py: the ``Entry`` the store reads, the single-key check (the ``KV`` protocol it uses: protocol.py);
- endpoints.py: ``etcd.machines`` URLs, parsed once when the config is loaded;
- policy.py: one call's deadline, endpoint order, paced retries and the staggered endpoint race,
  shared by both transports;
- gateway.py: ``KV`` over the v3 JSON gateway (the default), on connection.py's HTTP/1.1 client and,
  for ``https://`` members only, tls.py;
- grpc.py: ``KV`` over the native gRPC API (``etcd.transport: grpc``, the grpc extra).

Nothing is imported here at module level: every call loads this package (config.py parses endpoints),
while only a call that uses the store loads a client, and only a grpc call loads grpc.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig
    from resource_extend.etcd.protocol import KV


def open(config: EtcdConfig) -> KV:
    """The ``KV`` for ``config.transport``, connecting on its first request."""
    if config.transport == "grpc":
        from resource_extend.etcd.grpc import GrpcKV

        return GrpcKV(config)
    from resource_extend.etcd.gateway import GatewayKV

    return GatewayKV(config)
