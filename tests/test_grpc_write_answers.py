"""The gRPC transport holds a guarded write's answer to what the call read (issue 30), as the gateway does
(tests/test_hostile_replies.py): an answer older than the revision a read of the call saw is not etcd's, so
the write is ambiguous (the store settles it by its token), never a failed compare. In-process against the test
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
            kv.put_if(key, b"w", entry.mod_revision, f"{prefix}/token", b"t")
        assert etcd.get(key) == "w"  # it had landed: the store settles it by its token
        assert etcd.get(f"{prefix}/token") == "t"
    finally:
        kv.close()


def test_a_grpc_answer_past_the_reply_bound_fails_the_call_and_one_within_it_reads() -> None:
    # grpcio's receive limit is the bound every other path holds a reply to (http1.MAX_REPLY); unset, it was
    # unlimited (-1), and a member or proxy could make a call hold whatever it sent. A member of our own that
    # answers a range with a value of the size asked.
    from concurrent import futures

    import grpc
    from pyetcd.etcdrpc import rpc_pb2, rpc_pb2_grpc

    from resource_extend.errors import StoreUnavailable
    from resource_extend.store.etcd.grpc import GrpcKV
    from resource_extend.store.etcd.http1 import MAX_REPLY

    size = {"value": 0}

    class Member(rpc_pb2_grpc.KVServicer):  # type: ignore[misc]
        def Range(self, request: Any, context: Any) -> Any:
            answer = rpc_pb2.RangeResponse(count=1)
            answer.header.revision = 7
            answer.kvs.add(key=request.key, value=b"v" * size["value"], mod_revision=7)
            return answer

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), options=[("grpc.max_send_message_length", -1)])
    rpc_pb2_grpc.add_KVServicer_to_server(Member(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    config = EtcdConfig(machines=(f"http://127.0.0.1:{port}",), prefix="/bound", transport="grpc")
    try:
        size["value"] = MAX_REPLY - 1024  # within the bound, with room for the message's own fields
        kv = GrpcKV(config)
        try:
            entry = kv.get("/bound/n1")
            assert entry is not None and len(entry.value) == MAX_REPLY - 1024
        finally:
            kv.close()
        size["value"] = MAX_REPLY + 1
        kv = GrpcKV(config)
        try:
            with pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1"):
                kv.get("/bound/n1")
        finally:
            kv.close()
    finally:
        server.stop(None)
