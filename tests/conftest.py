"""Shared fixtures: one real etcd for the session, plugin directories; the helpers live in tests/support.py."""

from __future__ import annotations

import fcntl
import itertools
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from resource_extend_dev.devetcd import DevEtcd, binary
from tests.support import DEEP, PASSWORD, PLUGINS, ROOT, PluginDir

# CI replays a fixed set of examples (the same every run, and run here before each landing), so a
# submission cannot fail on a random draw nobody saw; local runs keep exploring new examples. No profile has
# a per-example deadline: that would be a timed test, and on a loaded 2-core machine one slow example (a
# first import, a collection) fails a correct property as "flaky". Speed is the benchmark's business.
# `make test-deep` (RESOURCE_TESTS_DEEP=1) loads "deep": fresh draws, ten times the examples of a property
# that names none, and every property's full count (tests.support.examples); CI need not run it.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("deep", deadline=None, max_examples=1000)
settings.load_profile("deep" if DEEP else "ci" if os.environ.get("CI") else "dev")

_prefixes = itertools.count()

# make test hands each worker whole files (--dist loadfile), in collection order (--no-loadscope-reorder: by
# default pytest-xdist starts the files with the most tests, and the few long files, last in that order, left
# one worker running a 20 s file alone at the end). So the longest files start first, longest first (their
# share of a whole run, in seconds), and the many short ones fill in behind: a file missing here only runs
# later, and one that grows long belongs here. The gRPC build the first one starts (grpc_build, 12 s) is
# ready when the others that need it start.
LONGEST_FIRST = [
    "test_grpc_transport.py",  # 55, the gRPC build included
    "test_fuzz_vectors.py",  # 40
    "test_reliability.py",  # 60
    "test_etcd_faults.py",  # 33
    "test_trust_every_python.py",  # 26
    "test_malformed_bytes.py",  # 22
    "test_interpreters.py",  # 21
    "test_docs.py",  # 20
    "test_busybox_env.py",  # 20
    "test_chaos.py",  # 19
    "test_prefetch.py",  # 16
    "test_wheel.py",  # 16
    "test_work_bounds.py",  # 15
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of LONGEST_FIRST first, in its order; the rest after them as collected (a stable sort: the
    tests of one file keep their order, which the docs pages' shared store needs)."""
    tests = Path(__file__).parent
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}

    def place(item: pytest.Item) -> int:
        # A test collected from outside tests/ (a path given on the command line, doctests) goes with the rest.
        return rank.get(str(item.path.relative_to(tests)), len(rank)) if item.path.is_relative_to(tests) else len(rank)

    items.sort(key=place)


@pytest.fixture(scope="session")
def etcd() -> Iterator[DevEtcd]:
    with DevEtcd() as server:
        yield server


@pytest.fixture
def prefix() -> str:
    """A fresh etcd namespace per test, so tests never see each other's records."""
    return f"/test/{os.getpid()}-{next(_prefixes)}"


@pytest.fixture
def gpu(tmp_path: Path, etcd: DevEtcd, prefix: str) -> PluginDir:
    return PluginDir("gpu", tmp_path, etcd, prefix)


@pytest.fixture(scope="session")
def grpc_build(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """``python build.py --grpc --out DIR`` (the same file names as the default build), once per test run:
    pytest-xdist's workers share one build through a lock in their common temporary directory."""
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent
    out = shared / "grpc-build"
    with open(shared / "grpc-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "built").exists():
            done = subprocess.run(
                [sys.executable, str(ROOT / "build.py"), "--grpc", "--out", str(out), *PLUGINS],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            (out / "built").touch()
    return out


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
