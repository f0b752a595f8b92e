"""The conformance kit tells a conforming plugin from a broken one (it judges third parties' executables)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import check_case
from resource_extend_dev.devetcd import DevEtcd
from tests.support import ROOT, executable

CASE: dict[str, Any] = {
    "id": "kit/remap",
    "plugin": "gpu",
    "verb": "calculate-remap",
    "store": {},
    "request": {"nodename": "n1"},
    "expect": {"exit": 0, "response": {"engine_params_map": {}}},
}


def fake_plugin(tmp_path: Path, stdout: str, stderr: str = "", status: int = 0) -> str:
    script = tmp_path / "resource-gpu"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '%s' '{stdout}'\nprintf '%s' '{stderr}' >&2\nexit {status}\n")
    script.chmod(0o755)
    return str(script)


def test_the_real_executable_passes(etcd: DevEtcd, prefix: str) -> None:
    assert check_case(CASE, executable("gpu"), etcd, prefix) is None


@pytest.mark.parametrize(
    ("stdout", "stderr", "status", "why"),
    [
        ('{"engine_params_map":null}', "", 0, "response"),
        ('{"engine_params_map":{}}', "warning", 0, "stderr not empty"),
        ("", "boom", 3, "exit 3"),
        ("not json", "", 0, "not JSON"),
    ],
)
def test_a_broken_plugin_fails_with_the_reason(
    stdout: str, stderr: str, status: int, why: str, tmp_path: Path, etcd: DevEtcd, prefix: str
) -> None:
    verdict = check_case(CASE, fake_plugin(tmp_path, stdout, stderr, status), etcd, prefix)
    assert verdict is not None and why in verdict


def test_a_response_outside_the_schema_fails_even_when_the_vector_only_checks_a_subset(
    tmp_path: Path, etcd: DevEtcd, prefix: str
) -> None:
    subset = {**CASE, "match": "subset", "expect": {"exit": 0, "response": {}}}
    verdict = check_case(subset, fake_plugin(tmp_path, '{"engine_params_map":{},"extra":1}'), etcd, prefix)
    assert verdict is not None and "schema" in verdict


def test_the_command_line_prints_a_verdict_per_case_and_the_totals() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "resource_extend_dev.conformance",
            "--gpu",
            executable("gpu"),
            "-k",
            "gpu/name/",
            str(ROOT / "tests" / "vectors" / "protocol.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "1 passed, 0 failed"
    assert "ok   gpu/name/gpu" in done.stdout


def test_the_kit_runs_the_checkouts_vectors_from_any_directory_and_names_a_missing_file_in_one_line(
    tmp_path: Path,
) -> None:
    kit = str(ROOT / ".venv" / "bin" / "resource-extend-conformance")
    done = subprocess.run([kit, "--gpu", executable("gpu"), "-k", "gpu/name/"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "ok   gpu/name/gpu\n1 passed, 0 failed\n"), done
    missing = subprocess.run([kit, "--gpu", executable("gpu"), "tests/vectors/protocol.jsonl"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing
    assert missing.stderr.startswith("resource-extend-conformance: no vector file tests/vectors/protocol.jsonl")
