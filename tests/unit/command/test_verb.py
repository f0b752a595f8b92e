"""Both plugins' verb tables: the same verbs in the same order, every handler importable, each record type
reachable through the table."""

from __future__ import annotations

import json
from typing import Any

import pytest

import plugins as registry
from resource_extend.command.nodeverbs import verb_table
from resource_extend.gpu.manifest import PLUGIN as GPU
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.plugin import Plugin
from resource_extend.storage.manifest import PLUGIN as STORAGE
from tests.support import ROOT
from tests.support import storage_record as _storage

VECTORS = ROOT / "tests" / "vectors"


@pytest.mark.parametrize("plugin", [registry.plugin(name) for name in registry.SHIPPED], ids=list(registry.SHIPPED))
def test_every_verb_resolves_to_a_callable_handler(plugin: Plugin[Any]) -> None:
    for verb in verb_table(plugin).verbs:
        assert callable(verb.run), verb.name


def test_both_plugins_advertise_the_reference_verbs_in_order() -> None:
    expected = next(
        json.loads(line)["expect"]["response"]
        for line in (VECTORS / "protocol.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == "gpu/verbs/list"
    )
    gpu, storage = verb_table(GPU), verb_table(STORAGE)
    assert gpu.advertised() == storage.advertised() == expected
    assert "calculate-remap" in [v.name for v in gpu.verbs] and "calculate-remap" in [v.name for v in storage.verbs]


@pytest.mark.parametrize("plugin", [registry.plugin(name) for name in registry.SHIPPED], ids=list(registry.SHIPPED))
def test_the_lazily_imported_modules_offer_what_the_table_names(plugin: Plugin[Any]) -> None:
    # The table reaches these through a LazyModule, so a missing name would only fail when core calls it.
    for name in ("node_capacity", "commit_precheck", "plan_deploy", "plan_realloc", "explainer"):
        assert callable(getattr(plugin.calculate, name)), name
    from resource_extend.command import deploy

    for name in ("get_nodes_deploy_capacity", "calculate_deploy", "calculate_realloc"):
        assert callable(getattr(deploy, name)), name
    assert callable(plugin.metrics.render_rows)
    assert [row["name"] for row in plugin.metrics.describe(plugin.record)]
    assert callable(plugin.checks.check_record) and callable(plugin.checks.corrected)


def test_each_plugins_record_type_offers_problems() -> None:
    # A check of the whole store can go through the plugin's table: plugin.record.problems(record).
    from resource_extend.gpu.manifest import PLUGIN as GPU
    from resource_extend.storage.manifest import PLUGIN as STORAGE

    assert GPU.record.problems(GpuRecord({"a": 1}, {"a": 2}))
    assert STORAGE.record.problems(_storage({"storage": 1}, {"storage": 2}))
    assert GPU.record.problems(GPU.record.decode(b'{"capacity":{"prod_count_map":{"a":1}}}')) == []
