"""Every conformance vector against a real etcd: each served in-process through the command line's own entry
(``cli.answer``: config, stdin, schemas, verb, store), and a sample through the built executables as core calls
them (one success and one failure per verb, and every raw-stdin case; test_interpreters.py runs the sample
under every python3 the machine has, test_grpc_transport.py one case per store verb over gRPC)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import check_case, load_cases
from resource_extend_dev.devetcd import DevEtcd
from tests.support import CASES, PLUGINS, TABLES, VECTORS, check_case_in_process, executable, executable_cases

# name and verbs are answered by the command line before any call is served: through the executables only.
SERVED = [c for c in CASES if c["verb"] not in ("name", "verbs")]
THROUGH_EXECUTABLES = executable_cases()


def test_every_plugin_in_the_repo_has_vectors() -> None:
    assert {c["plugin"] for c in CASES} == set(PLUGINS)


@pytest.mark.parametrize("case", SERVED, ids=[c["id"] for c in SERVED])
def test_vector(case: dict[str, Any], etcd: DevEtcd, prefix: str, tmp_path: Path) -> None:
    why = check_case_in_process(case, etcd, prefix, tmp_path)
    assert why is None, why


@pytest.mark.parametrize("case", THROUGH_EXECUTABLES, ids=[c["id"] for c in THROUGH_EXECUTABLES])
def test_vector_through_the_executable(case: dict[str, Any], etcd: DevEtcd, prefix: str) -> None:
    why = check_case(case, executable(case["plugin"]), etcd, prefix)
    assert why is None, why


def test_every_vector_is_served_and_every_verb_runs_through_the_executables() -> None:
    assert all(c in THROUGH_EXECUTABLES for c in CASES if c not in SERVED)
    assert all(TABLES[c["plugin"]].verb(c["verb"]) is not None for c in SERVED)
    assert {(c["plugin"], c["verb"]) for c in THROUGH_EXECUTABLES} == {(c["plugin"], c["verb"]) for c in CASES}


def test_every_vector_id_reads_plugin_verb_case() -> None:
    cases = load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl")))
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids), "vector ids repeat"
    form = "{plugin}/{verb}/[A-Za-z0-9][A-Za-z0-9.-]*"
    misnamed = [c["id"] for c in cases if not re.fullmatch(form.format(plugin=c["plugin"], verb=c["verb"]), c["id"])]
    assert not misnamed, f"not <plugin>/<verb>/<case>: {misnamed}"
