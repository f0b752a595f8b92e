"""The staggered race (store/etcd/race.py): a losing attempt never prints on the call's stderr (issue 35: an
exit-0 gRPC call printed ``ValueError: Cannot invoke RPC on closed channel!`` from a losing race thread)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.endpoints import Endpoint
from resource_extend.store.etcd.policy import Policy
from resource_extend.store.etcd.race import STAGGER, Race

MACHINES = ("http://127.0.0.1:1", "http://127.0.0.1:2")


def _policy() -> Policy:
    policy = Policy(EtcdConfig(machines=MACHINES, total_timeout=5))
    policy.start()
    return policy


def test_a_loser_that_raises_after_the_race_is_over_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    hooked: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    policy = _policy()
    over = threading.Event()
    raised = threading.Event()
    released: list[str] = []

    def attempt(endpoint: Endpoint) -> str:
        if endpoint.url == MACHINES[0]:
            time.sleep(STAGGER + 0.1)  # the second starts, then the first wins
            return endpoint.url
        over.wait(5)
        raised.set()
        raise ValueError("Cannot invoke RPC on closed channel!")  # its channel closed by the race's end

    race = Race(policy, list(policy.endpoints), attempt, released.append)
    assert race.run() == MACHINES[0]
    assert race.started == 2
    over.set()
    assert raised.wait(5)
    time.sleep(0.1)  # the thread's end
    assert hooked == []


def test_an_attempt_that_raises_anything_fails_its_endpoint_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    hooked: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    policy = _policy()

    def attempt(endpoint: Endpoint) -> str:
        raise ValueError(f"broken {endpoint.port}")

    race = Race(policy, list(policy.endpoints), attempt, lambda found: None)
    assert race.run() is None
    assert sorted(race.failures) == [f"{MACHINES[0]}: ValueError: broken 1", f"{MACHINES[1]}: ValueError: broken 2"]
    assert hooked == []


def test_a_grpc_probe_on_a_channel_the_race_closed_is_unanswered() -> None:
    pytest.importorskip("grpc")
    from resource_extend.store.etcd import grpc as transport
    from resource_extend.store.etcd.race import Unanswered

    kv = transport.GrpcKV(EtcdConfig(machines=MACHINES, transport="grpc", total_timeout=5))
    kv._policy.start()
    opened: list[Any] = []
    real_open = kv._open

    def closed_at_once(endpoint: Endpoint) -> Any:
        link = real_open(endpoint)
        link.channel.close()  # as the race's end does to a loser between its open and its probe
        return link

    kv._open = closed_at_once  # type: ignore[method-assign]
    with pytest.raises(Unanswered, match="closed"):
        kv._contact(kv._policy.endpoints[0], opened)
