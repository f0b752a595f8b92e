"""A silent first endpoint costs a call a fraction of a second, not dial_timeout + request_timeout.

Both transports connect in a staggered race (resource_extend/store/etcd/race.py): the next endpoint
starts when the earlier one has not answered after race.STAGGER (0.25 s). Every config here gives a
silent endpoint 10 s to answer (``PATIENT``), so a client that waited for it instead of racing would take
10 s or more; the bound asserted (5 s for a whole process call) tells the two apart with room for a
machine loaded by the rest of the suite. The speed itself is measured by ``make bench``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PASSWORD, executable

BOUND = 5.0
# Timeouts a client that did not race would have to sit out: far beyond BOUND.
PATIENT = {"dial_timeout": 10, "request_timeout": 10, "total_timeout": 25}


def timed_call(work: Path, verb: str, request: Any) -> tuple[Outcome, float]:
    started = time.monotonic()
    out = run_plugin(executable("gpu"), verb, json.dumps(request).encode(), str(work))
    return out, time.monotonic() - started


def configure(work: Path, etcd: dict[str, Any]) -> Path:
    (work / "gpu.yaml").write_text(json.dumps({"etcd": {**PATIENT, **etcd}}))
    return work


@pytest.mark.parametrize(
    ("verb", "request_"),
    [
        # The first request is a read: it is the race's probe and its answer is used.
        ("get-nodes-resource-info", {"nodenames": ["n1"]}),
        # The first request is a guarded write: a status request probes each endpoint instead.
        ("add-node", {"nodename": "n-race", "resource": {}, "info": None}),
    ],
)
def test_a_silent_first_endpoint_costs_a_store_call_far_less_than_its_dial_timeout(
    verb: str, request_: Any, tmp_path: Path, etcd: DevEtcd, prefix: str, silent_endpoint: str
) -> None:
    work = configure(tmp_path, {"machines": [silent_endpoint, etcd.url], "prefix": prefix})
    out, took = timed_call(work, verb, request_)
    assert out.status == 0 and out.stderr == "", out
    assert took < BOUND, f"{verb} took {took:.2f} s with a silent first endpoint"


def test_with_auth_the_token_request_is_the_probe(tmp_path: Path, auth_etcd: DevEtcd, silent_endpoint: str) -> None:
    auth = {"username": "eru", "password": PASSWORD}
    work = configure(tmp_path, {"machines": [silent_endpoint, auth_etcd.url], "prefix": "/eru-auth", "auth": auth})
    out, took = timed_call(work, "get-nodes-resource-info", {"nodenames": ["n1"]})
    assert out.status == 0 and out.stderr == "", out
    assert took < BOUND


def test_a_refused_first_endpoint_hands_over_at_once_and_all_silent_stays_in_total_timeout(
    tmp_path: Path, etcd: DevEtcd, prefix: str, silent_endpoint: str
) -> None:
    from resource_extend_dev.devetcd import free_port

    refused = f"http://127.0.0.1:{free_port()}"
    work = configure(tmp_path, {"machines": [refused, etcd.url], "prefix": prefix})
    out, took = timed_call(work, "get-nodes-resource-info", {"nodenames": ["n1"]})
    assert out.status == 0 and took < BOUND, out
    work = configure(tmp_path, {"machines": [silent_endpoint, silent_endpoint], "total_timeout": 1})
    out, took = timed_call(work, "get-nodes-resource-info", {"nodenames": ["n1"]})
    assert out.status == 128 and len(out.stderr.splitlines()) == 1
    assert "etcd unavailable" in out.stderr and silent_endpoint in out.stderr
    assert took < 1 + BOUND


@pytest.mark.parametrize("transport", ["gateway", "grpc"])
@pytest.mark.parametrize("auth", [False, True])
def test_both_transports_race_past_a_silent_first_endpoint(
    transport: str, auth: bool, etcd: DevEtcd, auth_etcd: DevEtcd, prefix: str, silent_endpoint: str
) -> None:
    from resource_extend.config import EtcdConfig
    from resource_extend.store.etcd import transport as transports

    server = auth_etcd if auth else etcd
    credentials = {"username": "eru", "password": PASSWORD} if auth else {}
    key_prefix = "/eru-auth/race" if auth else prefix
    config = EtcdConfig(
        machines=(silent_endpoint, server.url),
        prefix=key_prefix,
        transport=transport,
        dial_timeout=PATIENT["dial_timeout"],
        request_timeout=PATIENT["request_timeout"],
        total_timeout=PATIENT["total_timeout"],
        **credentials,
    )
    kv = transports.open(config)
    started = time.monotonic()
    kv.put(f"{key_prefix}/k", b"v")  # a write first: the race probes (Status or the token request)
    entry = kv.get(f"{key_prefix}/k")
    took = time.monotonic() - started
    assert entry is not None and entry.value == b"v"
    assert took < BOUND, f"{transport} took {took:.2f} s with a silent first endpoint"
