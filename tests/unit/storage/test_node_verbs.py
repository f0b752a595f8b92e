"""The storage node verbs' pure logic (storage/node_verbs.py), without etcd: the engine's storage total
and capacity changes."""

from __future__ import annotations

import pytest

from resource_extend.errors import PluginError
from resource_extend.storage.node_request import NodeRequest
from resource_extend.storage.node_verbs import new_capacity
from resource_extend.storage.payloads import storage_total, stored_form
from resource_extend.storage.record import NodeResource
from tests.support import FOUR, VDA, VDB, TiB, capacity_of


def test_engine_storage_total_reads_as_zero_when_absent() -> None:
    assert storage_total({}) == 0
    assert storage_total({"StorageTotal": 1e12}) == 10**12


def test_set_node_resource_info_sides_without_keys_keep_null_fields() -> None:
    assert stored_form(None, "usage").to_json() == {"volumes": None, "disks": None, "storage": 0}


def test_a_delta_request_adds_its_volumes_and_their_total() -> None:
    req = NodeRequest.parse({"volumes": ["/data4:1T"], "storage": "1T"})
    after = new_capacity(capacity_of(FOUR), req, None, delta=True, incr=True)
    assert after.storage == 6 * TiB and (after.volumes or {})["/data4"] == TiB


def test_a_delta_decrease_drops_the_volumes_that_reach_zero() -> None:
    grown = new_capacity(capacity_of(FOUR), None, NodeResource({"/data4": TiB}, [], TiB), True, True)
    shrunk = new_capacity(grown, None, NodeResource({"/data4": TiB}, [], TiB), True, False)
    assert shrunk.volumes == capacity_of(FOUR).volumes and shrunk.storage == 4 * TiB


def test_an_absolute_request_keeps_what_it_leaves_out() -> None:
    assert new_capacity(capacity_of(FOUR), NodeRequest.parse({}), None, False, False) == capacity_of(FOUR)
    after = new_capacity(capacity_of(FOUR), NodeRequest.parse({"volumes": ["/data4:2T"]}), None, False, True)
    assert after.volumes == {"/data4": 2 * TiB} and after.storage == 2 * TiB


def test_an_absolute_call_with_nothing_given_empties_the_capacity() -> None:
    assert new_capacity(capacity_of(FOUR), None, None, False, True) == NodeResource()


def test_rm_disks_drop_capacity_disks_but_not_with_delta() -> None:
    capacity = NodeResource.from_json({"volumes": {}, "disks": [VDA, VDB], "storage": 0})
    after = new_capacity(capacity, NodeRequest.parse({"rm-disks": "/dev/vdb"}), None, False, False)
    assert [d.device for d in after.disks or ()] == ["/dev/vda"]
    with pytest.raises(PluginError, match="invalid engine args"):
        new_capacity(capacity, NodeRequest.parse({"rm-disks": "/dev/vdb"}), None, True, True)
