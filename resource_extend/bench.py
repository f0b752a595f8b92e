"""``make bench``: the per-call cost of the executables, measured side by side in one run.

Every comparison alternates its commands (A, B, A, B, …) so that load on the machine hits both alike,
and reports the median and the spread (the 10th–90th percentile range) of wall time, and the peak
resident memory of each executable call. Nothing here is asserted: targets are printed with the figure.
"""

from __future__ import annotations

import argparse
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
from typing import Any

from resource_extend.conformance import write_config
from resource_extend.devetcd import DevEtcd, binary

ROOT = Path(__file__).resolve().parent.parent
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


def empty_pyz(work: Path) -> str:
    """An executable that does nothing, built by the same build code, shiv and interpreter."""
    sys.path.insert(0, str(ROOT))
    import build

    site = work / "empty-site"
    (site / "emptyapp").mkdir(parents=True)
    (site / "emptyapp" / "__init__.py").write_text("def main():\n    pass\n")
    target = work / "empty-pyz"
    subprocess.run([sys.executable, "-m", "shiv", "--site-packages", str(site), "-e", "emptyapp:main", "-p",
                    "/usr/bin/env python3", "-o", str(work / "empty.shiv"), "--reproducible"],
                   check=True, capture_output=True)  # fmt: skip
    build.rewrite_main(work / "empty.shiv", target)
    return str(target)


def storage_node(volumes: int, disks: int) -> dict[str, Any]:
    names = [f"/data{i}" for i in range(volumes)]
    per_disk = max(1, volumes // max(disks, 1))
    disk_list = [
        {"device": f"/dev/vd{chr(98 + d)}", "mounts": names[d * per_disk : (d + 1) * per_disk],
         "read_IOPS": 10000, "write_IOPS": 10000, "read_bps": 1 << 30, "write_bps": 1 << 30}
        for d in range(disks)
    ]  # fmt: skip
    return {
        "capacity": {"volumes": {n: TIB for n in names}, "disks": disk_list, "storage": volumes * TIB},
        "usage": {"volumes": {}, "disks": [], "storage": 0},
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
        "set-node-resource-usage": {"nodename": "n1", "resource": {"storage": 0}, "delta": True, "incr": True,
                                    "resource_request": None, "workloads_resource": None},
        "calculate-deploy": {"nodename": "n1", "deploy_count": 2, "workload_resource_request": STORAGE_REQUEST},
    },
}  # fmt: skip


def seed(etcd: DevEtcd, prefix: str, plugin: str, records: dict[str, Any]) -> None:
    for node, record in records.items():
        etcd.put(f"{prefix}/resource/{plugin}/{node}", json.dumps(record))


def per_call(table: Table, etcd: DevEtcd, plugins: list[str], runs: int, work: Path) -> None:
    etcdctl = binary("etcdctl")
    floor = empty_pyz(work)
    for plugin in plugins:
        cwd = work / plugin
        cwd.mkdir()
        write_config(str(cwd), plugin, etcd.url, "/bench")
        seed(etcd, "/bench", plugin, {"n1": GPU_NODE if plugin == "gpu" else storage_node(8, 2)})
        exe = str(ROOT / f"resource-{plugin}")
        get = Command("etcdctl get", [etcdctl, "--endpoints", etcd.url, "get", f"/bench/resource/{plugin}/n1"])
        empty = Command("empty pyz", [floor])
        for verb, request in VERB_REQUESTS[plugin].items():
            ours = Command(verb, [exe, verb], json.dumps(request).encode())
            a, b, c = side_by_side([ours, get, empty], str(cwd), runs)
            table.add(f"{plugin} {verb}", a)
            table.add("  etcdctl get (same key)", b, f"ours/etcdctl {a.median_ms / b.median_ms:.2f}×",
                      verdict(a.median_ms / b.median_ms, 3.0))  # fmt: skip
            table.add("  empty shiv pyz", c, f"ours/empty {a.median_ms / c.median_ms:.2f}×",
                      verdict(a.median_ms / c.median_ms, 1.5))  # fmt: skip


def scale(table: Table, etcd: DevEtcd, plugins: list[str], runs: int, work: Path) -> None:
    if "storage" in plugins:
        cwd = work / "scale-storage"
        times = {}
        for count in (1, 100, 1000):
            prefix = f"/scale{count}"
            cwd.mkdir(exist_ok=True)
            write_config(str(cwd), "storage", etcd.url, prefix)
            names = [f"node-{i:04}" for i in range(count)]
            seed(etcd, prefix, "storage", {n: storage_node(8, 2) for n in names})
            request = {"nodenames": names, "workload_resource": STORAGE_REQUEST}
            cmd = Command("capacity", [str(ROOT / "resource-storage"), "get-nodes-deploy-capacity"],
                          json.dumps(request).encode())  # fmt: skip
            (sample,) = side_by_side([cmd], str(cwd), max(3, runs // 3))
            times[count] = sample.median_ms
            target = verdict(sample.median_ms / 1000, 2.0) if count == 1000 else ""
            table.add(f"storage get-nodes-deploy-capacity, {count} node(s)", sample, "", target.replace("≤ 2", "≤ 2 s"))
        growth = times[1000] / times[100]
        table.note("  growth 100 → 1000 nodes", f"{growth:.2f}×", verdict(growth, 12))
    for plugin in plugins:
        cwd = work / f"metrics-{plugin}"
        cwd.mkdir()
        prefix = f"/metrics-{plugin}"
        write_config(str(cwd), plugin, etcd.url, prefix)
        names = [f"node-{i:04}" for i in range(1000)]
        seed(etcd, prefix, plugin, {n: GPU_NODE if plugin == "gpu" else storage_node(8, 2) for n in names})
        exe = str(ROOT / f"resource-{plugin}")
        one = Command(
            "one", [exe, "get-metrics"], json.dumps({"nodes": [{"podname": "p", "nodename": names[0]}]}).encode()
        )
        many = Command("many", [exe, "get-metrics"],
                       json.dumps({"nodes": [{"podname": "p", "nodename": n} for n in names]}).encode())  # fmt: skip
        a, b = side_by_side([one, many], str(cwd), max(5, runs // 2))
        table.add(f"{plugin} get-metrics, 1 node", a)
        table.add(f"{plugin} get-metrics, 1000 nodes", b, f"{b.median_ms / a.median_ms:.2f}× one node",
                  verdict(b.median_ms / a.median_ms, 2.0))  # fmt: skip


def transports(table: Table, etcd: DevEtcd, runs: int, work: Path) -> None:
    """The gateway and the gRPC transport side by side: builds the grpc executables if the extra is there."""
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
    samples = side_by_side(commands, str(work), runs)
    for command, sample in zip(commands, samples):
        ratio = f"{sample.median_ms / samples[0].median_ms:.2f}× gateway" if sample is not samples[0] else ""
        table.add(command.label, sample, ratio)


def in_process(table: Table, profile: bool) -> str:
    from resource_extend.storage.binding import VolumeBinding
    from resource_extend.storage.scheduler import volume_capacity

    volumes = {f"/data{i}": TIB for i in range(12)}
    cases = {
        "scheduler capacity, 12 × 1 TiB, bound 10000, 2 normal": ["AUTO:/a:rw:1G", "AUTO:/b:rw:2G"],
        "same, mixed normal and monopoly": ["AUTO:/a:rw:1G", "AUTO:/b:rw:2G", "AUTO:/m:mrw:100G", "AUTO:/n:mrw:200G"],
    }
    report = ""
    for label, texts in cases.items():
        bindings = [VolumeBinding.parse(t) for t in texts]
        seconds = []
        for _ in range(5):
            started = time.perf_counter()
            count = volume_capacity(volumes, {}, [], [], bindings, 10000)
            seconds.append(time.perf_counter() - started)
        table.add(f"{label} (in-process) → {count}", Sample(seconds, []))
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            volume_capacity(volumes, {}, [], [], bindings, 10000)
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(8)
            report += f"\n### profile: {label}\n" + "\n".join(out.getvalue().splitlines()[:30]) + "\n"
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m resource_extend.bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="measured runs per command (default 15)")
    parser.add_argument("--no-profile", action="store_true", help="skip the scheduler profile")
    args = parser.parse_args(argv)
    plugins = [p for p in ("gpu", "storage") if (ROOT / f"resource-{p}").exists()]
    if not plugins:
        raise SystemExit("bench: no executable built; run make build")
    table = Table()
    work = Path(tempfile.mkdtemp(prefix="resource-extend-bench-"))
    try:
        with DevEtcd() as etcd:
            per_call(table, etcd, plugins, args.runs, work)
            scale(table, etcd, plugins, args.runs, work)
            if "gpu" in plugins:
                transports(table, etcd, args.runs, work)
        profile = in_process(table, not args.no_profile) if "storage" in plugins else ""
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU")  # fmt: skip
    print(f"machine: {os.cpu_count()} cores, {cpu}; Python {sys.version.split()[0]}; {args.runs} runs per command\n")
    print(table.render())
    if profile:
        print(profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
