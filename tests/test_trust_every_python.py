"""Issue 20's reproducers through the built executables under every python3 core may find (decision 16).

The other trust tests (test_malformed_bytes, test_config_checks, test_work_bounds, test_etcd_faults,
test_store_safety) run the executables under the default python3 only; the bugs they pin were
interpreter-specific (the C scanner's ``SystemError`` on 3.10 and 3.11 only, a reply's text on 3.12 only).
Here each interpreter 3.9-3.13 and the system's python3 is put first on PATH as ``python3`` and fed the same
reproducers, many per test so the interpreter axis stays cheap: malformed records of every kind, truncated
and garbled stdin, the odd configs and a member named by a host name, the work bounds' refusals, and etcd's
replies spoiled by a proxy.

Besides each reproducer's own promise, every call's exit status, stdout and stderr must be byte-identical
to the default python3's (the reference, run once per test): an interpreter whose messages differ (json's
texts on 3.13, the int conversion limit's on 3.9/3.10, RecursionError's) or that decodes deeper nesting
(3.12, 3.13) would answer core differently on another host.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from resource_extend.bounds import LIMITS
from resource_extend_dev.conformance import Outcome
from resource_extend_dev.devetcd import DevEtcd
from tests.faultproxy import FaultProxy, Rule
from tests.support import (
    INCREMENT,
    MALFORMED_KINDS,
    MALFORMED_STDIN,
    ODD_CONFIGS,
    PLUGINS,
    SEED,
    SUPPORTED_MINORS,
    SURROGATE_RECORDS,
    UNREADABLE_RECORDS,
    PluginDir,
    as_python3,
    bindings,
    executable,
    interpreter,
    one_clean_line,
    padded,
    products,
    put_raw,
    raw_record,
    reference_label,
    reference_python,
    snapshot,
    spoiled_record,
    used,
)

REFERENCE = reference_python()
# The default python3's own label first (3.11 here): its run is then the reference the others are held to.
LABELS = sorted([*SUPPORTED_MINORS, "system"], key=lambda label: label != reference_label(REFERENCE))
_spaces = itertools.count()


class Python:
    """One interpreter as core's python3: plugin directories, and every call made under it, as it answered."""

    def __init__(self, label: str, python: str, etcd: DevEtcd, tmp: Path, proxy: FaultProxy | None = None) -> None:
        self.label, self.etcd, self.tmp, self.proxy = label, etcd, tmp, proxy
        self.env = as_python3(tmp, python)
        # (what was asked, exit status, stdout, stderr) of every call, the proxy's address masked.
        self.answers: list[tuple[str, int, str, str]] = []

    def space(self, plugin: str) -> PluginDir:
        number = next(_spaces)
        path = self.tmp / f"{plugin}-{number}"
        path.mkdir()
        return PluginDir(plugin, path, self.etcd, f"/every/{os.getpid()}/{self.label}/{number}")

    def call(self, space: PluginDir, verb: str, request: Any = None, raw: bytes | None = None) -> Outcome:
        stdin = raw if raw is not None else json.dumps({} if request is None else request).encode()
        return self.run(space.plugin, [verb], stdin, space.path)

    def run(self, plugin: str, args: list[str], stdin: bytes, cwd: Path) -> Outcome:
        done = subprocess.run(
            [executable(plugin), *args], input=stdin, cwd=cwd, env=self.env, capture_output=True, timeout=30
        )
        out = Outcome(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr, (self.label, args, out)
        stdout, stderr = (
            text.replace(self.proxy.url, "<proxy>") if self.proxy else text for text in (out.stdout, out.stderr)
        )
        self.answers.append((f"{plugin} {' '.join(args)} <- {stdin[:60]!r}", out.status, stdout, stderr))
        return out

    def ok(self, space: PluginDir, verb: str, request: Any) -> Any:
        out = self.call(space, verb, request)
        assert (out.status, out.stderr) == (0, ""), (self.label, verb, out)
        return json.loads(out.stdout)


Reproducers = Callable[[Python], None]
_REFERENCE: dict[str, list[tuple[str, int, str, str]]] = {}


def everywhere(
    reproducers: Reproducers, label: str, etcd: DevEtcd, tmp_path: Path, proxy: FaultProxy | None = None
) -> None:
    """Run ``reproducers`` under ``label``'s interpreter (each asserts its own promises there), then hold
    every answer to the default python3's, byte for byte."""
    python = interpreter(label)
    mine = Python(label, python, etcd, tmp_path / "it", proxy)
    reproducers(mine)
    name = reproducers.__name__
    if name not in _REFERENCE:
        if os.path.realpath(python) == os.path.realpath(REFERENCE):
            _REFERENCE[name] = mine.answers
        else:
            reference = Python("reference", REFERENCE, etcd, tmp_path / "reference", proxy)
            reproducers(reference)
            _REFERENCE[name] = reference.answers
    theirs = _REFERENCE[name]
    assert len(mine.answers) == len(theirs)
    differences = [(a, b) for a, b in zip(mine.answers, theirs) if a != b]
    assert not differences, f"python3 {label} answers otherwise than the default python3: {differences}"


# -- (a) every kind of malformed stored record: bulk verbs and single-node reads, both plugins -------------


def bad_records(plugin: str) -> dict[str, bytes]:
    """Every kind of record that cannot be read (a lone surrogate escape reads: decision 17, below)."""
    kinds = {kind: spoiled_record(plugin, kind) for kind in MALFORMED_KINDS}
    kinds.update({kind: UNREADABLE_RECORDS[kind] for kind in ("past-int64", "nested-too-deep", "huge-integer")})
    # 1200 levels: within what 3.12 and 3.13 decode, past 3.9-3.11's (jsonio.MOST_NESTED refuses it on all).
    return {**kinds, "nested-1200": b'{"capacity":' + b"[" * 1199 + b"]" * 1199 + b"}"}


BAD = list(bad_records("gpu"))


def bulk_reads(python: Python, space: PluginDir, names: list[str]) -> list[Any]:
    wants = {"gpu": {"prod_count_map": {"nvidia-3090": 1}}, "storage": {"storage": "1"}}[space.plugin]
    return [
        python.ok(space, "get-nodes-deploy-capacity", {"nodenames": names, "workload_resource": wants}),
        python.ok(space, "get-nodes-resource-info", {"nodenames": names}),
        python.ok(space, "get-most-idle-node", {"nodenames": names}),
        python.ok(space, "get-metrics", {"nodes": [{"podname": "p", "nodename": name} for name in names]}),
        python.ok(space, "get-metrics", {"podname": "p", "nodename": names[1]}),
    ]


_WITHOUT_BAD: dict[str, list[Any]] = {}


def without_bad(python: Python, plugin: str, names: list[str]) -> list[Any]:
    """The bulk reads where only ``good`` is stored, by the default python3 (once: every other is held to it)."""
    if plugin not in _WITHOUT_BAD:
        clean = Python("clean", REFERENCE, python.etcd, python.tmp / f"clean-{plugin}")
        space = clean.space(plugin)
        put_raw(space, "good", json.dumps(SEED[plugin]).encode())
        _WITHOUT_BAD[plugin] = bulk_reads(clean, space, names)
    return _WITHOUT_BAD[plugin]


def malformed_records(python: Python) -> None:
    names = ["good", *(f"bad-{kind}" for kind in BAD)]
    for number, plugin in enumerate(PLUGINS):
        spoiled = python.space(plugin)
        put_raw(spoiled, "good", json.dumps(SEED[plugin]).encode())
        for kind, record in bad_records(plugin).items():
            put_raw(spoiled, f"bad-{kind}", record)
        before = snapshot(spoiled)
        # Each bad record reads as no record at all: the same answers as where only ``good`` is stored.
        assert bulk_reads(python, spoiled, names) == without_bad(python, plugin, names)
        # Each kind read alone, by one plugin or the other (the bulk reads had every kind in both).
        for kind in BAD[number :: len(PLUGINS)]:
            verb = "get-node-resource-info"
            line = one_clean_line(python.call(spoiled, verb, {"nodename": f"bad-{kind}"}))
            assert line.startswith(f"resource-{plugin} {verb}: node bad-{kind}: stored record is unreadable: "), line
            assert line.endswith("(set-node-resource-info or remove-node replaces it)"), line
        assert snapshot(spoiled) == before
        # Decision 17: a lone surrogate escape reads as U+FFFD, and the node stays writable.
        stored, name = SURROGATE_RECORDS[plugin]
        put_raw(spoiled, "odd", stored.encode())
        assert name in json.dumps(python.ok(spoiled, "get-node-resource-info", {"nodename": "odd"}), ensure_ascii=False)
        change = {"gpu": {"prod_count_map": {"a100": 1}}, "storage": {"storage": 1}}[plugin]
        request = {"nodename": "odd", "resource": change, "delta": True, "incr": True}
        python.ok(spoiled, "set-node-resource-usage", request)
        written = raw_record(spoiled, "odd").decode("utf-8")  # strict: a write stores valid UTF-8
        assert name in written and "\\ud" not in written.lower()


@pytest.mark.parametrize("label", LABELS)
def test_every_malformed_record_is_a_node_without_capacity_in_bulk_reads_and_named_by_single_reads(
    label: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    everywhere(malformed_records, label, etcd, tmp_path)


# -- (b) truncated and garbled stdin ------------------------------------------------------------------------


def deep(depth: int) -> bytes:
    """A request whose object holds lists ``depth`` levels deep, itself included (under a key the verbs read,
    whose elements that are not objects they drop: decision 19 refuses a key they do not read)."""
    return b'{"nodename":"n1","workloads_resource":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


GARBLED_STDIN = {
    **MALFORMED_STDIN,
    # 3.13's json names a trailing comma itself, at the comma: read in the words of the others.
    b'{"nodenames":["n1",]}': "decode plugin input: Expecting value at offset 19",
    # 3.9 and 3.10 leave "digits" out of "(4300 digits)".
    b'{"nodename":"n1","deploy_count":1' + b"0" * 5000 + b"}": "decode plugin input: Exceeds the limit (4300 digits) "
    "for integer string conversion: value has 5001 digits",
    b'{"nodename":"n1","workloads_resource":'
    + b"[" * 100000
    + b"]" * 100000
    + b"}": "decode plugin input: nested too deeply",
    # Past 500 levels, refused on every interpreter (3.9-3.11 decode about 990, 3.12 1100 or more, 3.13 5000+).
    **{deep(depth): "decode plugin input: nested too deeply" for depth in (501, 1200, 5000)},
    deep(500): "",  # read
    b"\xef\xbb\xbf{}": "decode plugin input: Expecting value at offset 0",
    b" \n\t": "decode plugin input: EOF",
    b'{"nodename":"n1"}\x00': "",  # read: what follows the first value is ignored, as Go's decoder does
}


def garbled_stdin(python: Python) -> None:
    for plugin in PLUGINS:
        space = python.space(plugin)
        put_raw(space, "n1", json.dumps(SEED[plugin]).encode())
        before = snapshot(space)
        for stdin, start in GARBLED_STDIN.items():
            if not start:  # read, not refused
                assert python.call(space, "get-node-resource-info", raw=stdin).status == 0
                continue
            verb = {"gpu": "set-node-resource-usage"}.get(plugin, "get-node-resource-info")
            line = one_clean_line(python.call(space, verb, raw=stdin))
            assert line.startswith(f"resource-{plugin} {verb}: {start}"), line
        assert snapshot(space) == before


@pytest.mark.parametrize("label", LABELS)
def test_truncated_and_garbled_stdin_is_a_decode_error_that_touches_nothing(
    label: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    everywhere(garbled_stdin, label, etcd, tmp_path)


# -- (c) the config: files only PyYAML reads, and --config "" ------------------------------------------------


def odd_configs(python: Python) -> None:
    for case, (text, refusal) in ODD_CONFIGS.items():
        folder = python.tmp / f"config-{next(_spaces)}"
        folder.mkdir()
        (folder / "gpu.yaml").write_text(text)
        out = python.run("gpu", ["calculate-remap"], b"{}", folder)
        if refusal is None:
            assert (out.status, out.stderr) == (0, ""), (case, out)
        else:
            line = one_clean_line(out)
            assert line.startswith("resource-gpu calculate-remap: config gpu.yaml: ") and refusal in line, line
    # A member named by a host name ("localhost": maybe ::1 first, refused, then 127.0.0.1) is resolved in a
    # thread of its own within the dial's time (store/etcd/dial.py): a read of one node and one in bulk.
    space = python.space("gpu")
    put_raw(space, "n1", json.dumps(SEED["gpu"]).encode())
    space.path.joinpath("gpu.yaml").write_text(
        json.dumps({"etcd": {"machines": [python.etcd.url.replace("127.0.0.1", "localhost")], "prefix": space.prefix}})
    )
    for verb, request in (
        ("get-node-resource-info", {"nodename": "n1"}),
        ("get-nodes-resource-info", {"nodenames": ["n1", "n2"]}),
    ):
        out = python.call(space, verb, request)
        assert (out.status, out.stderr) == (0, "") and "nvidia-3090" in out.stdout, (verb, out)
    # A good file sits where both fallbacks would find it: an empty flag must not read it.
    folder = python.tmp / f"config-{next(_spaces)}"
    folder.mkdir()
    (folder / "gpu.yaml").write_text(json.dumps({"etcd": {"machines": ["http://127.0.0.1:2379"]}}))
    python.env["ERU_RESOURCE_CONFIG_PATH"] = str(folder / "gpu.yaml")
    for argv in (["--config", ""], ["--config="]):
        line = one_clean_line(python.run("gpu", [*argv, "calculate-remap"], b"{}", folder))
        assert line.startswith("resource-gpu calculate-remap: config: --config was given an empty path: "), line
    del python.env["ERU_RESOURCE_CONFIG_PATH"]


@pytest.mark.parametrize("label", LABELS)
def test_configs_only_pyyaml_reads_are_read_and_an_empty_config_flag_is_refused(
    label: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    everywhere(odd_configs, label, etcd, tmp_path)


# -- (d) the work bounds' refusals at the default limits ---------------------------------------------------

MANY_NODES = [f"node-{i}" for i in range(10001)]
REFUSALS: list[tuple[str, str, Any, tuple[str, ...]]] = [
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": bindings(300)}},
        ("300 volume bindings in one workload", "scheduler.max_workload_items of storage.yaml allows 100"),
    ),
    (
        "storage",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": bindings(30)}},
        ("30 volume bindings x deploy_count 10000 = 300000", "scheduler.max_deploy_work of storage.yaml allows 50000"),
    ),
    (
        "storage",
        "get-nodes-deploy-capacity",
        {"nodenames": [f"n{i}" for i in range(1000)], "workload_resource": {"volumes": bindings(100)}},
        ("100 volume bindings x nodes 1000 = 100000", "scheduler.max_deploy_work"),
    ),
    (
        "storage",
        "calculate-realloc",
        {"nodename": "n1", "workload_resource_request": {"volumes": bindings(101, "AUTO:/e{}:rw:1")}},
        ("101 volume bindings in one workload", "scheduler.max_workload_items"),
    ),
    (
        "gpu",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": products(500)},
        ("500 products in one workload", "scheduler.max_workload_items of gpu.yaml"),
    ),
    (
        "gpu",
        "calculate-deploy",
        {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": products(6)},
        ("6 products x deploy_count 10000 = 60000", "scheduler.max_deploy_work of gpu.yaml allows 50000"),
    ),
    *(
        (plugin, verb, {"nodenames": MANY_NODES, "workload_resource": {}}, ("10001 nodenames", limit))
        for plugin, verb, limit in (
            ("gpu", "get-nodes-resource-info", "scheduler.max_nodes_per_call of gpu.yaml allows 10000"),
            ("storage", "get-most-idle-node", "scheduler.max_nodes_per_call of storage.yaml allows 10000"),
        )
    ),
]
MAX_STDIN = LIMITS["max_stdin_bytes"][0]


def work_refusals(python: Python) -> None:
    spaces = {plugin: python.space(plugin) for plugin in PLUGINS}
    for space in spaces.values():
        put_raw(space, "n1", json.dumps(SEED[space.plugin]).encode())
    before = {plugin: snapshot(space) for plugin, space in spaces.items()}
    asked = [(plugin, verb, json.dumps(request).encode(), needles) for plugin, verb, request, needles in REFUSALS]
    too_long = (f"more than {MAX_STDIN} bytes on stdin", "scheduler.max_stdin_bytes of gpu.yaml")
    asked.append(("gpu", "calculate-remap", padded(MAX_STDIN + 1), too_long))
    for plugin, verb, stdin, needles in asked:
        line = one_clean_line(python.call(spaces[plugin], verb, raw=stdin))
        assert line.startswith(f"resource-{plugin} {verb}: request too large: "), line
        for needle in needles:
            assert needle in line, (needle, line)
    assert {plugin: snapshot(space) for plugin, space in spaces.items()} == before


@pytest.mark.parametrize("label", LABELS)
def test_work_past_the_default_limits_is_refused_in_one_line_naming_the_limit_and_its_key(
    label: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    everywhere(work_refusals, label, etcd, tmp_path)


# -- (e) etcd's replies spoiled on the way: writes decided and never doubled, one deadline --------------------

TOTAL_TIMEOUT = 1.5
WRITE_FAULTS = ["garbled-body", "cut-after-head"]  # the issue's: a scrambled reply, one cut short


@pytest.fixture
def proxy(etcd: DevEtcd) -> Iterator[FaultProxy]:
    with FaultProxy(etcd.port) as server:
        yield server


def spoiled_replies(python: Python) -> None:
    proxy = python.proxy
    assert proxy is not None
    timeouts = {"request_timeout": 1, "total_timeout": TOTAL_TIMEOUT}
    for plugin in PLUGINS:
        for fault in WRITE_FAULTS:
            space = python.space(plugin)
            space.configure(etcd={"machines": [proxy.url], "prefix": space.prefix, **timeouts})
            put_raw(space, "n1", json.dumps(SEED[plugin]).encode())
            proxy.rules, proxy.spoiled = [Rule(fault, "/v3/kv/txn", holding=b"request_put", times=1)], []
            out = python.call(space, "set-node-resource-usage", INCREMENT[plugin])
            assert proxy.spoiled == [fault]
            if out.status:  # read back and decided: a failure must say the outcome is unknown
                assert "whether the write applied is unknown" in one_clean_line(out), out
            else:
                assert out.stderr == "", out
            assert used(plugin, json.loads(raw_record(space, "n1"))) == 1, (fault, out)
            again = python.call(space, "set-node-resource-usage", INCREMENT[plugin])
            assert again.status == 0, again
            assert used(plugin, json.loads(raw_record(space, "n1"))) == 2, fault
    space = python.space("gpu")
    space.configure(etcd={"machines": [proxy.url], "prefix": space.prefix, **timeouts})
    put_raw(space, "n1", json.dumps(SEED["gpu"]).encode())
    proxy.rules, proxy.spoiled = [Rule("trickle", "/v3/kv/range")], []
    started = time.monotonic()
    line = one_clean_line(python.call(space, "get-node-resource-info", {"nodename": "n1"}))
    took = time.monotonic() - started
    assert took < TOTAL_TIMEOUT + 1, took
    assert "timed out" in line and "<proxy>" in python.answers[-1][3], line


@pytest.mark.parametrize("label", LABELS)
def test_a_spoiled_reply_to_a_write_is_decided_never_doubled_and_a_trickle_ends_by_the_deadline(
    label: str, etcd: DevEtcd, tmp_path: Path, proxy: FaultProxy
) -> None:
    everywhere(spoiled_replies, label, etcd, tmp_path, proxy)
