"""Validators in a source checkout: compiled from schemas/ once per process, not on every check."""

from __future__ import annotations

from typing import Any

import fastjsonschema
import pytest

from resource_extend.errors import PluginError
from resource_extend.formats import validation


def test_a_checkout_compiles_each_validator_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Any] = []
    compile_ = fastjsonschema.compile

    def counting(schema: Any, **kw: Any) -> Any:
        compiled.append(schema)
        return compile_(schema, **kw)

    monkeypatch.setattr(fastjsonschema, "compile", counting)
    monkeypatch.setattr(validation, "_compiled", {})
    for _ in range(3):
        validation.check("gpu", "get-node-resource-info", "request", {"nodename": "n1"})
        with pytest.raises(PluginError, match="does not match the schema"):
            validation.check("gpu", "get-node-resource-info", "request", [])
    validation.check("gpu", "get-node-resource-info", "response", None)
    assert len(compiled) == 2  # one per verb and direction checked


# -- decision 19: an unknown key is named by its path, with the nearest key read ------------------------


@pytest.mark.parametrize(
    ("word", "near"),
    [
        ("prod_count", "prod_count_map"),
        ("nodname", "nodename"),
        ("nodenmae", "nodename"),  # a transposition is one edit
        ("NODENAME", "nodename"),  # case ignored
        ("volumes_request", "volumes-request"),
        ("storge", "storage"),
    ],
)
def test_nearest_is_the_key_fewest_edits_away(word: str, near: str) -> None:
    keys = ["nodename", "nodenames", "prod_count_map", "volumes-request", "volume-request", "storage", "storage-limit"]
    assert validation.nearest(word, keys) == near


def test_nearest_takes_the_fewest_edits_and_none_of_nothing() -> None:
    # The tie itself is test_validation_mutants.py's (the first written wins).
    assert validation.nearest("ab", ["bx", "ax"]) == "ax"
    assert validation.nearest("ab", []) is None
    assert validation.edits("", "abc") == 3 and validation.edits("ca", "ac") == 1


@pytest.mark.parametrize(
    ("plugin", "verb", "request_", "line"),
    [
        (
            "gpu",
            "calculate-deploy",
            {"workload_resource_request": {"prod_count_map": {}, "prod_count": {}}},
            "request.workload_resource_request.prod_count is an unknown key; did you mean prod_count_map?",
        ),
        (
            "gpu",
            "remove-node",
            {"nodename": "n1", "node": "n1"},
            "request.node is an unknown key; did you mean nodename?",
        ),
        (
            "gpu",
            "calculate-deploy",
            {"nodename": "n1", "deploy_count": 1, "workload_resource_request": {}, "zone": "a"},
            "request.zone is an unknown key; the keys read here: nodename, deploy_count, workload_resource_request",
        ),
        (
            "storage",
            "add-node",
            {"resource": {"disks": "/dev/vda:/:1:1:1:1"}},
            'request.resource.disks must be array or null, got "/dev/vda:/:1:1:1:1": a list is read here,'
            ' ["/dev/vda:/:1:1:1:1"]',
        ),
    ],
)
def test_a_refusal_names_the_path_and_the_fix(plugin: str, verb: str, request_: Any, line: str) -> None:
    with pytest.raises(PluginError) as refused:
        validation.check(plugin, verb, "request", request_)
    assert str(refused.value) == f"request does not match the schema: {line}"


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("nodenmae", "nodename"),  # a few edits
        ("node", "nodename"),  # half of it, inside it
        ("deploy", "deploy_count"),
        ("", None),
        ("a", None),
        ("ode", None),  # inside, but too little of it to be what was meant
        ("zone", None),
    ],
)
def test_a_guess_is_offered_only_for_a_near_miss(word: str, expected: str | None) -> None:
    assert validation.meant(word, ["nodename", "deploy_count", "workload_resource_request"]) == expected
