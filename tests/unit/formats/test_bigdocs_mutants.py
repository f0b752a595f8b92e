"""bigdocs at the edges hand mutants moved (issue 37, docs/testing.md#mutant-sample-issue-37): each test names the
behaviour it pins; the mutant that survived without it is in the table there."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.formats import bigdocs, validation


def test_a_capacity_of_0_among_many_valid_entries_is_checked_on_a_representative_of_its_own() -> None:
    # More than ROWS entries are checked on one entry per signature: capacity 0 (below the schema's minimum
    # of 1) must not share the signature of capacity 1, or the valid first entry would answer for it.
    entries = {f"n{i}": {"capacity": 1, "usage": 0.5, "rate": 0.1, "weight": 1} for i in range(bigdocs.ROWS + 1)}
    entries["last"] = {"capacity": 0, "usage": 0.5, "rate": 0.1, "weight": 1}
    document = {"nodes_deploy_capacity_map": entries, "total": len(entries) - 1}
    refused = r"nodes_deploy_capacity_map\.last\.capacity must be bigger than or equal to 1"
    with pytest.raises(PluginError, match=refused):
        validation.check("storage", "get-nodes-deploy-capacity", "response", document)
