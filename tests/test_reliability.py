"""Guarantees that hold when the world misbehaves: racing writers, dead etcd members, TLS, auth, bad input.

Every test runs the built executables against real etcd processes on 127.0.0.1 ports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin
from resource_extend_dev.devetcd import DevCluster, DevEtcd, free_port
from tests.support import (
    FAILURE_WAIT,
    INCREMENT,
    PASSWORD,
    PLUGINS,
    SEED,
    STORE_VERBS,
    executable,
    grpc_executable,
    keys_read,
    one_clean_line,
    plugin_dir,
    race,
    sides,
    used,
)

# The keys of a request every store verb accepts and that reaches the store (keys_read keeps a verb's own).
ANY_REQUEST = {
    "nodename": "n1",
    "nodenames": ["n1", "n2"],
    "deploy_count": 1,
    "nodes": [{"podname": "p", "nodename": "n1"}],
}
# Every verb that reads or writes etcd: all of the table but the two that answer from the request alone.


def call(path: Path, plugin: str, verb: str, request: Any, exe: str | None = None, **kw: Any) -> Outcome:
    return run_plugin(exe or executable(plugin), verb, json.dumps(request).encode(), str(path), **kw)


# -- 1. no lost updates ----------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_twenty_racing_writers_lose_no_increment(plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    work = plugin_dir(tmp_path, plugin, {"machines": [etcd.url], "prefix": prefix})
    key = f"{prefix}/resource/{plugin}/n1"
    etcd.put(key, json.dumps(SEED[plugin]))
    failures = race(executable(plugin), work, INCREMENT[plugin], writers=20, rounds=5)
    assert failures == []
    stored = etcd.get(key)
    assert stored is not None
    assert used(plugin, json.loads(stored)) == 100


@pytest.mark.parametrize("plugin", PLUGINS)
def test_of_two_racing_add_nodes_exactly_one_wins(plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    work = plugin_dir(tmp_path, plugin, {"machines": [etcd.url], "prefix": prefix})
    outcomes: list[Outcome] = []

    def add(i: int) -> None:
        outcomes.append(call(work, plugin, "add-node", {"nodename": "n1", "resource": {}, "info": None}))

    for round_ in range(3):
        etcd.call("/v3/kv/deleterange", {"key": _b64(f"{prefix}/resource/{plugin}/n1")})
        outcomes.clear()
        threads = [threading.Thread(target=add, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(o.status for o in outcomes) == [0, 128, 128, 128], round_
        assert all("node already exists" in o.stderr for o in outcomes if o.status)


# -- 2. etcd down ------------------------------------------------------------------------------------


# Storage's get-most-idle-node answers the first name without reading the store (storage-scheduler.md §6.10).
READS_THE_STORE = [(p, v) for p in PLUGINS for v in STORE_VERBS if (p, v) != ("storage", "get-most-idle-node")]


@pytest.mark.parametrize(("plugin", "verb"), READS_THE_STORE)
def test_every_store_verb_fails_fast_and_clean_without_etcd(
    plugin: str, verb: str, tmp_path: Path, silent_endpoint: str
) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    work = plugin_dir(tmp_path, plugin, {"machines": [refused, silent_endpoint], "total_timeout": FAILURE_WAIT})
    started = time.monotonic()
    line = one_clean_line(call(work, plugin, verb, keys_read(plugin, verb, ANY_REQUEST)))
    assert time.monotonic() - started < 10
    assert verb in line
    assert refused in line and silent_endpoint in line


def test_the_default_bound_stays_under_ten_seconds(tmp_path: Path, silent_endpoint: str) -> None:
    work = plugin_dir(tmp_path, "gpu", {"machines": [silent_endpoint, silent_endpoint]})
    started = time.monotonic()
    one_clean_line(call(work, "gpu", "get-node-resource-info", {"nodename": "n1"}))
    assert time.monotonic() - started < 10


# -- 3. one member down ------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["gateway", "grpc"])
@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_cluster_serves_with_one_member_down_and_fails_clean_without_quorum(
    plugin: str, transport: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # The grpc build only when this case needs it: a gateway-only run never pays for it.
    exe = executable(plugin)
    if transport == "grpc":
        exe = grpc_executable(request.getfixturevalue("grpc_build"), plugin)
    with DevCluster(3) as cluster:
        work = plugin_dir(tmp_path, plugin, {"machines": cluster.urls, "prefix": "/ha", "total_timeout": 6,
                                             "transport": transport})  # fmt: skip
        cluster.stop_member(0)
        for verb in STORE_VERBS:
            if verb == "fix-node-resource":
                call(work, plugin, "set-node-resource-info", {"nodename": "n1", **sides(plugin)}, exe=exe)
            out = call(work, plugin, verb, keys_read(plugin, verb, ANY_REQUEST), exe=exe)
            assert out.status == 0, (verb, out.stderr)
            assert out.stderr == ""
        cluster.stop_member(1)
        # Without quorum a read waits out the call's deadline: a short one, as the verdict is the same.
        plugin_dir(tmp_path, plugin, {"machines": cluster.urls, "prefix": "/ha", "total_timeout": FAILURE_WAIT,
                                      "transport": transport})  # fmt: skip
        started = time.monotonic()
        line = one_clean_line(call(work, plugin, "get-node-resource-info", {"nodename": "n1"}, exe=exe))
        assert time.monotonic() - started < 10
        assert "etcd" in line


# -- 4. TLS --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_tls_with_a_client_certificate_works(
    plugin: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]
) -> None:
    etcd, files = tls_etcd
    work = plugin_dir(
        tmp_path,
        plugin,
        {
            "machines": [etcd.url],
            "prefix": f"/tls-{plugin}",
            "ca": files["ca"],
            "cert": files["client"],
            "key": files["client-key"],
        },
    )
    assert call(work, plugin, "set-node-resource-info", {"nodename": "n1", **sides(plugin)}).status == 0
    out = call(work, plugin, "get-node-resource-info", {"nodename": "n1"})
    assert out.status == 0 and json.loads(out.stdout)["capacity"] == SEED[plugin]["capacity"]


@pytest.mark.parametrize("case", ["wrong-ca", "no-client-cert"])
def test_tls_with_a_wrong_ca_or_no_client_cert_fails_clean(
    case: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]
) -> None:
    etcd, files = tls_etcd
    settings: dict[str, Any] = {"machines": [etcd.url], "total_timeout": 3}
    if case == "wrong-ca":
        settings.update(ca=files["bad-ca"], cert=files["client"], key=files["client-key"])
    else:
        settings.update(ca=files["ca"])  # https without a client certificate
    work = plugin_dir(tmp_path, "gpu", settings)
    line = one_clean_line(call(work, "gpu", "get-node-resource-info", {"nodename": "n1"}))
    assert etcd.url in line


# -- 5. auth --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_auth_with_the_right_password_works_and_never_shows_it(plugin: str, tmp_path: Path, auth_etcd: DevEtcd) -> None:
    work = plugin_dir(
        tmp_path,
        plugin,
        {"machines": [auth_etcd.url], "prefix": "/eru-auth", "auth": {"username": "eru", "password": PASSWORD}},
    )
    outs = [
        call(work, plugin, "set-node-resource-info", {"nodename": "n1", **sides(plugin)}),
        call(work, plugin, "get-node-resource-info", {"nodename": "n1"}),
        call(work, plugin, "get-nodes-resource-info", {"nodenames": ["n1", "n2"]}),
    ]
    assert [o.status for o in outs] == [0, 0, 0], outs
    assert all(PASSWORD not in o.stdout + o.stderr for o in outs)


def test_auth_outside_the_granted_prefix_is_refused(tmp_path: Path, auth_etcd: DevEtcd) -> None:
    work = plugin_dir(
        tmp_path,
        "gpu",
        {"machines": [auth_etcd.url], "prefix": "/elsewhere", "auth": {"username": "eru", "password": PASSWORD}},
    )
    line = one_clean_line(call(work, "gpu", "get-node-resource-info", {"nodename": "n1"}))
    assert PASSWORD not in line and "permission denied" in line


def test_a_wrong_password_fails_clean_and_is_never_printed(tmp_path: Path, auth_etcd: DevEtcd) -> None:
    wrong = "wrong-" + PASSWORD
    work = plugin_dir(
        tmp_path,
        "gpu",
        {"machines": [auth_etcd.url], "prefix": "/eru-auth", "auth": {"username": "eru", "password": wrong}},
    )
    for env in (None, dict(os.environ, ERU_RESOURCE_LOG="debug")):
        out = call(work, "gpu", "get-node-resource-info", {"nodename": "n1"}, env=env)
        assert out.status == 128 and out.stdout == ""
        assert "authentication failed" in out.stderr
        assert PASSWORD not in out.stderr and wrong not in out.stderr


# -- 7. the pyz itself ---------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_twenty_simultaneous_first_runs_all_succeed(plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    work = plugin_dir(tmp_path / "plugins", plugin, {"machines": [etcd.url], "prefix": prefix})
    exe = work / f"resource-{plugin}"
    shutil.copy2(executable(plugin), exe)
    env = dict(os.environ, SHIV_ROOT=str(tmp_path / "empty-cache"))
    procs = [
        subprocess.Popen(
            [str(exe), "get-node-resource-info"],
            cwd=work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(20)
    ]
    results = [p.communicate(b'{"nodename": "n1"}', timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 20, results
    assert all(out == (b"null", b"") for out in results)


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()
