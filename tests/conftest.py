"""Shared fixtures: one real etcd for the session, the built executables, plugin directories."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend.conformance import Outcome, run_plugin, write_config
from resource_extend.devetcd import DevEtcd

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
