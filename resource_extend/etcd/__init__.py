"""etcd as the node store reaches it: ``open(config)`` returns the ``KV`` of the configured transport.

One job per module:

- kv.py: the ``Entry`` the store reads, the single-key check (the ``KV`` protocol it uses: protocol.py);
- chunks.py: the plan of a read of many keys (chunks, counted, each its span or point reads);
- endpoints.py: ``etcd.machines`` URLs, parsed once when the config is loaded;
- policy.py: one call's deadline and endpoint order; retry.py: what a failure changes of them (rotation,
  paced retries, the read-back grace); race.py: the staggered endpoint race; all shared by both transports;
- gateway.py: ``KV`` over the v3 JSON gateway (the default), on connection.py's HTTP/1.1 client and,
  for ``https://`` members only, tls.py; its reads of many keys are gatewaybulk.py's, its auth and
  several endpoints greeting.py's, and what follows a failure failing.py's, each imported only then;
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
