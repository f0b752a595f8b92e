"""A third plugin of the counted shape, ``rdma`` (tests/rdma/), served end to end through the registry.

The proof that a plugin counted per model is a manifest, its schemas (GPU's, generated with its name) and its
vectors: every rdma vector is served in-process through the command line's own ``answer`` on a real etcd,
then judged as the conformance kit judges an executable (exit, stdout, stderr, the response schema, the
records left in etcd). Nothing outside tests/rdma/ and this file names the plugin.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

import plugins
from resource_extend.bounds import Bounds
from resource_extend.command import cli
from resource_extend.command.nodeverbs import verb_table
from resource_extend.config import Config, EtcdConfig
from resource_extend.plugin import Plugin
from resource_extend_dev.conformance import Outcome, load_cases, store_verdict, verdict, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.rdma import manifest

CASES = load_cases([str(manifest.VECTORS)])
CONFIG = Config("rdma.yaml", EtcdConfig(("http://127.0.0.1:1",), "/eru"), Bounds("rdma.yaml"))


@pytest.fixture(scope="module")
def rdma() -> Iterator[Plugin[Any]]:
    manifest.write_schemas()
    plugins.register("rdma", "tests.rdma.manifest")
    yield plugins.plugin("rdma")


def serve(plugin: Plugin[Any], case: dict[str, Any], etcd: DevEtcd, prefix: str, capfd: Any) -> Outcome:
    """One call as core makes it, in this process: the command line's ``answer`` for a serving verb, its
    dispatch (which writes to fd 1) for ``name`` and ``verbs``."""
    with tempfile.TemporaryDirectory(prefix="rdma-") as work:
        write_config(work, plugin.name, etcd.url, prefix, case.get("config"))
        for node, record in (case.get("store") or {}).items():
            etcd.put(f"{prefix}/resource/{plugin.name}/{node}", json.dumps(record))
        verb = verb_table(plugin).verb(case["verb"])
        if verb is None:
            capfd.readouterr()
            status = cli._dispatch(plugin, [case["verb"]])
            out = capfd.readouterr()
            return Outcome(status, out.out, out.err)
        stdin = (case["stdin_raw"] if "stdin_raw" in case else json.dumps(case.get("request", {}))).encode()
        status, response, error = cli.answer(plugin, verb, f"{work}/rdma.yaml", lambda _limit: stdin)
    return Outcome(status, response.decode(), error + "\n" if status else "")


def test_the_test_plugin_has_vectors_of_every_verb_it_serves(rdma: Plugin[Any]) -> None:
    assert {case["plugin"] for case in CASES} == {"rdma"}
    served = {verb.name for verb in verb_table(rdma).verbs} | {"name", "verbs"}
    assert {case["verb"] for case in CASES} == served


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_rdma_vector_served_through_the_registry(
    rdma: Plugin[Any], case: dict[str, Any], etcd: DevEtcd, prefix: str, capfd: Any
) -> None:
    why = verdict(case, serve(rdma, case, etcd, prefix, capfd)) or store_verdict(case, etcd, prefix)
    assert why is None, why


def test_the_test_plugin_speaks_its_own_name(rdma: Plugin[Any], etcd: DevEtcd, prefix: str, capfd: Any) -> None:
    # The words come from its record class: the refusal, the metrics and the explain limit name rdma.
    bad = {
        "id": "x",
        "plugin": "rdma",
        "verb": "add-node",
        "request": {"nodename": "n", "resource": {"prod_count_map": {"cx7": 0}}},
    }
    out = serve(rdma, bad, etcd, prefix, capfd)
    assert out.status == cli.EXIT_FAILED and out.stderr == (
        "resource-rdma add-node: count is less than or equal to zero: <product: cx7, count: 0>: invalid rdma map\n"
    )
    described = serve(rdma, {"plugin": "rdma", "verb": "get-metrics-description", "request": {}}, etcd, prefix, capfd)
    assert [row["name"] for row in json.loads(described.stdout)] == ["rdma_capacity", "rdma_used"]
    limit = rdma.calculate.explainer(
        rdma.payloads.request({"workload_resource": {}}, "workload_resource"), CONFIG.bounds
    )(rdma.record.empty())[1]
    assert limit.text.startswith("no RDMA NIC asked")


def test_the_test_plugin_is_not_shipped() -> None:
    assert "rdma" not in plugins.SHIPPED
