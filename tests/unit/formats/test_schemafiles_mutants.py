"""schemafiles on the addresses a hand mutant let through (issue 37, docs/testing.md#mutant-sample-issue-37)."""

from __future__ import annotations

from pathlib import Path

import pytest

from resource_extend.formats.schemafiles import BASE, load, resolve


@pytest.mark.parametrize("address", ["../common.json", "storage/../../common.json", "gpu/../../schemas/common.json"])
def test_a_reference_that_climbs_out_of_the_schema_directory_is_refused(tmp_path: Path, address: str) -> None:
    # Inside tmp_path/schemas: each address names a JSON object outside it, which must not be read.
    (tmp_path / "schemas" / "storage").mkdir(parents=True)
    (tmp_path / "common.json").write_text("{}")
    (tmp_path / "schemas" / "common.json").write_text("{}")
    with pytest.raises(ValueError, match="is not a file under"):
        load(tmp_path / "schemas", BASE + address)
    with pytest.raises(ValueError, match="is not a file under"):
        resolve(tmp_path / "schemas", BASE + "storage/x.json", "../" + address + "#/definitions")
