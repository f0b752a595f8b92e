"""Helpers shared by the test modules: paths, the built executables, plugin directories, shared data.

Not a test module (pytest collects only test_*.py) and not conftest, so test modules import from here and
never from each other; conftest.py builds its fixtures from these.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import strategies as st

import plugins as registry
from resource_extend.bounds import Bounds
from resource_extend.command.nodeverbs import verb_table
from resource_extend.command.verb import Table
from resource_extend.errors import PluginError
from resource_extend.formats import decoding
from resource_extend.formats.decoding import INT64_MAX, INT64_MIN
from resource_extend.gpu import prodmap
from resource_extend.gpu import record as counted_record
from resource_extend.storage.binding import VolumeBinding
from resource_extend.storage.disk import Disk
from resource_extend.storage.record import NodeResource, StorageRecord
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
PLUGINS = [p for p in registry.SHIPPED if (ROOT / "plugins" / f"{p}.py").exists()]
# The vectors of the plugins in this repo: run over the gateway (test_vectors) and over gRPC (test_grpc_transport).
CASES = [c for c in load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl"))) if c["plugin"] in PLUGINS]
# Each plugin's verb table, for serving calls in-process through cli.answer.
TABLES: dict[str, Table[Any]] = {name: verb_table(registry.plugin(name)) for name in PLUGINS}
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
STORE_VERBS = [v.name for v in TABLES["gpu"].verbs if v.name not in ("get-metrics-description", "calculate-remap")]


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
    from resource_extend.command import cli

    table = TABLES[plugin]
    found = table.verb(verb)
    assert found is not None, f"{plugin} has no verb {verb}"
    status, response, error = cli.answer(table.plugin, found, config_path, lambda limit: stdin[: limit + 1])
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


def keys_read(plugin: str, verb: str, request: dict[str, Any]) -> dict[str, Any]:
    """``request`` without the top-level keys ``verb`` does not read, which decision 19 refuses: one request
    holding the keys of many verbs then serves each of them."""
    schema = json.loads((ROOT / "schemas" / plugin / f"{verb}.request.json").read_text())
    if schema.get("additionalProperties") is not False:
        return dict(request)
    return {key: value for key, value in request.items() if key in schema.get("properties", {})}


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
        patched.setattr(counted_record, "plain_int64s", lambda values: False)
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


# -- request values against the reading they replaced (tests/unit/<plugin>/test_payloads.py) ---------------


def DeployLimits(path: str, max_deploy_count: int = 10) -> Bounds:
    """What a request value reads off the config: the bounds (a small deploy_count one) and the file."""
    return Bounds(path, max_deploy_count=max_deploy_count)


def shared_request_readers(payloads: Any, limits: Bounds) -> dict[str, Callable[[dict[str, Any]], tuple[Any, ...]]]:
    """What each request value of ``params`` holds when read with a plugin's ``payloads``, for the shapes
    params writes once for both plugins: the new side of the differential request tests."""
    from resource_extend.envelope.capacity import DeployCapacity
    from resource_extend.envelope.plans import Deploy
    from resource_extend.envelope.realloc import Realloc
    from resource_extend.envelope.sides import SetUsage

    def set_usage(req: dict[str, Any]) -> tuple[Any, ...]:
        value = SetUsage.from_json(req, payloads)
        return value.nodename, value.resource, value.workloads, value.delta, value.incr

    def deploy_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
        value = DeployCapacity.from_json(req, limits, payloads)
        return value.nodenames, value.request

    def deploy(req: dict[str, Any]) -> tuple[Any, ...]:
        value = Deploy.from_json(req, limits, payloads)
        return value.nodename, value.count, value.request

    def realloc(req: dict[str, Any]) -> tuple[Any, ...]:
        value = Realloc.from_json(req, limits, payloads)
        return value.nodename, value.request, value.current

    return {
        "set-node-resource-usage": set_usage,
        "get-nodes-deploy-capacity": deploy_capacity,
        "calculate-deploy": deploy,
        "calculate-realloc": realloc,
    }


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


def reference_python() -> str:
    """The interpreter the build's shebang finds here (the default python3), which every other must agree with."""
    found = shutil.which("python3")
    assert found is not None
    done = subprocess.run(
        [found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, check=True
    )
    return str(Path(done.stdout.strip()))


def reference_label(python: str) -> str | None:
    """The label ``interpreter`` resolves to this same interpreter file, if any."""
    for label, found in [*INTERPRETERS.items(), ("system", SYSTEM)]:
        if found and os.path.realpath(found) == os.path.realpath(python):
            return label
    return None


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


# -- bytes from outside that must never become an internal error (issue 20): shared by the tests that feed
# them to the executables (test_malformed_bytes, test_store_safety, test_config_checks, test_work_bounds,
# and test_trust_every_python, which feeds them under every interpreter) ---------------------------------

# Each plugin's good record, as the other writer would have stored it (compact, as Go marshals).
GOOD_RECORDS = {plugin: json.dumps(SEED[plugin], separators=(",", ":")) for plugin in PLUGINS}


def spoiled_record(plugin: str, kind: str) -> bytes:
    """The plugin's good record made unreadable one way: what Go's json.Unmarshal refuses too."""
    text = GOOD_RECORDS[plugin]
    first = '"capacity"'  # the first string of every record
    spoil: dict[str, Any] = {
        "truncated": lambda: text[:-1].encode(),
        "control-character": lambda: text.replace(first, '"capa\x01city"').encode(),
        "bad-escape": lambda: text.replace(first, '"capa\\qcity"').encode(),
        "trailing-comma": lambda: (text[:-1] + ",}").encode(),
        "extra-data": lambda: (text + "{}").encode(),
        "nan": lambda: ('{"x":NaN,' + text[1:]).encode(),
        "utf8-bom": lambda: b"\xef\xbb\xbf" + text.encode(),
        "utf16": lambda: text.encode("utf-16"),
        "utf16-without-bom": lambda: text.encode("utf-16-le"),
        "utf32": lambda: text.encode("utf-32"),
        "not-utf8": lambda: text.replace(first, '"capa\xffcity"').encode("latin-1"),
    }
    data: bytes = spoil[kind]()
    return data


MALFORMED_KINDS = [
    "truncated",
    "control-character",
    "bad-escape",
    "trailing-comma",
    "extra-data",
    "nan",
    "utf8-bom",
    "utf16",
    "utf16-without-bom",
    "utf32",
    "not-utf8",
]

# Records that decode as JSON (or do not) but cannot be a record: decision 9's other kinds.
UNREADABLE_RECORDS: dict[str, bytes] = {
    "bad-json": b'{"capacity": ',
    "not-utf8": b'{"capacity": {"\xff": 1}}',
    "past-int64": b'{"capacity": {"prod_count_map": {"a": 9223372036854775808}, '
    b'"volumes": {"/a": 9223372036854775808}, "storage": 9223372036854775808}}',
    "wrong-types": b'{"capacity": {"prod_count_map": {"a": "2"}, "volumes": [], "storage": "1T"}, "usage": 5}',
    "not-an-object": b'"n1"',
    "no-capacity": b'{"usage": {"volumes": {}, "disks": [], "storage": 1}}',
    "nested-too-deep": b"[" * 100000 + b"]" * 100000,
    "huge-integer": b'{"capacity": {"storage": 1' + b"0" * 5000 + b"}}",
}

# Decision 17: a lone surrogate escape in a stored string, and the name it reads as.
SURROGATE_RECORDS = {
    "gpu": ('{"capacity":{"prod_count_map":{"a\\ud800":8}},"usage":{"prod_count_map":{}}}', "a\ufffd"),
    "storage": (
        '{"capacity":{"volumes":{"/data\\udc00":100},"disks":[],"storage":100},'
        '"usage":{"volumes":{"/data\\udc00":0},"disks":[],"storage":0}}',
        "/data\ufffd",
    ),
}

# Stdin that is not one JSON value, and the start of the one line each call must fail with.
MALFORMED_STDIN = {
    b'{"nodename":"n1"': "decode plugin input: Expecting ',' delimiter at offset 16",
    b'  {"nodename":"n1\x01"}': "decode plugin input: Invalid control character at offset 15",
    b'{"nodename":"n\\q"}': "decode plugin input: Invalid \\escape at offset 14",
    b'{"nodename":"n1",}': "decode plugin input: Expecting property name enclosed in double quotes at offset 17",
    b'{"nodename":': "decode plugin input: Expecting value at offset 12",
    b'{"nodename":"n1","x":NaN}': "decode plugin input: invalid number literal NaN",
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def put_raw(space: PluginDir, node: str, data: bytes) -> None:
    """Store ``data`` as the node's record byte for byte, as another writer could."""
    space.etcd.call("/v3/kv/put", {"key": b64(space.key(node).encode()), "value": b64(data)})


def raw_record(space: PluginDir, node: str) -> bytes:
    kvs = space.etcd.call("/v3/kv/range", {"key": b64(space.key(node).encode())})["kvs"]
    return base64.b64decode(kvs[0]["value"])


def snapshot(space: PluginDir) -> dict[str, tuple[str, str, str]]:
    """Every key under the prefix: its value, mod revision and version."""
    start = space.prefix.encode()
    end = start[:-1] + bytes([start[-1] + 1])
    reply = space.etcd.call("/v3/kv/range", {"key": b64(start), "range_end": b64(end)})
    return {kv["key"]: (kv.get("value", ""), kv["mod_revision"], kv["version"]) for kv in reply.get("kvs") or []}


# Config files PyYAML reads (or refuses) that the fast path's JSON reading cannot, and the refusal each gets
# (None: the file reads): through the executable, which imports no json package (on 3.10 and 3.11 the bare
# C scanner raised SystemError: issue 20 item 1).
_ETCD = "http://127.0.0.1:2379"
ODD_CONFIGS = {
    "a trailing comma": (f'{{"etcd": {{"machines": ["{_ETCD}"],}}}}', None),
    "a leading zero": (f'{{"etcd": {{"machines": ["{_ETCD}"], "total_timeout": 010}}}}', None),
    "a leading zero, NaN": (
        f'{{"etcd": {{"machines": ["{_ETCD}"], "total_timeout": NaN}}}}',
        "etcd.total_timeout: 'NaN'",
    ),
    "an impossible date": (f"etcd:\n  machines: [{_ETCD}]\n  total_timeout: 2001-02-30\n", "invalid YAML: ValueError"),
    "an unclosed JSON object": (f'{{"etcd": {{"machines": ["{_ETCD}"]}}', "invalid YAML at line 1"),
    "a list nested 600 deep": (  # past PyYAML's ~490 levels; RecursionError's words differ by interpreter
        f"etcd:\n  machines: [{_ETCD}]\nx: {'[' * 600}{']' * 600}\n",
        "invalid YAML: nested too deeply",
    ),
    "a 5001-digit integer": (
        f'{{"etcd": {{"machines": ["{_ETCD}"], "total_timeout": 1{"0" * 5000}}}}}',
        "invalid YAML: ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 5001",
    ),
}


# -- the work a request asks for (decision 18): test_work_bounds and test_trust_every_python ------------------


def bindings(count: int, template: str = "AUTO:/d{}:rw:1") -> list[str]:
    return [template.format(i) for i in range(count)]


def products(count: int) -> dict[str, Any]:
    return {"prod_count_map": {f"p{i}": 1 for i in range(count)}}


def padded(size: int) -> bytes:
    """A request of exactly ``size`` bytes: the node name padded with spaces after the object."""
    doc = b'{"nodename": "n1", "workload_resource_request": {}}'
    return doc + b" " * (size - len(doc))


def read_whole_or_refused(plugin: str, verb: str, read: Callable[[dict[str, Any]], Any], req: dict[str, Any]) -> None:
    """Core's request passes the verb's schema first; what is left to the request value is read whole or
    refused as the plugin refuses (a one-line PluginError), never by another exception."""
    from resource_extend.formats import validation

    try:
        validation.check(plugin, verb, "request", req)
    except PluginError:
        return
    try:
        read(req)
    except PluginError as refusal:
        assert "\n" not in str(refusal) and str(refusal)


# -- a call's peak memory --------------------------------------------------------------------------------


# Peak RSS where /usr/bin/time is missing: a small Python whose only child is the call, so RUSAGE_CHILDREN is
# the call's own peak (a child forked from the test process itself would count that process's memory too).
_PEAK = (
    "import resource, subprocess, sys\n"
    "status = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n"
)


def measured(exe: str, verb: str, request: Any, cwd: Path, timeout: float) -> tuple[Outcome, int, float]:
    """One call through ``exe``: its outcome, its peak RSS in MB from ``/usr/bin/time -v``'s figure (``%M``)
    or, without that tool, from RUSAGE_CHILDREN, and its wall time in seconds."""
    import tempfile
    import time

    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch, "peak")
        if os.access("/usr/bin/time", os.X_OK):
            argv = ["/usr/bin/time", "-f", "%M", "-o", str(peak), exe, verb]
        else:
            argv = [sys.executable, "-c", _PEAK, str(peak), exe, verb]
        started = time.monotonic()
        done = subprocess.run(
            argv, input=json.dumps(request).encode(), cwd=cwd, capture_output=True, timeout=timeout, env=env
        )
        took = time.monotonic() - started
        # time writes "Command exited with non-zero status N" before the figure when the call failed.
        peak_kb = int(peak.read_text().split()[-1])
    out = Outcome(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))
    return out, peak_kb // 1024, took
