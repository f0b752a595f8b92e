"""Shared fixtures: one real etcd for the session, the built executables, plugin directories."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from resource_extend.conformance import Outcome, run_plugin, write_config
from resource_extend.devetcd import DevEtcd, binary

# CI replays a fixed set of examples (the same every run, and run here before each landing), so a
# submission cannot fail on a random draw nobody saw; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
# A plugin is part of this repo once its entry module exists; its executable must then be built.
PLUGINS = [p for p in ("gpu", "storage") if (ROOT / "plugins" / f"{p}.py").exists()]
_prefixes = itertools.count()


@pytest.fixture(scope="session")
def etcd() -> Iterator[DevEtcd]:
    with DevEtcd() as server:
        yield server


def executable(plugin: str) -> str:
    path = ROOT / f"resource-{plugin}"
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path.name} is not built: run `make build` (make test does it first)")
    return str(path)


@pytest.fixture
def prefix() -> str:
    """A fresh etcd namespace per test, so tests never see each other's records."""
    return f"/test/{os.getpid()}-{next(_prefixes)}"


class PluginDir:
    """A plugin directory as core lays it out: the executable is run with cwd here, its yaml beside it."""

    def __init__(self, plugin: str, path: Path, etcd: DevEtcd, prefix: str) -> None:
        self.plugin, self.path, self.etcd, self.prefix = plugin, path, etcd, prefix
        self.exe = executable(plugin)
        self.configure()

    def configure(self, **extra: Any) -> None:
        write_config(str(self.path), self.plugin, self.etcd.url, self.prefix, extra or None)

    def key(self, node: str) -> str:
        return f"{self.prefix}/resource/{self.plugin}/{node}"

    def call(self, verb: str, request: Any = None, raw: bytes | None = None, **kw: Any) -> Outcome:
        import json

        stdin = raw if raw is not None else json.dumps({} if request is None else request).encode()
        return run_plugin(self.exe, verb, stdin, str(self.path), **kw)

    def ok(self, verb: str, request: Any = None) -> Any:
        import json

        out = self.call(verb, request)
        assert out.status == 0, out.stderr
        assert out.stderr == ""
        return json.loads(out.stdout)


@pytest.fixture
def gpu(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    return PluginDir("gpu", tmp_path, etcd, prefix)


# -- etcd servers with TLS or auth, and a silent endpoint: shared by the reliability and transport tests --


@pytest.fixture(scope="session")
def tls_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevEtcd, dict[str, str]]]:
    import trustme

    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("eru-core")
    files = {
        name: str(folder / f"{name}.pem") for name in ("ca", "server", "server-key", "client", "client-key", "bad-ca")
    }
    ca.cert_pem.write_to_path(files["ca"])
    server.cert_chain_pems[0].write_to_path(files["server"])
    server.private_key_pem.write_to_path(files["server-key"])
    client.cert_chain_pems[0].write_to_path(files["client"])
    client.private_key_pem.write_to_path(files["client-key"])
    trustme.CA().cert_pem.write_to_path(files["bad-ca"])
    with DevEtcd(tls=(files["ca"], files["server"], files["server-key"])) as server_etcd:
        yield server_etcd, files


PASSWORD = "pw-Zq9-never-printed"


@pytest.fixture(scope="session")
def auth_etcd() -> Iterator[DevEtcd]:
    with DevEtcd() as server:
        ctl = [binary("etcdctl"), "--endpoints", server.url]
        steps = [
            ["user", "add", "root:root-secret"],
            ["role", "add", "eru"],
            ["role", "grant-permission", "eru", "--prefix=true", "readwrite", "/eru-auth/"],
            ["user", "add", f"eru:{PASSWORD}"],
            ["user", "grant-role", "eru", "eru"],
            ["auth", "enable"],
        ]
        for step in steps:
            subprocess.run([*ctl, *step], check=True, capture_output=True, timeout=30)
        yield server


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A port that accepts connections and never answers: the slowest way for etcd to be down."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def race(exe: str, work: Path, request: Any, writers: int, rounds: int) -> list[Outcome]:
    """``writers`` processes at once, each calling set-node-resource-usage ``rounds`` times; the failures."""
    import json
    import threading

    failures: list[Outcome] = []

    def writer() -> None:
        for _ in range(rounds):
            out = run_plugin(exe, "set-node-resource-usage", json.dumps(request).encode(), str(work))
            if out.status != 0:
                failures.append(out)

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures
