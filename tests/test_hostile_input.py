"""No input makes an executable crash, print a traceback, answer off-schema or change etcd on failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.formats.validation import check
from resource_extend_dev.conformance import run_plugin, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, SEED, STORE_VERBS, examples, executable

FIELDS = [
    "nodename",
    "nodenames",
    "resource",
    "resource_request",
    "workload_resource",
    "workload_resource_request",
    "workloads_resource",
    "info",
    "capacity",
    "usage",
    "delta",
    "incr",
    "deploy_count",
    "nodes",
    "podname",
    "prod_count_map",
    "volumes",
    "volumes-request",
    "storage",
    "disks",
    "rm-disks",
    "volume_plan_request",
]
VERBS = [*STORE_VERBS, "get-metrics-description", "calculate-remap"]

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["n1", "AUTO:/data:rw:1G", "/dev/vda:/:1:1:1:1", "1T", "-1", "nvidia-3090", "x" * 5000])
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=20,
)
requests = st.dictionaries(st.sampled_from(FIELDS), values, max_size=6).map(lambda d: {"nodename": "n1", **d})


def raw_inputs() -> st.SearchStrategy[bytes]:
    nested = st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n)
    return (
        requests.map(lambda r: json.dumps(r).encode())
        | st.binary(max_size=200)
        | nested
        | st.sampled_from(
            [b"", b"null", b"\xff\xfe{", b'{"nodename": "\xff\xfe"}', b"1e999", b'{"deploy_count": 1e400}']
        )
    )


@pytest.mark.parametrize("plugin", PLUGINS)
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from(VERBS), stdin=raw_inputs())
def test_any_stdin_is_answered_cleanly(plugin: str, verb: str, stdin: bytes, etcd: DevEtcd, tmp_path: Path) -> None:
    prefix = f"/hostile/{plugin}"
    write_config(str(tmp_path), plugin, etcd.url, prefix)
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    before = etcd.dump(prefix)
    out = run_plugin(executable(plugin), verb, stdin, str(tmp_path))
    assert out.status in (0, 128), out
    assert "Traceback" not in out.stderr + out.stdout
    if out.status == 0:
        assert out.stderr == ""
        check(plugin, verb, "response", json.loads(out.stdout))
    else:
        assert out.stdout == ""
        assert len(out.stderr.splitlines()) == 1
        assert etcd.dump(prefix) == before


@pytest.mark.parametrize("plugin", PLUGINS)
def test_huge_deploy_counts_are_refused_or_answered_without_exhausting_memory(
    plugin: str, etcd: DevEtcd, tmp_path: Path
) -> None:
    write_config(str(tmp_path), plugin, etcd.url, "/huge")
    request: dict[str, Any] = {"nodename": "n1", "deploy_count": 10**15, "workload_resource_request": {}}
    out = run_plugin(executable(plugin), "calculate-deploy", json.dumps(request).encode(), str(tmp_path), timeout=20)
    assert out.status in (0, 128)
    assert len(out.stdout) < 10**8
