"""The reference's lenient field readers, which core's requests rely on."""

from __future__ import annotations

import pytest

from resource_extend import envelope
from resource_extend.errors import PluginError


def test_nodename_must_be_a_non_empty_string() -> None:
    for request in ({}, {"nodename": ""}, {"nodename": 7}):
        with pytest.raises(PluginError, match="node name is empty"):
            envelope.nodename(request)
