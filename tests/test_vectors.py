"""Every conformance vector, through the built executables and a real etcd, as core calls them."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend.conformance import check_case, load_cases
from resource_extend.devetcd import DevEtcd
from tests.conftest import PLUGINS, VECTORS, executable

CASES = [c for c in load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl"))) if c["plugin"] in PLUGINS]


def test_every_plugin_in_the_repo_has_vectors() -> None:
    assert {c["plugin"] for c in CASES} == set(PLUGINS)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case: dict[str, Any], etcd: DevEtcd, prefix: str) -> None:
    why = check_case(case, executable(case["plugin"]), etcd, prefix)
    assert why is None, why
