"""The dev etcds' ports (resource_extend_dev/devetcd.py): reserved together, so a cluster's members, or one
etcd's client and peer URLs, never share a port, even where the kernel hands back a port it just released
(issue 30: a fresh clone's `make test` failed once on etcd's "has duplicate url")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from resource_extend_dev import devetcd
from resource_extend_dev.devetcd import DevCluster, free_ports


class ReusingSocket:
    """A socket whose bind to port 0 gets the lowest port no open socket of this kind holds: what a kernel may
    do with a port released a moment ago, every time."""

    bound: ClassVar[set[int]] = set()

    def __init__(self, *args: Any) -> None:
        self.port = 0

    def bind(self, address: tuple[str, int]) -> None:
        self.port = min(set(range(40000, 40100)) - ReusingSocket.bound)
        ReusingSocket.bound.add(self.port)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def close(self) -> None:
        ReusingSocket.bound.discard(self.port)

    def __enter__(self) -> ReusingSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def reusing(monkeypatch: pytest.MonkeyPatch) -> None:
    ReusingSocket.bound = set()
    # devetcd's own name for the socket module only: nothing else in the process sees the stand-in.
    monkeypatch.setattr(devetcd, "socket", SimpleNamespace(socket=ReusingSocket))


def test_a_clusters_member_ports_are_all_distinct_when_the_kernel_reuses_released_ports(reusing: None) -> None:
    clients, peers = DevCluster(3).ports()
    assert len(set(clients + peers)) == 6


def test_ports_reserved_together_are_distinct_and_released(reusing: None) -> None:
    assert len(set(free_ports(10))) == 10
    assert ReusingSocket.bound == set()  # none kept: etcd binds them next


def test_real_ports_reserved_together_are_distinct_and_free() -> None:
    import socket

    ports = free_ports(50)
    assert len(set(ports)) == 50
    for port in ports[:5]:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))  # released: free for etcd to bind
