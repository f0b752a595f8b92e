"""``make bench``: the per-call cost of the executables, measured side by side in one run.

Every comparison alternates its commands (A, B, A, B, …) so that load on the machine hits both alike,
and reports the median and the spread (the 10th–90th percentile range) of wall time, and the peak
resident memory of each executable call. Nothing here is asserted: targets are printed with the figure.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import plugins as registry
from resource_extend_dev.devetcd import DevEtcd, binary

ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30
TIB = 1 << 40


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    stdin: bytes = b""


@dataclass
class Sample:
    seconds: list[float]
    peak_kib: list[int]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def spread_ms(self) -> tuple[float, float]:
        ordered = sorted(self.seconds)
        lo = ordered[int(0.1 * (len(ordered) - 1))]
        hi = ordered[int(0.9 * (len(ordered) - 1))]
        return lo * 1000, hi * 1000

    @property
    def peak_mib(self) -> float:
        return max(self.peak_kib, default=0) / 1024


def run_once(command: Command, cwd: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB, inflated by the parent's: see PEAK) and exit status of one call."""
    started = time.perf_counter()
    proc = subprocess.Popen(command.argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(command.stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, proc.returncode


# A child's peak RSS includes the memory of the process it was forked from (the peak carries over exec),
# so memory is measured once more per command, forked from a small interpreter (about 8 MiB itself)
# that writes its child's peak RSS (KiB) to the file named first.
PEAK = """
import os, resource, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status = os.waitpid(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def peak_kib(command: Command, cwd: str) -> tuple[int, int]:
    """Peak resident memory (KiB) and exit status of one call."""
    with tempfile.NamedTemporaryFile("r", suffix=".peak") as report:
        argv = [sys.executable, "-S", "-c", PEAK, report.name, *command.argv]
        _, _, status = run_once(Command(command.label, argv, command.stdin), cwd)
        text = Path(report.name).read_text().strip()
    return (int(text) if text else 0), status


def side_by_side(commands: list[Command], cwd: str, runs: int) -> list[Sample]:
    samples = [Sample([], []) for _ in commands]
    for command, sample in zip(commands, samples):  # also warms the page cache and shiv's extraction
        peak, status = peak_kib(command, cwd)
        if status != 0:
            raise SystemExit(f"bench: {command.label} failed (exit {status})")
        sample.peak_kib.append(peak)
    for _ in range(runs):
        for command, sample in zip(commands, samples):
            seconds, _, _ = run_once(command, cwd)
            sample.seconds.append(seconds)
    return samples


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []

    def add(self, what: str, sample: Sample, ratio: str = "", target: str = "") -> None:
        lo, hi = sample.spread_ms
        peak = f"{sample.peak_mib:.1f}" if sample.peak_kib else "—"
        self.rows.append((what, f"{sample.median_ms:.1f}", f"{lo:.1f}–{hi:.1f}", peak, ratio + target))

    def note(self, what: str, value: str, target: str = "") -> None:
        self.rows.append((what, value, "", "", target))

    def render(self) -> str:
        head = ("call", "median ms", "p10–p90 ms", "peak MiB", "ratio / target")
        widths = [max(len(r[i]) for r in [head, *self.rows]) for i in range(5)]
        lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |"]
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in self.rows]
        return "\n".join(lines)


def verdict(value: float, limit: float) -> str:
    return f" (target ≤ {limit:g}: {'met' if value <= limit else 'NOT met'})"


def storage_node(volumes: int, disks: int, seed: int = 0) -> dict[str, Any]:
    """``volumes`` × 1 TiB over ``disks`` disks; ``seed`` > 0 gives the node some usage, different per seed,
    so that a scale run measures the scheduler on varied nodes rather than one node repeated."""
    names = [f"/data{i}" for i in range(volumes)]
    per_disk = max(1, volumes // max(disks, 1))
    disk_list = [
        {"device": f"/dev/vd{chr(98 + d)}", "mounts": names[d * per_disk : (d + 1) * per_disk],
         "read_IOPS": 10000, "write_IOPS": 10000, "read_bps": 1 << 30, "write_bps": 1 << 30}
        for d in range(disks)
    ]  # fmt: skip
    used: dict[str, int] = {}
    if seed and names:
        for k in range(seed % 3 + 1):  # one to three volumes partly used
            used[names[(seed * 7 + k * 3) % volumes]] = ((seed * 7919 + k * 104729) % 900 + 1) * GIB
    return {
        "capacity": {"volumes": {n: TIB for n in names}, "disks": disk_list, "storage": volumes * TIB},
        "usage": {"volumes": used, "disks": [], "storage": sum(used.values())},
    }


GPU_NODE = {"capacity": {"prod_count_map": {"nvidia-3090": 8, "nvidia-a100": 4}}, "usage": {"prod_count_map": {}}}
STORAGE_REQUEST = {"volumes": ["AUTO:/dir0:rw:10G", "AUTO:/dir1:rw:20G"], "storage": "10G"}
VERB_REQUESTS = {
    "gpu": {
        "get-node-resource-info": {"nodename": "n1", "workloads_resource": None},
        "set-node-resource-usage": {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3090": 0}}, "delta": True,
                                    "incr": True, "resource_request": None, "workloads_resource": None},
        "calculate-deploy": {"nodename": "n1", "deploy_count": 2,
                             "workload_resource_request": {"prod_count_map": {"nvidia-3090": 2}}},
    },
    "storage": {
        "get-node-resource-info": {"nodename": "n1", "workloads_resource": None},
        # One byte more each call: a real guarded write (the GPU row above is the common call that changes
        # nothing, a workload without GPUs, which writes nothing).
        "set-node-resource-usage": {"nodename": "n1", "resource": {"storage": 1}, "delta": True, "incr": True,
                                    "resource_request": None, "workloads_resource": None},
        "calculate-deploy": {"nodename": "n1", "deploy_count": 2, "workload_resource_request": STORAGE_REQUEST},
    },
}  # fmt: skip


def seed(etcd: DevEtcd, prefix: str, plugin: str, records: dict[str, Any]) -> None:
    """Put the records, 128 to a transaction (etcd's default --max-txn-ops): 10,000 nodes in seconds. They are
    stored compact, as both the plugins and the Go reference marshal them."""
    ops = [
        {"request_put": {"key": _b64(f"{prefix}/resource/{plugin}/{node}"), "value": _b64(_compact(record))}}
        for node, record in records.items()
    ]
    for start in range(0, len(ops), 128):
        etcd.call("/v3/kv/txn", {"success": ops[start : start + 128]})


def _compact(record: Any) -> str:
    return json.dumps(record, separators=(",", ":"))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Bench:
    """What every section needs: the table it adds rows to, a seeded etcd, the built plugins, a scratch
    directory and the number of runs per command."""

    def __init__(self, table: Table, etcd: DevEtcd, plugins: list[str], runs: int, work: Path) -> None:
        self.table, self.etcd, self.plugins, self.runs, self.work = table, etcd, plugins, runs, work
        self.etcdctl = binary("etcdctl")

    def plugin_dir(self, name: str, plugin: str, prefix: str) -> str:
        cwd = self.work / name
        cwd.mkdir(exist_ok=True)
        # Block YAML as in the samples, so a call reads its config the way it does on an operator's host.
        (cwd / f"{plugin}.yaml").write_text(f'etcd:\n  machines:\n    - "{self.etcd.url}"\n  prefix: "{prefix}"\n')
        return str(cwd)

    def compare(self, what: str, ours: Sample, base: Sample, base_label: str, limit: float) -> None:
        """Two rows: ours, then the baseline with the ratio and the verdict."""
        ratio = ours.median_ms / base.median_ms
        self.table.add(what, ours)
        self.table.add(f"  {base_label}", base, f"ours {ratio:.2f}×", verdict(ratio, limit))


def store_verbs(bench: Bench) -> None:
    """Each store verb of each plugin against ``etcdctl get`` of the same key (a Go binary that starts,
    dials etcd and reads the key: the reference's floor) and against ``python3 -IS -c pass`` (the
    interpreter's own start, the floor of any Python plugin: it moves with the machine less than a ratio to
    a Go binary does)."""
    python3 = shutil.which("python3") or sys.executable
    for plugin in bench.plugins:
        cwd = bench.plugin_dir(plugin, plugin, "/bench")
        seed(bench.etcd, "/bench", plugin, {"n1": GPU_NODE if plugin == "gpu" else storage_node(8, 2)})
        exe = str(ROOT / f"resource-{plugin}")
        key = f"/bench/resource/{plugin}/n1"
        get = Command("etcdctl get", [bench.etcdctl, "--endpoints", bench.etcd.url, "get", key])
        floor = Command("python3 -IS -c pass", [python3, "-IS", "-c", "pass"])
        for verb, request in VERB_REQUESTS[plugin].items():
            ours = Command(verb, [exe, verb], json.dumps(request).encode())
            a, b, c = side_by_side([ours, get, floor], cwd, bench.runs)
            bench.compare(f"{plugin} {verb}", a, b, "etcdctl get (same key)", 1.5)
            ratio = a.median_ms / c.median_ms
            bench.table.add("  python3 -IS -c pass", c, f"ours {ratio:.2f}×", verdict(ratio, 1.6))


def capacity_scale(bench: Bench) -> None:
    """Storage get-nodes-deploy-capacity over 1000 nodes against ``etcdctl get --prefix`` of the same
    records (and explain of those nodes against the verb), then 10,000 nodes against 1,000."""
    if "storage" not in bench.plugins:
        return
    samples: dict[int, Sample] = {}
    for count, runs in ((1000, bench.runs), (10000, max(3, bench.runs // 5))):
        prefix = f"/scale{count}"
        cwd = bench.plugin_dir(f"scale{count}", "storage", prefix)
        names = [f"node-{i:05}" for i in range(count)]
        seed(bench.etcd, prefix, "storage", {n: storage_node(8, 2, i + 1) for i, n in enumerate(names)})
        request = {"nodenames": names, "workload_resource": STORAGE_REQUEST}
        ours = Command("capacity", [str(ROOT / "resource-storage"), "get-nodes-deploy-capacity"],
                       json.dumps(request).encode())  # fmt: skip
        if count == 1000:
            read = Command("etcdctl get --prefix", [bench.etcdctl, "--endpoints", bench.etcd.url, "get", "--prefix",
                                                    f"{prefix}/resource/storage/"])  # fmt: skip
            # explain over every node under the prefix: the verb's scheduling plus its words and a table.
            explain = Command("explain", [str(ROOT / "resource-storage"), "explain"],
                              json.dumps({"workload_resource": STORAGE_REQUEST}).encode())  # fmt: skip
            # The request without its flat storage: the volumes alone bound every node (with storage, the
            # bench's nodes run out of storage first, and VolumeCount.bounds spares them the passes); a node
            # goes through the passes unless its bounds meet.
            volumes_only = {"nodenames": names, "workload_resource": {"volumes": STORAGE_REQUEST["volumes"]}}
            passes = Command("capacity, volumes only", [str(ROOT / "resource-storage"), "get-nodes-deploy-capacity"],
                             json.dumps(volumes_only).encode())  # fmt: skip
            samples[count], base, why, scheduled = side_by_side([ours, read, explain, passes], cwd, runs)
            bench.compare("storage get-nodes-deploy-capacity, 1000 nodes", samples[count], base,
                          "etcdctl get --prefix (the same 1000 records)", 4)  # fmt: skip
            ratio = scheduled.median_ms / base.median_ms
            bench.table.add("  the same without storage: the volumes decide", scheduled,
                            f"{ratio:.2f}× etcdctl get --prefix")  # fmt: skip
            ratio = why.median_ms / samples[count].median_ms
            bench.table.add("storage explain, the same 1000 nodes", why,
                            f"{ratio:.2f}× get-nodes-deploy-capacity", verdict(ratio, 1.5))  # fmt: skip
        else:
            (samples[count],) = side_by_side([ours], cwd, runs)
            growth = samples[count].median_ms / samples[1000].median_ms
            bench.table.add(f"storage get-nodes-deploy-capacity, {count} nodes", samples[count],
                            f"{growth:.2f}× 1000 nodes", verdict(growth, 10))  # fmt: skip


# Issue 38's requests on one node of many volumes over two disks: five bindings each drawing IOPS, or
# bandwidth, or plain sizes (AUTO), and one exclusive (monopoly) binding drawing IOPS.
MANY_VOLUME_REQUESTS = {
    "IOPS": [f"AUTO:/d{i}:rw:1G:1:0:0:0" for i in range(5)],
    "BPS": [f"AUTO:/d{i}:rw:1G:0:0:1M:0" for i in range(5)],
    "exclusive": ["AUTO:/m:mrw:1G:1:0:0:0"],
    "AUTO": [f"AUTO:/d{i}:rw:1G" for i in range(5)],
}


def many_volumes(bench: Bench) -> None:
    """get-nodes-deploy-capacity and calculate-deploy on one node of 1,000 and of 10,000 volumes (2 disks), for
    each of issue 38's requests; the deploys plan 10,000 workloads of one binding (capacity's bound), which
    the commit bound refuses where core could not take the plan back (the row says so)."""
    if "storage" not in bench.plugins:
        return
    exe = str(ROOT / "resource-storage")
    for volumes in (1000, 10000):
        prefix = f"/volumes{volumes}"
        cwd = bench.plugin_dir(f"volumes{volumes}", "storage", prefix)
        seed(bench.etcd, prefix, "storage", {"n1": storage_node(volumes, 2, 1)})
        for kind, texts in MANY_VOLUME_REQUESTS.items():
            capacity = {"nodenames": ["n1"], "workload_resource": {"volumes": texts}}
            deploy = {"nodename": "n1", "deploy_count": 10000, "workload_resource_request": {"volumes": texts[:1]}}
            for verb, request in (("get-nodes-deploy-capacity", capacity), ("calculate-deploy", deploy)):
                command = Command(verb, [exe, verb], json.dumps(request).encode())
                peak, status = peak_kib(command, cwd)
                seconds = [run_once(command, cwd)[0] for _ in range(max(3, bench.runs // 5))]
                outcome = (
                    "" if status == 0 else " (refused: commit past max_stdin_bytes)" if status == 128 else " FAILED"
                )
                what = f"storage {verb}, {volumes} volumes, {kind}{' x 10000' if verb == 'calculate-deploy' else ''}"
                sample = Sample(seconds, [peak])
                met = max(seconds) <= 5 and sample.peak_mib <= 512
                bench.table.add(what + outcome, sample, "", f"≤ 5 s and 512 MiB: {'met' if met else 'NOT met'}")


def metrics_scale(bench: Bench) -> None:
    """get-metrics over 1000 nodes against ``etcdctl get --prefix`` of the same records (what the Go
    reference would have to read too), and against one node, in one call each."""
    for plugin in bench.plugins:
        prefix = f"/metrics-{plugin}"
        cwd = bench.plugin_dir(f"metrics-{plugin}", plugin, prefix)
        names = [f"node-{i:04}" for i in range(1000)]
        seed(bench.etcd, prefix, plugin, {n: GPU_NODE if plugin == "gpu" else storage_node(8, 2) for n in names})
        exe = str(ROOT / f"resource-{plugin}")
        nodes = [{"podname": "p", "nodename": n} for n in names]
        one = Command("one", [exe, "get-metrics"], json.dumps({"nodes": nodes[:1]}).encode())
        many = Command("many", [exe, "get-metrics"], json.dumps({"nodes": nodes}).encode())
        read = Command("etcdctl get --prefix", [bench.etcdctl, "--endpoints", bench.etcd.url, "get", "--prefix",
                                                f"{prefix}/resource/{plugin}/"])  # fmt: skip
        b, c, a = side_by_side([many, read, one], cwd, bench.runs)
        bench.compare(f"{plugin} get-metrics, 1000 nodes", b, c, "etcdctl get --prefix (the same 1000 records)", 1.5)
        ratio = b.median_ms / a.median_ms
        bench.table.add("  get-metrics, 1 node", a, f"ours {ratio:.2f}×")


def transports(bench: Bench) -> None:
    """The gateway and the gRPC transport side by side: builds the grpc executables if the extra is there."""
    if "gpu" not in bench.plugins:
        return
    table, etcd, work = bench.table, bench.etcd, bench.work
    out = work / "grpc-build"
    built = subprocess.run([sys.executable, str(ROOT / "build.py"), "--grpc", "--out", str(out), "gpu"],
                           capture_output=True, text=True)  # fmt: skip
    if built.returncode != 0:
        table.note("transports: grpc build unavailable", "—", " (in the checkout: pip install '.[grpc]')")
        return
    seed(etcd, "/transport", "gpu", {"n1": GPU_NODE})
    request = json.dumps({"nodename": "n1"}).encode()
    commands: list[Command] = []
    for label, exe, transport in [
        ("gpu get-node-resource-info, gateway, default build", ROOT / "resource-gpu", "gateway"),
        ("  gateway, grpc build (the bigger bundle alone)", out / "resource-gpu", "gateway"),
        ("  grpc transport, grpc build", out / "resource-gpu", "grpc"),
    ]:
        config = work / f"transport-{transport}-{len(commands)}.yaml"
        config.write_text(
            json.dumps({"etcd": {"machines": [etcd.url], "prefix": "/transport", "transport": transport}})
        )
        commands.append(Command(label, [str(exe), "--config", str(config), "get-node-resource-info"], request))
    samples = side_by_side(commands, str(work), bench.runs)
    for command, sample in zip(commands, samples):
        ratio = f"{sample.median_ms / samples[0].median_ms:.2f}× gateway" if sample is not samples[0] else ""
        table.add(command.label, sample, ratio)


def in_process(table: Table, profile: bool) -> str:
    """The storage scheduler's capacity count without a process around it: single nodes (µs), and the
    1000 nodes of the scale section (ms), profiled."""
    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.disk import Disk
    from resource_extend.storage.record import NodeResource, StorageRecord
    from resource_extend.storage.scheduler.count import VolumeCount, volume_capacity

    def on(volumes: dict[str, int], used: dict[str, int], disks: list[Disk], used_disks: list[Disk]) -> StorageRecord:
        return StorageRecord(NodeResource(volumes, disks), NodeResource(used, used_disks))

    twelve = {f"/data{i}": TIB for i in range(12)}
    eight = {f"/data{i}": TIB for i in range(8)}
    cases = {
        "scheduler capacity, 8 × 1 TiB, the scale request": (eight, ["AUTO:/a:rw:10G", "AUTO:/b:rw:20G"]),
        "scheduler capacity, 12 × 1 TiB, 2 normal": (twelve, ["AUTO:/a:rw:1G", "AUTO:/b:rw:2G"]),
        "same, mixed normal and monopoly": (
            twelve,
            ["AUTO:/a:rw:1G", "AUTO:/b:rw:2G", "AUTO:/m:mrw:100G", "AUTO:/n:mrw:200G"],
        ),
    }
    for label, (volumes, texts) in cases.items():
        bindings = [VolumeBinding.parse(t) for t in texts]
        seconds = []
        for _ in range(50):
            started = time.perf_counter()
            count = volume_capacity(on(volumes, {}, [], []), bindings, 10000)
            seconds.append((time.perf_counter() - started) * 1000)  # shown in the ms column as µs
        table.add(f"{label}, bound 10000 (in-process, µs) → {count}", Sample(seconds, []))

    nodes: list[tuple[dict[str, int], dict[str, int], list[Disk], list[Disk]]] = []
    for i in range(1000):
        record = storage_node(8, 2, i + 1)
        disks = [Disk(d["device"], d["mounts"], d["read_IOPS"], d["write_IOPS"], d["read_bps"], d["write_bps"])
                 for d in record["capacity"]["disks"]]  # fmt: skip
        nodes.append((record["capacity"]["volumes"], record["usage"]["volumes"], disks, []))
    bindings = [VolumeBinding.parse(t) for t in STORAGE_REQUEST["volumes"]]

    def scale() -> int:
        # As get-nodes-deploy-capacity runs it: the request classified once, then node after node.
        count = VolumeCount(bindings)
        return sum(count.capacity(on(*node), 10000) for node in nodes)

    seconds = []
    for _ in range(5):
        started = time.perf_counter()
        total = scale()
        seconds.append(time.perf_counter() - started)
    table.add(f"scheduler capacity of the 1000 scale nodes (in-process) → {total}", Sample(seconds, []))
    if not profile:
        return ""
    profiler = cProfile.Profile()
    profiler.enable()
    scale()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(8)
    return "\n### profile: scheduler capacity of the 1000 scale nodes\n" + "\n".join(out.getvalue().splitlines()[:24])


def silent_first_endpoint(bench: Bench) -> None:
    """A call whose first endpoint accepts and never answers: the staggered race's cost (issue 11)."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    try:
        if "gpu" not in bench.plugins:
            return
        cwd = bench.work / "silent-first"
        cwd.mkdir()
        machines = [f"http://127.0.0.1:{silent.getsockname()[1]}", bench.etcd.url]
        (cwd / "gpu.yaml").write_text(json.dumps({"etcd": {"machines": machines, "prefix": "/bench"}}))
        request = json.dumps({"nodename": "n1"}).encode()
        command = Command("silent first", [str(ROOT / "resource-gpu"), "get-node-resource-info"], request)
        (sample,) = side_by_side([command], str(cwd), bench.runs)
        bench.table.add(
            "gpu get-node-resource-info, silent first endpoint", sample, "", verdict(sample.median_ms, 1000)
        )
    finally:
        silent.close()


# The sections of one run, in order; a new comparison is one more function here.
SECTIONS: list[Callable[[Bench], None]] = [
    store_verbs,
    capacity_scale,
    many_volumes,
    metrics_scale,
    transports,
    silent_first_endpoint,
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m resource_extend_dev.bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="measured runs per command (default 15)")
    parser.add_argument("--no-profile", action="store_true", help="skip the scheduler profile")
    parser.add_argument(
        "--only", action="append", choices=[f.__name__ for f in SECTIONS], help="run only these sections"
    )
    args = parser.parse_args(argv)
    plugins = [p for p in registry.SHIPPED if (ROOT / f"resource-{p}").exists()]
    if not plugins:
        raise SystemExit("bench: no executable built; run make build")
    interpreter = _real_python3_first()
    table = Table()
    work = Path(tempfile.mkdtemp(prefix="resource-extend-bench-"))
    try:
        with DevEtcd() as etcd:
            bench = Bench(table, etcd, plugins, args.runs, work)
            for section in SECTIONS:
                if not args.only or section.__name__ in args.only:
                    section(bench)
        profile = in_process(table, not args.no_profile) if "storage" in plugins and not args.only else ""
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")  # fmt: skip
    print(f"machine: {os.cpu_count()} cores, {cpu}; Python {sys.version.split()[0]}; {args.runs} runs per command")
    print(f"load average before/after: {LOAD_BEFORE} / {_load()}")
    print(f"python3 the executables start: {interpreter}\n")
    print(table.render())
    if profile:
        print(profile)
    return 0


def _real_python3_first() -> str:
    """Put a real interpreter first on PATH when ``python3`` there is a version manager's shim script.

    The default build finds ``python3`` on PATH at each call; a shim (pyenv's) adds ~80 ms and dozens of
    processes to each, which is the host's cost, not the plugin's (docs/installation.md: bake the
    interpreter in on such hosts). Measured as issue 13 did: the real interpreter first on PATH.
    """
    found = shutil.which("python3")
    if found is None:
        return "none on PATH"
    with open(found, "rb") as f:
        is_binary = f.read(4) == b"\x7fELF"
    if is_binary:
        return found
    real = Path(sys.executable).resolve()
    if not (real.parent / "python3").exists():
        return f"{found} (a shim: the figures include its cost)"
    os.environ["PATH"] = f"{real.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return f"{shutil.which('python3')} (PATH had the shim {found} first; moved {real.parent} ahead of it)"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


LOAD_BEFORE = _load()


if __name__ == "__main__":
    sys.exit(main())
