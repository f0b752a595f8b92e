"""Storage requests (storage/payloads.py): workload and node requests against the tables and examples of
spec/storage-types.md, and the request values each verb reads once.

Each request value reads its fields in the verb's order, so the first bad field is the one refused (the
tests below pin that order and each refusal); hypothesis feeds every value mutated requests that pass the
verb's schema, which each reads whole or refuses in one line.
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
from resource_extend.envelope.sides import SetCapacity, SetUsage
from resource_extend.errors import PluginError
from resource_extend.storage import payloads
from resource_extend.storage.binding import parse_bindings
from resource_extend.storage.node_request import NodeRequest, rollback_resource
from resource_extend.storage.record import NodeResource, StorageRecord
from resource_extend.storage.scheduler.resize import realloc_merge
from resource_extend.storage.workload import WorkloadResource
from resource_extend.storage.workload_request import WorkloadRequest
from tests.support import DeployLimits, GiB, TiB, disk, examples, read_whole_or_refused, shared_request_readers

LIMITS = DeployLimits("storage.yaml")


# -- each request value read whole (its lazy parts too) ----------------------------------------------


def new_add_node(req: dict[str, Any]) -> tuple[Any, ...]:
    value = AddNode.from_json(req, payloads.PAYLOADS)
    return value.nodename, value.info, value.record()


def new_set_info(req: dict[str, Any]) -> tuple[Any, ...]:
    value = SetInfo.from_json(req, payloads.PAYLOADS)
    return value.nodename, value.record


def new_node_workloads(req: dict[str, Any]) -> tuple[Any, ...]:
    value = NodeWorkloads.from_json(req, payloads.PAYLOADS)
    return value.nodename, value.held()


def new_set_capacity(req: dict[str, Any]) -> tuple[Any, ...]:
    value = SetCapacity.from_json(req, payloads.PAYLOADS)
    return value.nodename, value.request, value.resource, value.delta, value.incr


NEW = shared_request_readers(payloads.PAYLOADS, LIMITS)
READERS = {
    "add-node": new_add_node,
    "set-node-resource-info": new_set_info,
    "get-node-resource-info": new_node_workloads,
    "set-node-resource-capacity": new_set_capacity,
    **NEW,
}


# -- mutated requests ----------------------------------------------------------------------------------

scalars: st.SearchStrategy[Any] = st.sampled_from(
    [None, True, False, 0, 1, -1, 2.5, "", "n1", "2", "-3", "x", [], {}, ["n1"], ["n1", 7]]
)
sizes: st.SearchStrategy[Any] = st.sampled_from(
    [None, 0, 1, -1, 1024, 2.0, 2.5, 2**63, "1G", "1T", "-1G", "", "10X", "1e3", True]
)
node_volumes = st.sampled_from(["/data0:1T", "/data1:100G", "/data0", "data0:1G", "/d:x", "/a,b:1G", "/data0:-1G"])
bindings = st.sampled_from(
    ["AUTO:/d:rw:1G", "AUTO:/e:ro:100", "/data0:/d:rw:1G", "AUTO:/d:rw:-1G", "AUTO:/d:rrw:1G", "::bad::", "AUTO:/d"]
)
disks = st.sampled_from(["/dev/vda:/,/data0:1000:1000:1G:1G", "/dev/vdb:/data1:1:1:1:1", "bad", "/dev/vdc:/x:a:b:c:d"])
string_lists = st.lists(node_volumes | bindings | disks | scalars, max_size=3)
request_form = st.fixed_dictionaries(
    {},
    optional={
        "volumes": st.lists(node_volumes | bindings | scalars, max_size=3) | scalars,
        "volumes-request": st.lists(bindings, max_size=2),
        "volumes-limit": st.lists(bindings, max_size=2),
        "storage": sizes,
        "storage-request": sizes,
        "storage-limit": sizes,
        "disks": st.lists(disks | scalars, max_size=2) | scalars,
        "rm-disks": st.sampled_from(["/dev/vda", "/dev/vda,/dev/vdb", "", None, 5]),
    },
)
stored_form = st.fixed_dictionaries(
    {},
    optional={
        "volumes": st.sampled_from([{}, {"/data0": 1024}, {"/data0": "1G"}, None, ["/data0:1G"]]),
        "disks": st.sampled_from([[], None, [{"device": "/dev/vda", "mounts": ["/"]}], "x"]),
        "storage": sizes,
    },
)
workload_form = st.fixed_dictionaries(
    {},
    optional={
        "volumes_request": st.lists(bindings, max_size=2) | scalars,
        "volumes_limit": st.lists(bindings, max_size=2),
        "volume_plan_request": st.sampled_from([{}, None, {"AUTO:/d:rw:1G": {"/data0": 1073741824}}, []]),
        "storage_request": sizes,
        "storage_limit": sizes,
        "disks_request": st.sampled_from([[], None, "x"]),
    },
)
resources: st.SearchStrategy[Any] = request_form | stored_form | workload_form | scalars
info = st.one_of(
    scalars,
    st.fixed_dictionaries({}, optional={"Type": scalars, "NCPU": scalars, "StorageTotal": scalars | sizes}),
)
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "nodename": scalars | st.just("node-1"),
    "nodenames": scalars | st.lists(scalars, max_size=3),
    "info": info,
    "resource": resources,
    "resource_request": resources,
    "capacity": stored_form | scalars,
    "usage": stored_form | scalars,
    "workloads_resource": st.lists(workload_form | scalars, max_size=3) | scalars,
    "workload_resource": request_form | workload_form | scalars,
    "workload_resource_request": request_form | scalars,
    "delta": scalars,
    "incr": scalars,
    "deploy_count": scalars | st.sampled_from([11, 10, 10**6]),
}
requests = st.fixed_dictionaries({}, optional=FIELDS)


@pytest.mark.parametrize("verb", sorted(READERS))
@settings(max_examples=examples(150), deadline=None)
@given(req=requests)
def test_a_request_the_schema_passes_is_read_whole_or_refused_in_one_line(verb: str, req: dict[str, Any]) -> None:
    read_whole_or_refused("storage", verb, READERS[verb], req)


def test_add_node_decodes_its_resource_only_when_the_record_is_asked_for() -> None:
    # The store's "node already exists" must answer before a bad resource is refused, as in the reference.
    value = AddNode.from_json({"nodename": "n1", "resource": {"volumes": ["bad"]}}, payloads.PAYLOADS)
    assert value.nodename == "n1"
    with pytest.raises(PluginError, match="invalid volume"):
        value.record()


def test_add_node_takes_80_percent_of_the_engines_storage_when_the_request_has_none() -> None:
    value = AddNode.from_json({"nodename": "n1", "info": {"StorageTotal": 1000}}, payloads.PAYLOADS)
    assert value.record() == StorageRecord(NodeResource({}, [], 800), NodeResource())


def test_node_workloads_parse_only_when_held_is_asked_for() -> None:
    value = NodeWorkloads.from_json(
        {"nodename": "n1", "workloads_resource": [{"volumes_request": ["::"]}]}, payloads.PAYLOADS
    )
    assert value.nodename == "n1"
    with pytest.raises(PluginError):
        value.held()


def test_a_rollback_snapshot_is_restored_as_it_is() -> None:
    snapshot = {"volumes": {"/data0": 1024}, "disks": [], "storage": 2048}
    value = SetCapacity.from_json({"nodename": "n1", "resource_request": snapshot}, payloads.PAYLOADS)
    assert value.request is None
    assert value.resource == NodeResource({"/data0": 1024}, [], 2048)


def test_rm_disks_with_delta_is_refused_as_the_request_is_read() -> None:
    req = {"nodename": "n1", "resource_request": {"rm-disks": "/dev/vda"}, "delta": True}
    with pytest.raises(PluginError, match=re.escape('rm-disks "/dev/vda" cannot be used with delta')):
        SetCapacity.from_json(req, payloads.PAYLOADS)


def test_set_usage_reads_no_stored_form_resource_when_a_request_is_given() -> None:
    req = {"nodename": "n1", "resource_request": {"storage": "1K"}, "resource": {"storage": "not stored form"}}
    assert SetUsage.from_json(req, payloads.PAYLOADS).resource == NodeResource({}, [], 1024)


def test_a_new_workload_with_a_negative_volume_is_refused() -> None:
    req = {"nodename": "n1", "workload_resource_request": {"volumes": ["AUTO:/d:rw:-1G"]}}
    with pytest.raises(PluginError, match="negative size"):
        Deploy.from_json(req, LIMITS, payloads.PAYLOADS)


# §5 workload requests ------------------------------------------------------------------------------------


def test_workload_request_aliases_pick_the_first_non_empty_list() -> None:
    request = WorkloadRequest.parse(
        {
            "volumes-request": [],
            "volume-request": ["AUTO:/dir:rw:1G", 7],
            "volumes": "not a list",
            "volume": ["AUTO:/dir:rw:2G"],
            "volume-limit": ["AUTO:/dir:rw:3G"],
        }
    )
    assert [b.size for b in request.volumes_request] == [GiB]
    assert [b.size for b in request.volumes_limit] == [2 * GiB]


def test_workload_request_uses_the_limits_as_requests_when_only_limits_are_given() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/dir:rw:1G"]})
    assert request.volumes_request == request.volumes_limit
    assert request.volumes_request[0] is not request.volumes_limit[0]


def test_workload_request_storage_key_overrides_request_and_limit() -> None:
    both = {"storage-request": "5G", "storage-limit": "5G"}
    assert WorkloadRequest.parse({**both, "storage": "1G"}).storage_request == GiB
    assert WorkloadRequest.parse({**both, "storage": None}).storage_limit == 0
    assert WorkloadRequest.parse({**both, "storage": 2 * GiB}).storage_request == 2 * GiB
    assert WorkloadRequest.parse({"storage-request": float(GiB)}).storage_request == GiB


def test_workload_request_parse_errors_are_verb_errors() -> None:
    with pytest.raises(PluginError, match="invalid volume"):
        WorkloadRequest.parse({"volumes": ["bad"]})
    with pytest.raises(PluginError, match="invalid size"):
        WorkloadRequest.parse({"storage": "xx"})


CONSEQUENCES: list[tuple[dict[str, Any], int, int]] = [
    ({"volumes": ["/src:/dst:rw:1G"], "storage": "1G"}, 2 * GiB, 2 * GiB),
    ({"volumes-request": ["/src:/dst:rw:2G"], "volumes": ["/src:/dst:rw:1G"]}, 2 * GiB, 2 * GiB),
    ({"volumes-request": ["/src:/dst:rw:1G"], "volumes": ["/src:/dst:rw"]}, GiB, 0),
    ({"volumes": ["/src:/dst"], "storage-request": "1G"}, GiB, 0),
    ({"volumes": ["/src:/dst"], "storage-limit": "1G"}, GiB, GiB),
    ({"volumes": ["/src:/dst"], "storage-request": "2G", "storage-limit": "1G"}, 2 * GiB, 2 * GiB),
    (
        {"volumes": ["/src:/dst"], "storage-request": "5G", "storage-limit": "5G", "storage": "1G"},
        GiB,
        GiB,
    ),
]


@pytest.mark.parametrize(("req", "storage_request", "storage_limit"), CONSEQUENCES)
def test_validation_settles_and_folds_storage_as_the_consequences_table(
    req: dict[str, Any], storage_request: int, storage_limit: int
) -> None:
    request = WorkloadRequest.parse(req).validated()
    assert (request.storage_request, request.storage_limit) == (storage_request, storage_limit)


def test_deploy_capacity_request_folds_the_monopoly_size_into_storage() -> None:
    req = {"volumes": ["AUTO:/dir0:rwm:1G"], "storage": "1099511627776"}
    assert WorkloadRequest.parse(req).validated().storage_request == TiB + GiB


def test_validation_raises_limits_to_requests() -> None:
    request = WorkloadRequest.parse(
        {
            "volume-request": ["AUTO:/dir:rw:2G:100:100:0:0"],
            "volume-limit": ["AUTO:/dir:rw:1G:50:50:0:0"],
            "storage-request": "2G",
            "storage-limit": "1G",
        }
    ).validated()
    assert request.volumes_limit[0].size == 2 * GiB
    assert request.volumes_limit[0].read_iops == 100
    assert request.storage_request == request.storage_limit


def test_validation_sorts_both_lists_by_stored_form() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/b:rw:1G", "AUTO:/a:rw:2G", "/m:/c"]}).validated()
    assert [b.destination for b in request.volumes_request] == ["/c", "/a", "/b"]
    assert [b.to_string() for b in request.volumes_limit] == [b.to_string() for b in request.volumes_request]


def test_validation_never_changes_the_request_it_is_called_on() -> None:
    request = WorkloadRequest.parse({"volume-request": ["AUTO:/b:rw:2G", "AUTO:/a:rw:1G"], "volume": []})
    request.volumes_limit = parse_bindings(["AUTO:/b:rw:1G", "AUTO:/a:rw:1G"])
    before = [b.to_string() for b in request.volumes_limit]
    request.validated()
    assert [b.to_string() for b in request.volumes_limit] == before


def test_validation_without_folding_keeps_storage_as_given() -> None:
    request = WorkloadRequest.parse({"volumes": ["AUTO:/dir:rw:1G"], "storage-request": "1G"})
    assert request.validated().storage_request == 2 * GiB
    assert request.validated(fold=False).storage_request == GiB


def test_empty_request_is_valid_and_untouched() -> None:
    assert WorkloadRequest.parse({}).validated() == WorkloadRequest()


@pytest.mark.parametrize(
    ("request_list", "limit_list"),
    [
        (["AUTO:/dir1:rw:1G", "AUTO:/dir2:rw:1G"], ["AUTO:/dir1:rw:1G"]),
        (["AUTO:/dir1:rw:1G"], ["AUTO:/other:rw:1G"]),
        (["AUTO:/dir:mrw"], ["AUTO:/dir:mrw"]),
        (["AUTO:/dir:rw:0:-1:0:0:0"], ["AUTO:/dir:rw:0:-1:0:0:0"]),
    ],
)
def test_validation_rejects_unpaired_or_invalid_bindings_as_invalid_volume(
    request_list: list[str], limit_list: list[str]
) -> None:
    request = WorkloadRequest(parse_bindings(request_list), parse_bindings(limit_list))
    with pytest.raises(PluginError, match="invalid volume"):
        request.validated()


def test_request_only_bindings_fail_with_a_length_mismatch() -> None:
    with pytest.raises(PluginError, match="different length"):
        WorkloadRequest.parse({"volumes-request": ["AUTO:/d:rw:1G"]}).validated()


def test_negative_storage_is_invalid_storage_but_a_volume_error_wins() -> None:
    with pytest.raises(PluginError, match="invalid storage"):
        WorkloadRequest.parse({"storage": "-1"}).validated()
    with pytest.raises(PluginError, match="invalid volume"):
        WorkloadRequest.parse({"volumes-request": ["AUTO:/d:rw:1G"], "storage": "-1"}).validated()


def test_realloc_merge_adds_the_request_sizes_into_the_storages_once() -> None:
    current = WorkloadResource(
        volumes_request=parse_bindings(["AUTO:/d:rw:1G"]),
        volumes_limit=parse_bindings(["AUTO:/d:rw:1G"]),
        storage_request=3 * GiB,
        storage_limit=4 * GiB,
    )
    merged = realloc_merge(WorkloadRequest.parse({"volumes": ["AUTO:/d:rw:1G"], "storage": "1G"}), current)
    assert [b.size for b in merged.volumes_request] == [2 * GiB]
    assert (merged.storage_request, merged.storage_limit) == (5 * GiB, 6 * GiB)
    assert merged.validated(fold=False).storage_request == 5 * GiB


# §8 node requests ----------------------------------------------------------------------------------------


def test_node_request_parse_folds_volumes_into_storage() -> None:
    request = NodeRequest.parse(
        {
            "volumes": ["/data0:1T", "/data1:1G", 3],
            "storage": "1G",
            "disks": ["/dev/vda:/,/data0:100:200:1G:2G"],
            "rm-disks": "/dev/vdb,/dev/vdc",
        }
    )
    assert request.volumes == {"/data0": TiB, "/data1": GiB}
    assert request.storage == TiB + 2 * GiB
    assert [d.device for d in request.disks] == ["/dev/vda"]
    assert request.rm_disks == ["/dev/vdb", "/dev/vdc"]


@pytest.mark.parametrize("storage", ["100G", 107374182400, 107374182400.0])
def test_node_request_storage_takes_both_forms(storage: object) -> None:
    assert NodeRequest.parse({"volumes": ["/data0:1G"], "storage": storage}).storage == 101 * GiB


def test_node_request_details() -> None:
    assert NodeRequest.parse({"volumes": ["/d:1G", "/d:2G"]}).volumes == {"/d": 2 * GiB}
    assert NodeRequest.parse({"rm-disks": 5}).rm_disks == [""]
    assert NodeRequest.parse({}).rm_disks is None
    request = NodeRequest.parse({"volumes": "nope", "disks": None})
    assert (request.volumes, request.disks, request.present) == ({}, [], frozenset({"volumes", "disks"}))


@pytest.mark.parametrize(
    ("req", "message"),
    [
        ({"volumes": ["/data0"]}, "invalid volume"),
        ({"volumes": ["/data0:1:2"]}, "invalid volume"),
        ({"volumes": ["/data0:xx"]}, "invalid size"),
        ({"storage": "xx"}, "invalid size"),
        ({"disks": ["/dev/vda:/:x:1:1:1"]}, "wrong disk format: /dev/vda:/:x:1:1:1"),
    ],
)
def test_node_request_parse_errors(req: dict[str, Any], message: str) -> None:
    with pytest.raises(PluginError, match=message):
        NodeRequest.parse(req)


@pytest.mark.parametrize(
    ("req", "storage_total", "storage"),
    [
        ({"volumes": ["/data0:1T"]}, 10**12, TiB),
        ({}, 10**12, 800000000000),
        ({}, 0, 0),
        ({}, 15, 12),
        ({"storage": "1G"}, 10**12, GiB),
    ],
)
def test_add_node_capacity_defaults_to_80_percent_of_the_engine_total(
    req: dict[str, Any], storage_total: int, storage: int
) -> None:
    assert NodeRequest.parse(req).capacity_for_add(storage_total).storage == storage


def test_skip_empty_fills_absent_keys_from_the_stored_capacity() -> None:
    stored = NodeResource({"/data0": GiB}, [disk("/dev/vda")], 3 * GiB)
    kept = NodeRequest.parse({}).skip_empty(stored).as_resource()
    assert kept == stored
    changed = NodeRequest.parse({"volumes": ["/data0:4G"]}).skip_empty(stored).as_resource()
    assert changed == NodeResource({"/data0": 4 * GiB}, [disk("/dev/vda")], 6 * GiB)
    given = NodeRequest.parse({"storage": "1G", "disks": []}).skip_empty(stored).as_resource()
    assert given == NodeResource({"/data0": GiB}, [], GiB)


def test_rollback_is_recognised_only_for_an_absolute_full_parsed_resource() -> None:
    before = {"volumes": {"/d": 1}, "disks": [], "storage": 5}
    assert rollback_resource(None, before, False, False) == NodeResource({"/d": 1}, [], 5)
    assert rollback_resource("x", before, False, False) is not None
    assert rollback_resource({}, before, False, False) is None
    assert rollback_resource(None, before, True, False) is None
    assert rollback_resource(None, before, False, True) is None
    assert rollback_resource(None, {"volumes": {}, "disks": []}, False, False) is None
    assert rollback_resource(None, {**before, "volumes": ["/d:1G"]}, False, False) is None


def test_a_deploy_request_refuses_its_first_bad_field_first() -> None:
    # The order the handler read them in: the node's name, deploy_count, then the workload's request.
    bad = {"workload_resource_request": {"volumes": ["::bad::"], "storage": "10X"}}
    with pytest.raises(PluginError, match="node name is empty"):
        Deploy.from_json({"deploy_count": 11, **bad}, LIMITS, payloads.PAYLOADS)
    with pytest.raises(PluginError, match=re.escape("scheduler.max_deploy_count of storage.yaml is 10")):
        Deploy.from_json({"nodename": "n1", "deploy_count": 11, **bad}, LIMITS, payloads.PAYLOADS)
    with pytest.raises(PluginError, match=re.escape("dest must be provided: ::bad::")):
        Deploy.from_json({"nodename": "n1", "deploy_count": 1, **bad}, LIMITS, payloads.PAYLOADS)
