"""The gRPC transport holds a guarded write's answer to what the call read (issue 30), as the gateway does
(tests/test_hostile_replies.py): an answer older than the revision a read of the call saw is not etcd's, so
the write is ambiguous (the store reads the key back), never a failed compare. In-process against the test
etcd; the answer is forged where grpcio hands it to the transport, since no proxy here speaks gRPC."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.errors import AmbiguousWrite
from resource_extend_dev.devetcd import DevEtcd


def test_a_grpc_write_answered_older_than_its_read_is_ambiguous_naming_the_member(
    etcd: DevEtcd, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyetcd import etcdrpc

    from resource_extend.store.etcd.grpc import GrpcKV

    key = f"{prefix}/k"
    etcd.put(key, "v")
    kv = GrpcKV(EtcdConfig(machines=(etcd.url,), prefix=prefix, transport="grpc"))
    try:
        entry = kv.get(key)
        assert entry is not None
        real = kv._invoke

        def forged(link: Any, method: str, request: Any) -> Any:
            answer = real(link, method, request)
            if method != "Txn":
                return answer
            stale = etcdrpc.TxnResponse()
            stale.header.revision = 1  # older than the read: a lying member or proxy
            return stale  # succeeded: false

        monkeypatch.setattr(kv, "_invoke", forged)
        with pytest.raises(AmbiguousWrite, match=rf"{etcd.url}: bad reply: a write answered at revision 1, older"):
            kv.put_if(key, b"w", entry.mod_revision)
        assert etcd.get(key) == "w"  # it had landed: the store's read-back finds it
    finally:
        kv.close()
