"""Every conformance vector, through the built executables and a real etcd, as core calls them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from resource_extend_dev.conformance import check_case, load_cases
from resource_extend_dev.devetcd import DevEtcd
from tests.support import CASES, PLUGINS, VECTORS, executable


def test_every_plugin_in_the_repo_has_vectors() -> None:
    assert {c["plugin"] for c in CASES} == set(PLUGINS)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case: dict[str, Any], etcd: DevEtcd, prefix: str) -> None:
    why = check_case(case, executable(case["plugin"]), etcd, prefix)
    assert why is None, why


def test_every_vector_id_reads_plugin_verb_case() -> None:
    cases = load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl")))
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids), "vector ids repeat"
    form = "{plugin}/{verb}/[A-Za-z0-9][A-Za-z0-9.-]*"
    misnamed = [c["id"] for c in cases if not re.fullmatch(form.format(plugin=c["plugin"], verb=c["verb"]), c["id"])]
    assert not misnamed, f"not <plugin>/<verb>/<case>: {misnamed}"
