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
