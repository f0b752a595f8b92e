"""``make demo`` plays core end to end; its own checks (diffs found, then repaired, …) must hold."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, executable


def test_the_demo_plays_core_with_both_plugins() -> None:
    for plugin in ("gpu", "storage"):
        executable(plugin)
    done = subprocess.run(
        [sys.executable, "-m", "resource_extend.demo", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    calls = [(e["plugin"], e["verb"]) for e in events if "verb" in e]
    for expected in [
        ("gpu", "add-node"),
        ("storage", "calculate-deploy"),
        ("storage", "calculate-realloc"),
        ("gpu", "fix-node-resource"),
        ("storage", "get-metrics"),
        ("storage", "remove-node"),
    ]:
        assert expected in calls
    summary = events[-1]["summary"]
    assert summary["node-1"]["gpu"]["usage"] == {"prod_count_map": {"nvidia-3090": 3}}
