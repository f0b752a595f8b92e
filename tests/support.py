"""Helpers shared by the test modules: paths, the built executables, plugin directories, shared data.

Not a test module (pytest collects only test_*.py) and not conftest, so test modules import from here and
never from each other; conftest.py builds its fixtures from these.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import strategies as st

from resource_extend import decoding
from resource_extend.bounds import Bounds
from resource_extend.decoding import INT64_MAX, INT64_MIN
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap
from resource_extend.gpu.verbs import PLUGIN as GPU_PLUGIN
from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.verbs import PLUGIN as STORAGE_PLUGIN
from resource_extend.verb import Plugin
from resource_extend_dev.conformance import (
    Outcome,
    load_cases,
    run_plugin,
    store_verdict,
    verdict,
    write_config,
)
from resource_extend_dev.devetcd import DevEtcd

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
# A plugin is part of this repo once its entry module exists; its executable must then be built.
PLUGINS = [p for p in ("gpu", "storage") if (ROOT / "plugins" / f"{p}.py").exists()]
# The vectors of the plugins in this repo: run over the gateway (test_vectors) and over gRPC (test_grpc_transport).
CASES = [c for c in load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl"))) if c["plugin"] in PLUGINS]
# Each plugin's verb table, for serving calls in-process through cli.answer.
TABLES: dict[str, Plugin[Any]] = {"gpu": GPU_PLUGIN, "storage": STORAGE_PLUGIN}
PASSWORD = "pw-Zq9-never-printed"
# etcd.total_timeout for a test that waits for a call to fail on an endpoint that never answers: the call's
# one deadline bounds the wait however short it is, so such a test need not wait seconds for each case.
FAILURE_WAIT = 0.5
# Per plugin: a valid record with room for 100 GPU increments or 1000 bytes of storage.
SEED: dict[str, dict[str, Any]] = {
    "gpu": {"capacity": {"prod_count_map": {"nvidia-3090": 1000}}, "usage": {"prod_count_map": {}}},
    "storage": {
        "capacity": {"volumes": {}, "disks": [], "storage": 1000},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
    },
}
# Per plugin: one increment of usage (set-node-resource-usage), and how to read the total back.
INCREMENT = {
    "gpu": {
        "nodename": "n1",
        "resource": {"prod_count_map": {"nvidia-3090": 1}},
        "resource_request": None,
        "workloads_resource": None,
        "delta": True,
        "incr": True,
    },
    "storage": {
        "nodename": "n1",
        "resource": {"storage": 1},
        "resource_request": None,
        "workloads_resource": None,
        "delta": True,
        "incr": True,
    },
}


def used(plugin: str, record: dict[str, Any]) -> int:
    if plugin == "gpu":
        return int(sum((record["usage"]["prod_count_map"] or {}).values()))
    return int(record["usage"]["storage"])


# The verbs that read or write the store (both plugins have the same verb names).
STORE_VERBS = [v.name for v in GPU_PLUGIN.verbs if v.name not in ("get-metrics-description", "calculate-remap")]


def sample_cases() -> list[dict[str, Any]]:
    """One success and one failure per plugin and verb (where the vectors have them): every verb, served
    by a whole other way of running the plugin (another interpreter, an installed wheel), in seconds."""
    chosen: dict[tuple[str, str, bool], dict[str, Any]] = {}
    for case in CASES:
        chosen.setdefault((case["plugin"], case["verb"], case["expect"].get("exit", 0) == 0), case)
    return list(chosen.values())


def executable_cases() -> list[dict[str, Any]]:
    """The vectors served through the built executables as well as in-process: ``sample_cases`` and every
    case whose stdin is raw bytes (how the process reads stdin is the executable's business)."""
    sample = sample_cases()
    return sample + [c for c in CASES if "stdin_raw" in c and c not in sample]


def serve_in_process(plugin: str, verb: str, stdin: bytes, config_path: str | None) -> Outcome:
    """One verb call served by the command line's own entry, ``cli.answer`` (the config, stdin, schemas, verb
    and store; everything but the process), as an Outcome like ``run_plugin``'s. ``config_path`` is what
    ``--config`` would give; None finds the file as the executable does (the environment, then the cwd)."""
    from resource_extend import cli

    table = TABLES[plugin]
    found = table.verb(verb)
    assert found is not None, f"{plugin} has no verb {verb}"
    status, response, error = cli.answer(table, found, config_path, lambda limit: stdin[: limit + 1])
    return Outcome(status, response.decode("utf-8"), error + "\n" if status else "")


def check_case_in_process(case: dict[str, Any], etcd: DevEtcd, prefix: str, work: Path) -> str | None:
    """conformance.check_case with the call served in-process (``serve_in_process``): None when it is met."""
    plugin = case["plugin"]
    write_config(str(work), plugin, etcd.url, prefix, case.get("config"))
    for node, record in (case.get("store") or {}).items():
        etcd.put(f"{prefix}/resource/{plugin}/{node}", json.dumps(record))
    stdin = case["stdin_raw"] if "stdin_raw" in case else json.dumps(case.get("request", {}))
    out = serve_in_process(plugin, case["verb"], stdin.encode(), str(work / f"{plugin}.yaml"))
    return verdict(case, out) or store_verdict(case, etcd, prefix)


def executable(plugin: str) -> str:
    path = ROOT / f"resource-{plugin}"
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path.name} is not built: run `make build` (make test does it first)")
    return str(path)


def grpc_executable(build: Path, plugin: str) -> str:
    """The plugin's executable in the ``grpc_build`` fixture's directory (``etcd.transport: grpc`` works there)."""
    return str(build / f"resource-{plugin}")


def plugin_dir(path: Path, plugin: str, etcd: dict[str, Any]) -> Path:
    """A plugin directory whose yaml holds only this ``etcd`` section."""
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{plugin}.yaml").write_text(json.dumps({"etcd": etcd}))
    return path


def one_clean_line(out: Outcome) -> str:
    """The one stderr line of a failed call, after checking that it failed the way core expects."""
    assert out.status == 128, out
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    return lines[0]


def sides(plugin: str) -> dict[str, Any]:
    """The SEED record as a set-node-resource-info request's capacity and usage."""
    return {"capacity": SEED[plugin]["capacity"], "usage": SEED[plugin]["usage"]}


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
        stdin = raw if raw is not None else json.dumps({} if request is None else request).encode()
        return run_plugin(self.exe, verb, stdin, str(self.path), **kw)

    def ok(self, verb: str, request: Any = None) -> Any:
        out = self.call(verb, request)
        assert out.status == 0, out.stderr
        assert out.stderr == ""
        return json.loads(out.stdout)


def race(exe: str, work: Path, request: Any, writers: int, rounds: int) -> list[Outcome]:
    """``writers`` processes at once, each calling set-node-resource-usage ``rounds`` times; the failures."""
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


# -- how hard the properties search: `make test` and `make check` quick, `make test-deep` as deep as ever ----

# RESOURCE_TESTS_DEEP=1 (make test-deep) runs each property with the examples it names, and loads conftest's
# "deep" hypothesis profile; otherwise a tenth of them (at least 20), so the whole suite stays within minutes.
DEEP = os.environ.get("RESOURCE_TESTS_DEEP", "") not in ("", "0")
QUICK_SHARE = 10


def examples(deep: int) -> int:
    """max_examples for a property that a deep run tries ``deep`` times: all of them there, else a tenth."""
    return deep if DEEP else min(deep, max(20, deep // QUICK_SHARE))


# -- shared by the unit test files (tests/unit/<package>/test_<module>.py) ---------------------------------

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40

# Record numbers at int64's edges, for the checks of what a record may hold (gpu and storage test_record).
INT64_EDGES = st.integers(-3, 3) | st.integers(INT64_MAX - 1, INT64_MAX + 2) | st.integers(-(2**63) - 2, -(2**63) + 1)

# Numbers as they may stand in a record some other writer stored: mostly plain, some not (decoding's fast
# path for stored ints, and the gpu and storage records decoded with and without it).
record_numbers: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=INT64_MIN, max_value=INT64_MAX),
    st.integers(min_value=INT64_MAX - 2, max_value=INT64_MAX + 2)
    | st.integers(max_value=INT64_MIN + 2, min_value=INT64_MIN - 2),
    st.sampled_from([3.0, 1e3, 1.5, float(2**63), True, False, None, "7", [], {}]),
)


def decode_outcome(decode: Callable[[], Any]) -> object:
    """What decoding gives: the decoded value's JSON, or the refusal."""
    try:
        return decode().to_json()
    except PluginError as error:
        return ("refused", str(error))


def without_fast_path(monkeypatch: pytest.MonkeyPatch, decode: Callable[[], Any]) -> object:
    """``decode_outcome`` with decoding's fast path for plain int64s switched off."""
    with monkeypatch.context() as patched:
        patched.setattr(decoding, "plain_int64s", lambda values: False)
        patched.setattr(prodmap, "plain_int64s", lambda values: False)
        return decode_outcome(decode)


def storage_record(capacity: dict[str, Any], usage: dict[str, Any]) -> StorageRecord:
    """A storage record read from these capacity and usage sides, as the store would decode them."""
    return StorageRecord.from_json({"capacity": capacity, "usage": usage})


def binding(text: str) -> VolumeBinding:
    return VolumeBinding.parse(text)


def disk(device: str, mounts: list[str] | None = None, *quota: int) -> Disk:
    return Disk(device, mounts, *quota)


# Two disks as an engine reports them, and a node of four 1 TiB volumes (the storage verbs' tests).
VDA = {
    "device": "/dev/vda",
    "mounts": ["/", "/data0"],
    "read_IOPS": 1000,
    "write_IOPS": 1000,
    "read_bps": GiB,
    "write_bps": GiB,
}
VDB = {"device": "/dev/vdb", "mounts": ["/data1"], "read_IOPS": 10, "write_IOPS": 10, "read_bps": 0, "write_bps": 0}


def node(volumes: dict[str, int], storage: int, used: dict[str, int] | None = None, disks: Any = ()) -> StorageRecord:
    return StorageRecord.from_json(
        {
            "capacity": {"volumes": volumes, "disks": list(disks), "storage": storage},
            "usage": {"volumes": used or {}, "disks": [], "storage": sum((used or {}).values())},
        }
    )


FOUR = node({f"/data{i}": TiB for i in range(4)}, 4 * TiB)


def capacity_of(record: StorageRecord) -> NodeResource:
    assert record.capacity is not None
    return record.capacity


# -- request values against the reading they replaced (tests/unit/<plugin>/test_request.py) ---------------


def DeployLimits(path: str, max_deploy_count: int = 10) -> Bounds:
    """What a request value reads off the config: the bounds (a small deploy_count one) and the file."""
    return Bounds(path, max_deploy_count=max_deploy_count)


def old_deploy_count(req: dict[str, Any], limits: Bounds) -> int:
    """deploy_count as both plugins' handlers read it before requests became values (with the refusal's
    words of the bounds module, which replaced a hard limit of 100000 by scheduler.max_deploy_work)."""
    value = req.get("deploy_count")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PluginError(f"deploy_count {value!r}: want a non-negative integer")
    count = int(value)
    bound = limits.max_deploy_count
    if count < 0:
        raise PluginError(f"deploy_count {count}: want a non-negative integer")
    if count > bound:
        raise PluginError(
            f"deploy_count {count} is more than one call plans (scheduler.max_deploy_count of {limits.path} is "
            f"{bound}; raise it there to allow more): not enough resource; deploy at most {bound} workloads per "
            "node and call"
        )
    return count


def shared_request_readers(module: Any, limits: Bounds) -> dict[str, Callable[[dict[str, Any]], tuple[Any, ...]]]:
    """What each request value of ``module`` (a plugin's request module) holds, for the shapes params
    writes once for both plugins: the new side of the differential request tests."""

    def set_usage(req: dict[str, Any]) -> tuple[Any, ...]:
        value = module.SetUsage.from_json(req)
        return value.nodename, value.resource, value.workloads, value.delta, value.incr

    def deploy_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
        value = module.DeployCapacity.from_json(req, limits)
        return value.nodenames, value.request

    def deploy(req: dict[str, Any]) -> tuple[Any, ...]:
        value = module.Deploy.from_json(req, limits)
        return value.nodename, value.count, value.request

    def realloc(req: dict[str, Any]) -> tuple[Any, ...]:
        value = module.Realloc.from_json(req, limits)
        return value.nodename, value.request, value.current

    return {
        "set-node-resource-usage": set_usage,
        "get-nodes-deploy-capacity": deploy_capacity,
        "calculate-deploy": deploy,
        "calculate-realloc": realloc,
    }


def read_outcome(read: Callable[[dict[str, Any]], Any], req: dict[str, Any]) -> tuple[str, Any]:
    """What reading ``req`` gives, or how it fails."""
    # Not only PluginError: a request the schema would have refused may fail otherwise, and must fail alike.
    try:
        return "read", read(req)
    except Exception as error:
        return type(error).__name__, str(error)


def site_pages() -> list[str]:
    """The page files of the documentation site's nav (mkdocs.yml), sections flattened, in order."""
    import yaml

    root = Path(__file__).resolve().parent.parent

    def flat(nav: list[Any]) -> list[str]:
        pages: list[str] = []
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            pages += flat(value) if isinstance(value, list) else [value]
        return pages

    return flat(yaml.safe_load((root / "mkdocs.yml").read_text())["nav"])


# -- the interpreters this machine has (decision 16): tests run the built files under each, as core would ----

PYENV = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
OLD_MINORS = ("3.6", "3.7", "3.8")
SUPPORTED_MINORS = ("3.9", "3.10", "3.11", "3.12", "3.13")


def find(minor: str) -> str | None:
    """An interpreter of that minor: pyenv's, else python3.X on PATH."""
    for candidate in sorted(PYENV.glob(f"{minor}.*/bin/python{minor}")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(f"python{minor}")


INTERPRETERS = {minor: find(minor) for minor in (*OLD_MINORS, *SUPPORTED_MINORS)}
SYSTEM = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else None


def interpreter(label: str) -> str:
    path = SYSTEM if label == "system" else INTERPRETERS.get(label)
    if path is None:
        pytest.skip(f"no Python {label} on this machine")
    return path


def as_python3(tmp_path: Path, python: str) -> dict[str, str]:
    """An environment whose PATH finds ``python`` as python3 first, as core's service environment would."""
    bin_dir = tmp_path / "python3-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    link = bin_dir / "python3"
    if not link.exists():
        link.symlink_to(python)
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env
