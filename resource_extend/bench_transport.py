"""Per-call cost of the two etcd transports, side by side (for ``make bench`` and docs/transport.md).

    python build.py && python build.py --grpc
    python -m resource_extend.bench_transport [--runs 20]

Each variant runs ``get-node-resource-info`` on one stored node through a built executable against the
same throwaway etcd, as core calls it (a process per call, cwd = the plugin directory). The variants
alternate (A, B, C, A, B, C, …) so that load on the machine hits them alike; the numbers are the median
and the 10th–90th percentile range of wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from resource_extend.conformance import write_config
from resource_extend.devetcd import DevEtcd

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "/bench-transport"
RECORD = {"capacity": {"prod_count_map": {"nvidia-3090": 8}}, "usage": {"prod_count_map": {"nvidia-3090": 2}}}


@dataclass(frozen=True)
class TransportCost:
    label: str
    median_ms: float
    p10_ms: float
    p90_ms: float


def measure(default_exe: str, grpc_exe: str, runs: int = 20) -> list[TransportCost]:
    """Median wall time of one get-node-resource-info call per variant; both executables are resource-gpu.

    The variants: the default build over the gateway, the grpc build over the gateway (what the bigger
    bundle alone costs) and the grpc build over grpc.
    """
    default_exe, grpc_exe = os.path.abspath(default_exe), os.path.abspath(grpc_exe)  # each call runs elsewhere
    variants = [
        ("gateway, default build", default_exe, "gateway"),
        ("gateway, grpc build", grpc_exe, "gateway"),
        ("grpc, grpc build", grpc_exe, "grpc"),
    ]
    request = json.dumps({"nodename": "n1"}).encode()
    # shiv leaves .pyc files out of the zip; Python writes them into the extraction directory on the first
    # call, as it does under core. With PYTHONDONTWRITEBYTECODE set every call would compile every module.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ERU_RESOURCE_CONFIG_PATH")}
    with DevEtcd() as etcd, tempfile.TemporaryDirectory(prefix="bench-transport-") as work:
        etcd.put(f"{PREFIX}/resource/gpu/n1", json.dumps(RECORD))
        dirs = []
        for i, (_, _, transport) in enumerate(variants):
            directory = os.path.join(work, str(i))
            os.mkdir(directory)
            write_config(directory, "gpu", etcd.url, PREFIX, {"etcd": _etcd(etcd.url, transport)})
            dirs.append(directory)
        seconds: list[list[float]] = [[] for _ in variants]
        for round_ in range(runs + 1):  # round 0 warms shiv's extraction and the page cache
            for i, (label, exe, _) in enumerate(variants):
                started = time.perf_counter()
                done = subprocess.run(
                    [exe, "get-node-resource-info"], input=request, cwd=dirs[i], env=env, capture_output=True
                )
                elapsed = time.perf_counter() - started
                if done.returncode != 0:
                    raise RuntimeError(f"{label}: exit {done.returncode}: {done.stderr.decode(errors='replace')}")
                if round_:
                    seconds[i].append(elapsed)
    return [_cost(label, sample) for (label, _, _), sample in zip(variants, seconds)]


def _etcd(url: str, transport: str) -> dict[str, object]:
    return {"machines": [url], "prefix": PREFIX, "transport": transport}


def _cost(label: str, sample: list[float]) -> TransportCost:
    ordered = sorted(sample)
    lo = ordered[int(0.1 * (len(ordered) - 1))]
    hi = ordered[int(0.9 * (len(ordered) - 1))]
    return TransportCost(label, statistics.median(ordered) * 1000, lo * 1000, hi * 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m resource_extend.bench_transport",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--default-exe", default=str(ROOT / "resource-gpu"), help="built by `python build.py`")
    parser.add_argument(
        "--grpc-exe", default=str(ROOT / "build" / "grpc" / "resource-gpu"), help="built by `python build.py --grpc`"
    )
    args = parser.parse_args(argv)
    for path, how in ((args.default_exe, "python build.py"), (args.grpc_exe, "python build.py --grpc")):
        if not os.access(path, os.X_OK):
            print(f"bench_transport: {path} is not built: run `{how}`", file=sys.stderr)
            return 2
    print(f"get-node-resource-info, one stored node, median of {args.runs} calls (10th–90th percentile):")
    for cost in measure(args.default_exe, args.grpc_exe, args.runs):
        print(f"  {cost.label:<24} {cost.median_ms:7.1f} ms  ({cost.p10_ms:.1f}–{cost.p90_ms:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
