"""The GPU request values read what the handlers read from the request dict before them, and refuse what
they refused with the same message, first failure first.

``old_*`` below are the handlers' reading as it was, step by step; hypothesis feeds both the same
mutated requests.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend import params
from resource_extend.errors import PluginError
from resource_extend.gpu import prodmap, request
from resource_extend.gpu.prodmap import MaybeMap
from resource_extend.gpu.record import GpuRecord
from tests.support import DeployLimits, examples, old_deploy_count, read_outcome, shared_request_readers

LIMITS = DeployLimits("gpu.yaml")


# -- the reading as the handlers did it --------------------------------------------------------------


def old_present(resource: dict[str, Any] | None, where: str) -> MaybeMap:
    if resource is None:
        return None
    return prodmap.parse(resource, where) or {}


def old_workloads(req: dict[str, Any]) -> list[MaybeMap]:
    return [prodmap.parse(w, "workloads_resource[]") for w in params.obj_list(req, "workloads_resource") or []]


def old_add_node(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    info = params.engine_info(req)
    capacity = prodmap.parse(params.obj(req, "resource"), "resource") or {}
    prodmap.validate(capacity)
    # The engine's report is read by the same function before and after: only whether it is asked differs.
    return node, info, capacity or request._reported_gpus(info)


def old_set_info(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    capacity = prodmap.parse(params.obj(req, "capacity"), "capacity")
    return node, GpuRecord(capacity, prodmap.parse(params.obj(req, "usage"), "usage"))


def old_node_workloads(req: dict[str, Any]) -> tuple[Any, ...]:
    return params.nodename(req), old_workloads(req)


STORED: list[MaybeMap] = [None, {}, {"a": 1}]


def old_set_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    req_obj = params.obj(req, "resource_request")
    source_req = old_present(req_obj, "resource_request")
    res = old_present(params.obj(req, "resource"), "resource")
    delta, incr = params.flag(req, "delta"), params.flag(req, "incr")
    chosen = []
    for stored in STORED:
        source = source_req
        if not delta and req_obj is not None and "prod_count_map" not in req_obj:
            source = stored
        chosen.append(source if source is not None else res)
    return node, chosen, delta, incr


def old_set_usage(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    source_req = old_present(params.obj(req, "resource_request"), "resource_request")
    res = old_present(params.obj(req, "resource"), "resource")
    held = old_workloads(req)
    delta, incr = params.flag(req, "delta"), params.flag(req, "incr")
    return node, source_req if source_req is not None else res, held, delta, incr


def old_deploy_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
    nodes = params.bulk_nodenames(req)
    wanted = prodmap.parse(params.obj(req, "workload_resource"), "workload_resource") or {}
    prodmap.validate(wanted)
    return nodes, wanted


def old_deploy(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    times = old_deploy_count(req, LIMITS)
    wanted = prodmap.parse(params.obj(req, "workload_resource_request"), "workload_resource_request")
    wanted = wanted or {}
    prodmap.validate(wanted)
    return node, times, wanted


def old_realloc(req: dict[str, Any]) -> tuple[Any, ...]:
    node = params.nodename(req)
    change = prodmap.parse(params.obj(req, "workload_resource_request"), "workload_resource_request")
    prodmap.validate_products(change)
    current = prodmap.parse(params.obj(req, "workload_resource"), "workload_resource")
    prodmap.validate(current)
    return node, change, current


# -- the same, through the request values ------------------------------------------------------------


def new_add_node(req: dict[str, Any]) -> tuple[Any, ...]:
    value = request.AddNode.from_json(req)
    return value.nodename, value.info, value.record().capacity


def new_set_info(req: dict[str, Any]) -> tuple[Any, ...]:
    value = request.SetInfo.from_json(req)
    return value.nodename, value.record


def new_node_workloads(req: dict[str, Any]) -> tuple[Any, ...]:
    value = request.NodeWorkloads.from_json(req)
    return value.nodename, value.held()


def new_set_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
    value = request.SetCapacity.from_json(req)
    return value.nodename, [value.cards(stored) for stored in STORED], value.delta, value.incr


NEW = shared_request_readers(request, LIMITS)
READERS = {
    "add-node": (old_add_node, new_add_node),
    "set-node-resource-info": (old_set_info, new_set_info),
    "get-node-resource-info": (old_node_workloads, new_node_workloads),
    "set-node-resource-capacity": (old_set_capacity, new_set_capacity),
    "set-node-resource-usage": (old_set_usage, NEW["set-node-resource-usage"]),
    "get-nodes-deploy-capacity": (old_deploy_capacity, NEW["get-nodes-deploy-capacity"]),
    "calculate-deploy": (old_deploy, NEW["calculate-deploy"]),
    "calculate-realloc": (old_realloc, NEW["calculate-realloc"]),
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
@settings(max_examples=examples(300), deadline=None)
@given(req=requests)
def test_each_request_value_reads_and_refuses_what_the_handler_read_and_refused(verb: str, req: dict[str, Any]) -> None:
    old, new = READERS[verb]
    assert read_outcome(new, req) == read_outcome(old, req)


def test_add_node_decodes_its_cards_only_when_the_record_is_asked_for() -> None:
    # The store's "node already exists" must answer before a bad resource is refused, as in the reference.
    value = request.AddNode.from_json({"nodename": "n1", "resource": {"prod_count_map": {"a": -1}}})
    assert value.nodename == "n1"
    with pytest.raises(PluginError, match="invalid gpu map"):
        value.record()


def test_add_node_refuses_a_bad_name_or_engine_report_at_once() -> None:
    with pytest.raises(PluginError, match="node name is empty"):
        request.AddNode.from_json({"resource": {"prod_count_map": {"a": -1}}})
    with pytest.raises(PluginError, match=re.escape("info.NCPU")):
        request.AddNode.from_json({"nodename": "n1", "info": {"NCPU": "x"}})


def test_add_node_falls_back_to_the_engines_report_when_the_request_has_no_cards() -> None:
    reported = {"nodename": "n1", "resource": {}, "info": {"Resources": {"gpu": {"prod_count_map": {"a": 2}}}}}
    assert request.AddNode.from_json(reported).record() == GpuRecord({"a": 2}, {})


def test_node_workloads_parse_only_when_held_is_asked_for() -> None:
    value = request.NodeWorkloads.from_json({"nodename": "n1", "workloads_resource": [{"prod_count_map": 5}, "x"]})
    assert value.nodename == "n1"
    with pytest.raises(PluginError, match=re.escape("workloads_resource[].prod_count_map")):
        value.held()


def test_an_absolute_capacity_request_without_a_card_map_keeps_the_stored_cards() -> None:
    value = request.SetCapacity.from_json({"nodename": "n1", "resource_request": {}, "resource": None})
    assert value.cards({"a": 4}) == {"a": 4}
    delta = request.SetCapacity.from_json({"nodename": "n1", "resource_request": {}, "delta": True})
    assert delta.cards({"a": 4}) == {}


def test_deploy_count_above_the_config_is_refused_before_the_cards_are_read() -> None:
    req = {"nodename": "n1", "deploy_count": 11, "workload_resource_request": {"prod_count_map": {"a": 0}}}
    with pytest.raises(PluginError, match=re.escape("scheduler.max_deploy_count of gpu.yaml is 10")):
        request.Deploy.from_json(req, LIMITS)
