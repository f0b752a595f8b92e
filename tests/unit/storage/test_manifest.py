"""The storage plugin's manifest (storage/manifest.py) and the verb table built from it."""

from __future__ import annotations

import json

from resource_extend.storage.manifest import PLUGIN


def test_the_verb_table_matches_the_gpu_plugin() -> None:
    from resource_extend.counted.manifest import PLUGIN as GPU

    assert PLUGIN.advertised() == GPU.advertised()
    assert "calculate-remap" not in PLUGIN.advertised() and PLUGIN.verb("calculate-remap") is not None
    remap = PLUGIN.verb("calculate-remap")
    assert remap is not None and json.dumps(remap.run(None)) == '{"engine_params_map": {}}'  # type: ignore[arg-type]
