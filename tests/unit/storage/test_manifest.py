"""The storage plugin's manifest (storage/manifest.py) and the verb table built from it."""

from __future__ import annotations

import json

from resource_extend.command.nodeverbs import verb_table
from resource_extend.storage.manifest import PLUGIN


def test_the_verb_table_matches_the_gpu_plugin() -> None:
    from resource_extend.gpu.manifest import PLUGIN as GPU

    table = verb_table(PLUGIN)
    assert table.advertised() == verb_table(GPU).advertised()
    assert "calculate-remap" not in table.advertised() and table.verb("calculate-remap") is not None
    remap = table.verb("calculate-remap")
    assert remap is not None and json.dumps(remap.run(None)) == '{"engine_params_map": {}}'  # type: ignore[arg-type]
