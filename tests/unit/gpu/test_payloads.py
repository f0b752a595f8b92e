"""The GPU request values: each reads its fields in the verb's order, so the first bad field is the one
refused (the tests below pin that order and each refusal); hypothesis feeds every value mutated requests
that pass the verb's schema, which each reads whole or refuses in one line.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.envelope.nodeinfo import NodeWorkloads
from resource_extend.envelope.plans import Deploy
from resource_extend.envelope.records import AddNode, SetInfo
from resource_extend.envelope.sides import SetCapacity
from resource_extend.errors import PluginError
from resource_extend.gpu import payloads
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.gpu.prodmap import MaybeMap
from tests.support import DeployLimits, examples, read_whole_or_refused, shared_request_readers

LIMITS = DeployLimits("gpu.yaml")
PAYLOADS = payloads.CountedPayloads(GpuRecord)


# -- each request value read whole (its lazy parts too) ----------------------------------------------


def new_add_node(req: dict[str, Any]) -> tuple[Any, ...]:
    value = AddNode.from_json(req, PAYLOADS)
    return value.nodename, value.info, value.record().capacity


def new_set_info(req: dict[str, Any]) -> tuple[Any, ...]:
    value = SetInfo.from_json(req, PAYLOADS)
    return value.nodename, value.record


def new_node_workloads(req: dict[str, Any]) -> tuple[Any, ...]:
    value = NodeWorkloads.from_json(req, PAYLOADS)
    return value.nodename, value.held()


# The stored card maps a set-node-resource-capacity request is applied to.
STORED: list[MaybeMap] = [None, {}, {"a": 1}]


def new_set_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
    value = SetCapacity.from_json(req, PAYLOADS)
    return (
        value.nodename,
        [payloads.cards(value.request, value.resource, stored) for stored in STORED],
        value.delta,
        value.incr,
    )


NEW = shared_request_readers(PAYLOADS, LIMITS)
READERS = {
    "add-node": new_add_node,
    "set-node-resource-info": new_set_info,
    "get-node-resource-info": new_node_workloads,
    "set-node-resource-capacity": new_set_capacity,
    **NEW,
}


# -- mutated requests ----------------------------------------------------------------------------------

counts: st.SearchStrategy[Any] = st.sampled_from([1, 2, 0, -1, 3.0, 2.5, "1", None, True, 2**63, -(2**63) - 1])
products = st.sampled_from(["nvidia-3090", "a", "", " ", "\u3000"])
count_maps = st.dictionaries(products, counts, max_size=3)
resources: st.SearchStrategy[Any] = st.one_of(
    st.fixed_dictionaries({"prod_count_map": count_maps | st.none() | st.sampled_from([[], "x", 1])}),
    st.just({}),
    st.sampled_from([None, [], "x", 0, {"other": 1}]),
)
scalars: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, False, 0, 1, -1, 2.5, "", "n1", "2", "-3", "x", [], {}, ["n1"], ["n1", 7]]
)
info = st.one_of(
    scalars,
    st.fixed_dictionaries(
        {},
        optional={
            "Type": scalars,
            "NCPU": scalars,
            "StorageTotal": scalars,
            "Resources": st.sampled_from([None, {}, {"gpu": None}, {"gpu": "!"}, {"gpu": "e30="}])
            | st.fixed_dictionaries({"gpu": resources}),
        },
    ),
)
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "nodename": scalars | st.just("node-1"),
    "nodenames": scalars | st.lists(scalars, max_size=3),
    "info": info,
    "resource": resources,
    "resource_request": resources,
    "capacity": resources,
    "usage": resources,
    "workloads_resource": st.lists(resources, max_size=3) | scalars,
    "workload_resource": resources,
    "workload_resource_request": resources,
    "delta": scalars,
    "incr": scalars,
    "deploy_count": scalars | st.sampled_from([11, 10, 10**6, 1e300]),
}
requests = st.fixed_dictionaries({}, optional=FIELDS)


@pytest.mark.parametrize("verb", sorted(READERS))
@settings(max_examples=examples(150), deadline=None)
@given(req=requests)
def test_a_request_the_schema_passes_is_read_whole_or_refused_in_one_line(verb: str, req: dict[str, Any]) -> None:
    read_whole_or_refused("gpu", verb, READERS[verb], req)


def test_add_node_decodes_its_cards_only_when_the_record_is_asked_for() -> None:
    # The store's "node already exists" must answer before a bad resource is refused, as in the reference.
    value = AddNode.from_json({"nodename": "n1", "resource": {"prod_count_map": {"a": -1}}}, PAYLOADS)
    assert value.nodename == "n1"
    with pytest.raises(PluginError, match="invalid gpu map"):
        value.record()


def test_add_node_refuses_a_bad_name_or_engine_report_at_once() -> None:
    with pytest.raises(PluginError, match="node name is empty"):
        AddNode.from_json({"resource": {"prod_count_map": {"a": -1}}}, PAYLOADS)
    with pytest.raises(PluginError, match=re.escape("info.NCPU")):
        AddNode.from_json({"nodename": "n1", "info": {"NCPU": "x"}}, PAYLOADS)


def test_add_node_falls_back_to_the_engines_report_when_the_request_has_no_cards() -> None:
    reported = {"nodename": "n1", "resource": {}, "info": {"Resources": {"gpu": {"prod_count_map": {"a": 2}}}}}
    assert AddNode.from_json(reported, PAYLOADS).record() == GpuRecord({"a": 2}, {})


def test_node_workloads_parse_only_when_held_is_asked_for() -> None:
    value = NodeWorkloads.from_json({"nodename": "n1", "workloads_resource": [{"prod_count_map": 5}, "x"]}, PAYLOADS)
    assert value.nodename == "n1"
    with pytest.raises(PluginError, match=re.escape("workloads_resource[].prod_count_map")):
        value.held()


def test_an_absolute_capacity_request_without_a_card_map_keeps_the_stored_cards() -> None:
    value = SetCapacity.from_json({"nodename": "n1", "resource_request": {}, "resource": None}, PAYLOADS)
    assert payloads.cards(value.request, value.resource, {"a": 4}) == {"a": 4}
    delta = SetCapacity.from_json({"nodename": "n1", "resource_request": {}, "delta": True}, PAYLOADS)
    assert payloads.cards(delta.request, delta.resource, {"a": 4}) == {}


def test_deploy_count_above_the_config_is_refused_before_the_cards_are_read() -> None:
    req = {"nodename": "n1", "deploy_count": 11, "workload_resource_request": {"prod_count_map": {"a": 0}}}
    with pytest.raises(PluginError, match=re.escape("scheduler.max_deploy_count of gpu.yaml is 10")):
        Deploy.from_json(req, LIMITS, PAYLOADS)
