"""The ``KV`` of the configured transport: the one place that chooses between them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig
    from resource_extend.store.etcd.protocol import KV


def open(config: EtcdConfig) -> KV:
    """The ``KV`` for ``config.transport``, connecting on its first request."""
    if config.transport == "grpc":
        from resource_extend.store.etcd.grpc import GrpcKV

        return GrpcKV(config)
    from resource_extend.store.etcd.gateway import GatewayKV

    return GatewayKV(config)
