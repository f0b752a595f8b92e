"""``make demo`` plays core end to end; its own checks (diffs found, then repaired, …) must hold."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import PLUGINS, ROOT, executable


def test_the_demo_plays_core_with_both_plugins() -> None:
    for plugin in PLUGINS:
        executable(plugin)
    done = subprocess.run(
        [sys.executable, "-m", "resource_extend_dev.demo", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
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
    summary = next(e["summary"] for e in events if "summary" in e)
    assert summary["node-1"]["gpu"]["usage"] == {"prod_count_map": {"nvidia-3090": 3}}


def test_the_demo_reads_as_json_and_prose_only_with_the_table_before_the_node_leaves() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "resource_extend_dev.demo"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "{'" not in text  # every value shown is JSON, never a Python repr
    assert text.index("=== Capacity and usage") < text.index("=== node-2 leaves")
    placeholder = text.index("fake-source:fake-destination:fake-flags:…")
    assert "placeholder" in text[placeholder - 100 : placeholder]
