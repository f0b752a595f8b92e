"""``etcd.transport: grpc``: the executables built with ``python build.py --grpc``, against real etcd processes.

The store contract over both transports lives in test_store.py (its ``transport`` fixture); here: every
store verb over grpc (one vector each), an etcd without the JSON gateway, dead endpoints, TLS, auth, racing
writers, and the default build staying free of grpc.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend import config
from resource_extend.errors import PluginError
from resource_extend_dev.conformance import Outcome, check_case, run_plugin
from resource_extend_dev.devetcd import DevEtcd, free_port
from tests.support import (
    CASES,
    FAILURE_WAIT,
    PASSWORD,
    PLUGINS,
    ROOT,
    SEED,
    STORE_VERBS,
    executable,
    grpc_executable,
    keys_read,
    one_clean_line,
    plugin_dir,
    race,
    sides,
)

GRPC_PACKAGES = ("grpc/", "google/protobuf/", "pyetcd/")


def call(exe: str, path: Path, verb: str, request: Any, **kw: Any) -> Outcome:
    return run_plugin(exe, verb, json.dumps(request).encode(), str(path), **kw)


# -- selection and packaging ----------------------------------------------------------------------------


def test_transport_defaults_to_gateway_and_accepts_grpc() -> None:
    assert config.parse("x", {"etcd": {"machines": ["http://m"]}}).etcd.transport == "gateway"
    assert config.parse("x", {"etcd": {"machines": ["http://m"], "transport": "grpc"}}).etcd.transport == "grpc"


@pytest.mark.parametrize("value", ["http", "GRPC", 1, ["grpc"]])
def test_an_unknown_transport_is_a_clear_config_error(value: Any) -> None:
    with pytest.raises(PluginError, match=r"etcd\.transport: .* is not one of: gateway, grpc"):
        config.parse("x", {"etcd": {"machines": ["http://m"], "transport": value}})


def test_the_gateway_path_never_imports_grpc(etcd: DevEtcd, prefix: str) -> None:
    # A fresh interpreter: other tests in this process have imported grpc already.
    script = f"""
import sys
from resource_extend.config import parse
from resource_extend.gpu.manifest import PLUGIN
from resource_extend.command.verb import Call
settings = parse("x", {{"etcd": {{"machines": [{etcd.url!r}], "prefix": {prefix!r}}}}})
Call(PLUGIN, "get-node-resource-info", {{}}, settings).store.get_or_empty("n1")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("grpc", "google", "pyetcd"))
print(loaded)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_default_build_carries_no_grpc_and_the_grpc_build_does(plugin: str, grpc_build: Path) -> None:
    with zipfile.ZipFile(executable(plugin)) as default:
        assert not [n for n in default.namelist() if n.removeprefix("site-packages/").startswith(GRPC_PACKAGES)]
    with zipfile.ZipFile(grpc_executable(grpc_build, plugin)) as bundled:
        names = [n.removeprefix("site-packages/") for n in bundled.namelist()]
        assert all(any(n.startswith(package) for n in names) for package in GRPC_PACKAGES)


def test_build_py_bundles_exactly_the_grpc_extra() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["grpc"]
    assert list(build.GRPC_DEPS) == extra


# -- one vector per store verb, over grpc --------------------------------------------------------------


def over_grpc_cases() -> list[dict[str, Any]]:
    """Per plugin and store verb, one vector that reads or writes records: a success with a seeded store or
    records to check afterwards where there is one. The store contract itself runs over both transports in
    test_store.py; this shows every verb served end to end through the grpc build."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for case in CASES:
        if case["verb"] not in STORE_VERBS:
            continue
        key = (case["plugin"], case["verb"])
        touches = case["expect"].get("exit", 0) == 0 and bool(case.get("store") or case.get("store_after"))
        if key not in chosen or (touches and not chosen[key]["touches"]):
            chosen[key] = {"case": case, "touches": touches}
    return [chosen[key]["case"] for key in sorted(chosen)]


OVER_GRPC = over_grpc_cases()


def test_every_store_verb_of_each_plugin_has_a_vector_over_grpc() -> None:
    assert {(c["plugin"], c["verb"]) for c in OVER_GRPC} == {(p, v) for p in PLUGINS for v in STORE_VERBS}


@pytest.mark.parametrize("case", OVER_GRPC, ids=[c["id"] for c in OVER_GRPC])
def test_vector_over_grpc(case: dict[str, Any], etcd: DevEtcd, prefix: str, grpc_build: Path) -> None:
    settings = dict(case.get("config") or {})
    # write_config puts machines and prefix under etcd; a case's own config replaces whole sections.
    settings["etcd"] = {"machines": [etcd.url], "prefix": prefix, **settings.get("etcd", {}), "transport": "grpc"}
    why = check_case({**case, "config": settings}, grpc_executable(grpc_build, case["plugin"]), etcd, prefix)
    assert why is None, why


# -- an etcd that serves no JSON gateway ------------------------------------------------------------------


@pytest.fixture(scope="module")
def grpc_only_etcd() -> Iterator[DevEtcd]:
    # DevEtcd's usual readiness check reads through the gateway; /health is served without it.
    with DevEtcd(extra_args=("--enable-grpc-gateway=false",), probe="health") as server:
        yield server


@pytest.mark.parametrize("plugin", PLUGINS)
def test_without_the_gateway_grpc_works_and_the_gateway_transport_fails_clean(
    plugin: str, tmp_path: Path, grpc_only_etcd: DevEtcd, grpc_build: Path
) -> None:
    settings = {"machines": [grpc_only_etcd.url], "prefix": f"/no-gateway-{plugin}"}
    over_grpc = plugin_dir(tmp_path / "grpc", plugin, {**settings, "transport": "grpc"})
    exe = grpc_executable(grpc_build, plugin)
    set_out = call(exe, over_grpc, "set-node-resource-info", {"nodename": "n1", **sides(plugin)})
    assert (set_out.status, set_out.stderr) == (0, "")
    out = call(exe, over_grpc, "get-node-resource-info", {"nodename": "n1"})
    assert (out.status, out.stderr) == (0, ""), out
    assert json.loads(out.stdout)["capacity"] == SEED[plugin]["capacity"]

    over_gateway = plugin_dir(tmp_path / "gateway", plugin, settings)  # the default transport
    line = one_clean_line(call(executable(plugin), over_gateway, "get-node-resource-info", {"nodename": "n1"}))
    assert grpc_only_etcd.url in line and "404" in line


# -- etcd down (one member down: test_reliability.py, over each transport) --------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage", "add-node"])
def test_no_reachable_endpoint_fails_fast_and_clean_naming_each(
    plugin: str, verb: str, tmp_path: Path, silent_endpoint: str, grpc_build: Path
) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    work = plugin_dir(
        tmp_path, plugin, {"machines": [refused, silent_endpoint], "total_timeout": FAILURE_WAIT, "transport": "grpc"}
    )
    request: dict[str, Any] = {"nodename": "n1", "resource": {}, "info": None, "resource_request": None,
                               "workloads_resource": None, "delta": True, "incr": True}  # fmt: skip
    started = time.monotonic()
    line = one_clean_line(call(grpc_executable(grpc_build, plugin), work, verb, keys_read(plugin, verb, request)))
    assert time.monotonic() - started < 10
    assert verb in line and refused in line and silent_endpoint in line


def test_the_next_endpoint_answers_when_the_first_refuses(
    tmp_path: Path, etcd: DevEtcd, prefix: str, silent_endpoint: str, grpc_build: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    work = plugin_dir(tmp_path, "gpu", {"machines": [dead, silent_endpoint, etcd.url], "prefix": prefix,
                                        "transport": "grpc", "dial_timeout": 1})  # fmt: skip
    exe = grpc_executable(grpc_build, "gpu")
    assert call(exe, work, "set-node-resource-info", {"nodename": "n1", **sides("gpu")}).status == 0
    out = call(exe, work, "get-node-resource-info", {"nodename": "n1"})
    assert (out.status, out.stderr) == (0, "")


# -- no lost updates over grpc ----------------------------------------------------------------------------


def test_racing_writers_over_grpc_lose_no_increment(
    tmp_path: Path, etcd: DevEtcd, prefix: str, grpc_build: Path
) -> None:
    work = plugin_dir(tmp_path, "gpu", {"machines": [etcd.url], "prefix": prefix, "transport": "grpc"})
    key = f"{prefix}/resource/gpu/n1"
    etcd.put(key, json.dumps(SEED["gpu"]))
    increment = {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3090": 1}}, "resource_request": None,
                 "workloads_resource": None, "delta": True, "incr": True}  # fmt: skip
    failures = race(grpc_executable(grpc_build, "gpu"), work, increment, writers=10, rounds=4)
    assert failures == []
    stored = etcd.get(key)
    assert stored is not None
    assert json.loads(stored)["usage"]["prod_count_map"] == {"nvidia-3090": 40}


# -- TLS -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_tls_with_a_client_certificate_works(
    plugin: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]], grpc_build: Path
) -> None:
    etcd, files = tls_etcd
    settings = {"machines": [etcd.url], "prefix": f"/grpc-tls-{plugin}", "transport": "grpc", "ca": files["ca"],
                "cert": files["client"], "key": files["client-key"]}  # fmt: skip
    work = plugin_dir(tmp_path, plugin, settings)
    exe = grpc_executable(grpc_build, plugin)
    assert call(exe, work, "set-node-resource-info", {"nodename": "n1", **sides(plugin)}).status == 0
    out = call(exe, work, "get-node-resource-info", {"nodename": "n1"})
    assert out.status == 0 and json.loads(out.stdout)["capacity"] == SEED[plugin]["capacity"]


@pytest.mark.parametrize("case", ["wrong-ca", "no-client-cert", "unreadable-ca"])
def test_tls_with_a_wrong_ca_or_no_client_cert_fails_clean(
    case: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]], grpc_build: Path
) -> None:
    etcd, files = tls_etcd
    settings: dict[str, Any] = {"machines": [etcd.url], "total_timeout": 3, "transport": "grpc"}
    if case == "wrong-ca":
        settings.update(ca=files["bad-ca"], cert=files["client"], key=files["client-key"])
    elif case == "no-client-cert":
        settings.update(ca=files["ca"])  # https without a client certificate
    else:
        settings.update(ca=str(tmp_path / "missing.pem"), cert=files["client"], key=files["client-key"])
    work = plugin_dir(tmp_path, "gpu", settings)
    line = one_clean_line(call(grpc_executable(grpc_build, "gpu"), work, "get-node-resource-info", {"nodename": "n1"}))
    assert ("missing.pem" in line) if case == "unreadable-ca" else (etcd.url in line)


# -- auth ------------------------------------------------------------------------------------------------------


def auth_dir(path: Path, etcd: DevEtcd, prefix: str, password: str) -> Path:
    return plugin_dir(path, "gpu", {"machines": [etcd.url], "prefix": prefix, "transport": "grpc",
                                    "auth": {"username": "eru", "password": password}})  # fmt: skip


def test_auth_with_the_right_password_works_and_never_shows_it(
    tmp_path: Path, auth_etcd: DevEtcd, grpc_build: Path
) -> None:
    work = auth_dir(tmp_path, auth_etcd, "/eru-auth", PASSWORD)
    exe = grpc_executable(grpc_build, "gpu")
    outs = [
        call(exe, work, "set-node-resource-info", {"nodename": "n1", **sides("gpu")}),
        call(exe, work, "get-node-resource-info", {"nodename": "n1"}),
        call(exe, work, "get-nodes-resource-info", {"nodenames": ["n1", "n2"]}),
    ]
    assert [o.status for o in outs] == [0, 0, 0], outs
    assert all(PASSWORD not in o.stdout + o.stderr for o in outs)


def test_auth_outside_the_granted_prefix_is_refused(tmp_path: Path, auth_etcd: DevEtcd, grpc_build: Path) -> None:
    work = auth_dir(tmp_path, auth_etcd, "/elsewhere", PASSWORD)
    line = one_clean_line(call(grpc_executable(grpc_build, "gpu"), work, "get-node-resource-info", {"nodename": "n1"}))
    assert PASSWORD not in line and "permission denied" in line


def test_a_wrong_password_fails_clean_and_is_never_printed(
    tmp_path: Path, auth_etcd: DevEtcd, grpc_build: Path
) -> None:
    wrong = "wrong-" + PASSWORD
    work = auth_dir(tmp_path, auth_etcd, "/eru-auth", wrong)
    for env in (None, dict(os.environ, ERU_RESOURCE_LOG="debug", GRPC_VERBOSITY="DEBUG")):
        out = call(grpc_executable(grpc_build, "gpu"), work, "get-node-resource-info", {"nodename": "n1"}, env=env)
        assert out.status == 128 and out.stdout == ""
        assert "authentication failed" in out.stderr
        assert PASSWORD not in out.stderr and wrong not in out.stderr
