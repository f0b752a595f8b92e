"""Every conformance vector, through the built executables and a real etcd, as core calls them."""

from __future__ import annotations

from typing import Any

import pytest

from resource_extend_dev.conformance import check_case
from resource_extend_dev.devetcd import DevEtcd
from tests.support import CASES, PLUGINS, executable


def test_every_plugin_in_the_repo_has_vectors() -> None:
    assert {c["plugin"] for c in CASES} == set(PLUGINS)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case: dict[str, Any], etcd: DevEtcd, prefix: str) -> None:
    why = check_case(case, executable(case["plugin"]), etcd, prefix)
    assert why is None, why
