"""Decisions 9, 10, 12 and 13 against a real etcd: what a write may leave behind, and what a read survives.

Every refused call must leave the keyspace exactly as it was: the same keys, values and mod revisions.
Most calls run in-process (the verb table, the schemas and the store exactly as ``cli.serve`` runs
them); the issue's examples also go through the built executables, as core calls them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plugins as registry
from resource_extend import config
from resource_extend.command.nodeverbs import verb_table
from resource_extend.command.verb import Call
from resource_extend.errors import PluginError
from resource_extend.formats import jsonio, validation
from resource_extend_dev.conformance import run_plugin, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, UNREADABLE_RECORDS, executable

INT64_MAX = 2**63 - 1
P62 = 2**62
TiB = 2**40
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

GPU_RECORD: dict[str, Any] = {"capacity": {"prod_count_map": {"nvidia-3090": 2}}, "usage": {"prod_count_map": {}}}
STORAGE_RECORD: dict[str, Any] = {
    "capacity": {"volumes": {"/data0": TiB}, "disks": [], "storage": 2 * TiB},
    "usage": {"volumes": {"/data0": 0}, "disks": [], "storage": 0},
}
RECORDS: dict[str, dict[str, Any]] = {"gpu": GPU_RECORD, "storage": STORAGE_RECORD}


class Keyspace:
    """One plugin directory in etcd, reached in-process and through the executable."""

    def __init__(self, plugin: str, etcd: DevEtcd, prefix: str, folder: Path) -> None:
        self.plugin, self.etcd, self.prefix, self.folder = plugin, etcd, prefix, folder
        write_config(str(folder), plugin, etcd.url, prefix)

    def key(self, node: str) -> str:
        return f"{self.prefix}/resource/{self.plugin}/{node}"

    def seed(self, node: str, value: bytes | str | dict[str, Any]) -> None:
        data = json.dumps(value).encode() if isinstance(value, dict) else value
        raw = data.encode() if isinstance(data, str) else data
        self.etcd.call("/v3/kv/put", {"key": _b64(self.key(node).encode()), "value": _b64(raw)})

    def snapshot(self) -> dict[str, tuple[str, int, int]]:
        """Every key under the prefix: its value, mod revision and version."""
        start = self.prefix.encode()
        end = start[:-1] + bytes([start[-1] + 1])
        reply = self.etcd.call("/v3/kv/range", {"key": _b64(start), "range_end": _b64(end)})
        return {
            kv["key"]: (kv.get("value", ""), int(kv["mod_revision"]), int(kv["version"]))
            for kv in reply.get("kvs") or []
        }

    def raw(self, node: str) -> bytes:
        kvs = self.etcd.call("/v3/kv/range", {"key": _b64(self.key(node).encode())})["kvs"]
        return base64.b64decode(kvs[0]["value"])

    def stored(self, node: str) -> Any:
        raw = self.etcd.get(self.key(node))
        return None if raw is None else json.loads(raw)

    def call(self, verb: str, request: dict[str, Any]) -> tuple[bool, Any]:
        """(True, response) or (False, the one-line message) — what ``cli.serve`` would print."""
        plugin = registry.plugin(self.plugin)
        found = verb_table(plugin).verb(verb)
        assert found is not None
        try:
            settings_ = config.load(self.plugin, str(self.folder / f"{self.plugin}.yaml"))
            validation.check(self.plugin, verb, "request", request)
            result = found.run(Call(plugin, verb, request, settings_))
            validation.check(self.plugin, verb, "response", result)
            text = jsonio.dumps(result)
        except PluginError as exc:
            return False, str(exc)
        return True, json.loads(text) if isinstance(result, jsonio.Rendered) else result

    def ok(self, verb: str, request: dict[str, Any]) -> Any:
        done, result = self.call(verb, request)
        assert done, result
        return result

    def refused(self, verb: str, request: dict[str, Any], *needles: str) -> str:
        """The call fails, names what it should, and leaves every key, value and revision as it was."""
        before = self.snapshot()
        done, message = self.call(verb, request)
        assert not done, f"{verb} succeeded: {message}"
        assert before == self.snapshot()
        for needle in needles:
            assert needle in message, message
        return str(message)

    def run(self, verb: str, request: dict[str, Any]) -> tuple[int, str, str]:
        out = run_plugin(executable(self.plugin), verb, json.dumps(request).encode(), str(self.folder))
        return out.status, out.stdout, out.stderr


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
def gpu_space(etcd: DevEtcd, prefix: str, tmp_path: Path) -> Keyspace:
    return Keyspace("gpu", etcd, prefix, tmp_path)


@pytest.fixture
def storage_space(etcd: DevEtcd, prefix: str, tmp_path: Path) -> Keyspace:
    return Keyspace("storage", etcd, prefix, tmp_path)


@pytest.fixture(params=PLUGINS)
def space(request: pytest.FixtureRequest, etcd: DevEtcd, prefix: str, tmp_path: Path) -> Keyspace:
    return Keyspace(request.param, etcd, prefix, tmp_path)


# -- decision 9: the issue's examples, through the executables ----------------------------------------------


def _refused_by_executable(space: Keyspace, verb: str, request: dict[str, Any], needle: str) -> None:
    before = space.snapshot()
    status, stdout, stderr = space.run(verb, request)
    assert (status, stdout) == (128, ""), stderr
    assert len(stderr.splitlines()) == 1 and stderr.startswith(f"resource-{space.plugin} {verb}: ")
    assert needle in stderr
    assert space.snapshot() == before


def test_storage_add_node_whose_volumes_sum_past_int64_is_refused(storage_space: Keyspace) -> None:
    request = {"nodename": "n1", "resource": {"volumes": ["/a:4096P", "/b:4096P"]}}
    _refused_by_executable(storage_space, "add-node", request, "capacity.storage would be 9223372036854775808")
    # Nothing was left behind: the corrected request is not "node already exists".
    storage_space.ok("add-node", {"nodename": "n1", "resource": {"volumes": ["/a:4096P"]}})


def test_gpu_capacity_delta_past_int64_is_refused(gpu_space: Keyspace) -> None:
    gpu_space.seed("n1", {"capacity": {"prod_count_map": {"a": INT64_MAX - 1}}, "usage": {"prod_count_map": {}}})
    request = {"nodename": "n1", "resource": {"prod_count_map": {"a": 2}}, "delta": True, "incr": True}
    _refused_by_executable(gpu_space, "set-node-resource-capacity", request, "capacity.prod_count_map['a']")
    assert gpu_space.ok("get-node-resource-info", {"nodename": "n1"})["capacity"]["prod_count_map"] == {
        "a": INT64_MAX - 1
    }


def test_storage_usage_delta_sent_twice_is_refused_the_second_time(storage_space: Keyspace) -> None:
    storage_space.ok("add-node", {"nodename": "n1", "resource": {"storage": "1T"}})
    request = {"nodename": "n1", "resource": {"storage": P62}, "delta": True, "incr": True}
    storage_space.ok("set-node-resource-usage", request)
    _refused_by_executable(
        storage_space, "set-node-resource-usage", request, "usage.storage would be 9223372036854775808"
    )
    assert storage_space.ok("get-node-resource-info", {"nodename": "n1"})["usage"]["storage"] == P62


# -- decision 9: every write path, every number, near the int64 edge ---------------------------------------

near_edge = st.integers(P62 - 2, P62 + 2) | st.integers(INT64_MAX - 2, INT64_MAX) | st.integers(1, 10)


@SLOW
@given(start=near_edge, deltas=st.lists(near_edge, min_size=1, max_size=3), usage=st.booleans())
def test_gpu_deltas_never_store_what_cannot_be_read(
    gpu_space: Keyspace, start: int, deltas: list[int], usage: bool
) -> None:
    node = f"n{start}-{len(deltas)}-{usage}"
    gpu_space.seed(node, {"capacity": {"prod_count_map": {"a": start}}, "usage": {"prod_count_map": {"a": 1}}})
    verb = "set-node-resource-usage" if usage else "set-node-resource-capacity"
    for delta in deltas:
        request = {"nodename": node, "resource": {"prod_count_map": {"a": delta}}, "delta": True, "incr": True}
        before = gpu_space.snapshot()
        done, answer = gpu_space.call(verb, request)
        if not done:
            assert gpu_space.snapshot() == before and "past int64" in answer
        gpu_space.ok("get-node-resource-info", {"nodename": node})  # whatever happened, the node still reads


@SLOW
@given(
    field=st.sampled_from(["storage", "volume", "disk"]),
    side=st.sampled_from(["set-node-resource-capacity", "set-node-resource-usage"]),
    deltas=st.lists(near_edge, min_size=1, max_size=3),
)
def test_storage_deltas_never_store_what_cannot_be_read(
    storage_space: Keyspace, field: str, side: str, deltas: list[int]
) -> None:
    node = f"{field}-{side}-{'-'.join(map(str, deltas))}"[:200]
    capacity = {"volumes": {"/a": INT64_MAX}, "disks": [], "storage": INT64_MAX}
    capacity["disks"] = [
        {"device": "/dev/a", "mounts": ["/a"], "read_IOPS": INT64_MAX, "write_IOPS": 0, "read_bps": 0, "write_bps": 0}
    ]
    usage = {"volumes": {}, "disks": [], "storage": 0}
    storage_space.seed(node, {"capacity": capacity, "usage": usage})
    for delta in deltas:
        resource = {"storage": {"storage": delta}, "volume": {"volumes": {"/a": delta}, "storage": delta}}.get(field)
        if resource is None:
            resource = {"disks": [{"device": "/dev/a", "read_IOPS": delta}]}
        request = {"nodename": node, "resource": resource, "delta": True, "incr": True}
        before = storage_space.snapshot()
        done, answer = storage_space.call(side, request)
        if not done:
            assert storage_space.snapshot() == before, answer
        storage_space.ok("get-node-resource-info", {"nodename": node})


TWICE_GPU = {"workloads_resource": [{"prod_count_map": {"a": P62}}] * 2}
TWICE_STORAGE = {"workloads_resource": [{"storage_request": P62}] * 2}
BIG_VOLUME = {"volumes": ["/x:4096P"], "storage": "4096P"}
SUMS = [
    ("gpu", "add-node", {"resource": {"prod_count_map": {"a": 1}}}, None),
    ("gpu", "set-node-resource-usage", TWICE_GPU, "usage.prod_count_map['a'] would be"),
    ("gpu", "fix-node-resource", TWICE_GPU, "usage.prod_count_map['a'] would be"),
    ("storage", "set-node-resource-usage", TWICE_STORAGE, "usage.storage would be"),
    ("storage", "fix-node-resource", TWICE_STORAGE, "usage.storage would be"),
    (
        "storage",
        "set-node-resource-capacity",
        {"resource_request": BIG_VOLUME, "delta": True, "incr": True},
        "capacity.storage",
    ),
    (
        "storage",
        "set-node-resource-capacity",
        {"resource_request": {"volumes": ["/x:4096P", "/y:4096P"]}},
        "capacity.storage",
    ),
    ("storage", "add-node", {"resource": BIG_VOLUME}, "capacity.storage would be"),
]


@pytest.mark.parametrize(("plugin", "verb", "request_", "needle"), SUMS)
def test_sums_of_workloads_and_volumes_past_int64_are_refused(
    etcd: DevEtcd, prefix: str, tmp_path: Path, plugin: str, verb: str, request_: dict[str, Any], needle: str | None
) -> None:
    space = Keyspace(plugin, etcd, prefix, tmp_path)
    node = "fresh" if verb == "add-node" else "n1"
    if verb != "add-node":
        space.seed(
            "n1",
            {"capacity": {"prod_count_map": {"a": 2}}, "usage": {"prod_count_map": {}}}
            if plugin == "gpu"
            else STORAGE_RECORD,
        )
    if needle is None:  # a control: the same verb with sane numbers writes
        space.ok(verb, {"nodename": node, **request_})
        return
    message = space.refused(verb, {"nodename": node, **request_}, needle, f"node {node}")
    assert "past int64" in message


def test_a_record_that_would_not_read_back_is_never_written(etcd: DevEtcd, prefix: str, tmp_path: Path) -> None:
    # A string that is not UTF-8 cannot be stored; the store refuses it before writing, naming it.
    space = Keyspace("gpu", etcd, prefix, tmp_path)
    message = space.refused("set-node-resource-info", {"nodename": "n1", "capacity": {"prod_count_map": {"\udc80": 1}}})
    assert "not valid UTF-8" in message and "node n1" in message


# -- decision 9: a record written by something else -------------------------------------------------------

UNREADABLE = UNREADABLE_RECORDS
# A GPU record without a side reads as that side empty (the reference overlays the stored JSON on an
# empty record); a storage record without its capacity cannot answer anything about its node.
CASES = [(p, kind) for p in PLUGINS for kind in sorted(UNREADABLE) if p == "storage" or not kind.startswith("no-")]


@pytest.fixture
def bad(request: pytest.FixtureRequest, etcd: DevEtcd, prefix: str, tmp_path: Path) -> Keyspace:
    """A keyspace whose node ``bad`` holds one kind of unreadable record."""
    plugin, kind = request.param
    space = Keyspace(plugin, etcd, prefix, tmp_path)
    space.seed("bad", UNREADABLE[kind])
    return space


@pytest.mark.parametrize("bad", CASES, indirect=True, ids=[f"{p}-{k}" for p, k in CASES])
def test_an_unreadable_record_is_a_node_without_capacity_in_bulk_verbs(bad: Keyspace) -> None:
    space = bad
    space.seed("good", RECORDS[space.plugin])
    empty = space.ok("get-nodes-resource-info", {"nodenames": ["ghost"]})["node_resource_info_map"]["ghost"]
    infos = space.ok("get-nodes-resource-info", {"nodenames": ["bad", "good"]})["node_resource_info_map"]
    assert infos == {"bad": empty, "good": RECORDS[space.plugin]}
    assert space.ok("get-nodes-resource-info", {"nodenames": ["bad"]})["node_resource_info_map"] == {"bad": empty}
    wants = {"gpu": {"prod_count_map": {"nvidia-3090": 1}}, "storage": {"storage": "1T"}}[space.plugin]
    capacity = space.ok("get-nodes-deploy-capacity", {"nodenames": ["bad", "good"], "workload_resource": wants})
    assert list(capacity["nodes_deploy_capacity_map"]) == ["good"] and capacity["total"] == 2
    rows = space.ok(
        "get-metrics", {"nodes": [{"podname": "p", "nodename": "bad"}, {"podname": "p", "nodename": "good"}]}
    )
    assert [row["value"] for row in rows if "bad" in row["labels"]] == ([] if space.plugin == "gpu" else ["0", "0"])
    assert space.ok("get-most-idle-node", {"nodenames": ["good", "bad"]})["nodename"] in ("good", "bad")


@pytest.mark.parametrize("bad", CASES, indirect=True, ids=[f"{p}-{k}" for p, k in CASES])
def test_an_unreadable_record_fails_single_node_reads_naming_the_node(bad: Keyspace) -> None:
    space = bad
    for verb, extra in (
        ("get-node-resource-info", {}),
        ("set-node-resource-usage", {"resource": {}, "delta": True, "incr": True}),
        ("set-node-resource-capacity", {"resource": {}, "delta": True, "incr": True}),
        ("fix-node-resource", {}),
        ("calculate-deploy", {"deploy_count": 1}),
    ):
        message = space.refused(verb, {"nodename": "bad", **extra}, "node bad: stored record is unreadable")
        assert "set-node-resource-info or remove-node" in message
    space.refused("add-node", {"nodename": "bad"}, "node already exists")


def test_a_storage_record_without_usage_reads_as_nothing_used(storage_space: Keyspace) -> None:
    capacity: dict[str, Any] = STORAGE_RECORD["capacity"]
    storage_space.seed("n1", {"capacity": capacity, "usage": None})
    storage_space.seed("n2", {"capacity": capacity})
    for node in ("n1", "n2"):
        assert storage_space.ok("get-node-resource-info", {"nodename": node})["usage"] == STORAGE_RECORD["usage"]
    infos = storage_space.ok("get-nodes-resource-info", {"nodenames": ["n1", "n2"]})["node_resource_info_map"]
    assert infos == {"n1": STORAGE_RECORD, "n2": STORAGE_RECORD}


def test_unreadable_record_messages_name_the_field(gpu_space: Keyspace, storage_space: Keyspace) -> None:
    gpu_space.seed("bad", UNREADABLE["past-int64"])
    storage_space.seed("bad", UNREADABLE["wrong-types"])
    gpu_space.refused(
        "get-node-resource-info", {"nodename": "bad"}, "9223372036854775808", "capacity.prod_count_map['a']"
    )
    storage_space.refused("get-node-resource-info", {"nodename": "bad"}, "capacity.volumes")


@pytest.mark.parametrize("bad", CASES, indirect=True, ids=[f"{p}-{k}" for p, k in CASES])
def test_an_unreadable_record_can_be_removed_or_replaced(bad: Keyspace) -> None:
    space = bad
    space.seed("worse", space.raw("bad"))
    info = dict(RECORDS[space.plugin])
    space.ok("set-node-resource-info", {"nodename": "bad", **info})
    assert space.stored("bad") == RECORDS[space.plugin]
    space.ok("remove-node", {"nodename": "worse"})
    assert space.stored("worse") is None


def test_bulk_answers_stay_within_int64_for_extreme_readable_records(space: Keyspace) -> None:
    # Readable records at the very edge (written by something else): answers are computed, never overflow.
    record: dict[str, Any]
    if space.plugin == "gpu":
        record = {
            "capacity": {"prod_count_map": {"a": INT64_MAX, "b": INT64_MAX}},
            "usage": {"prod_count_map": {"a": -INT64_MAX}},
        }
        wants: dict[str, Any] = {"prod_count_map": {"a": 1}}
    else:
        edge = {"volumes": {"/a": INT64_MAX}, "disks": [], "storage": INT64_MAX}
        record = {"capacity": edge, "usage": {"volumes": {"/a": -INT64_MAX}, "disks": [], "storage": -INT64_MAX}}
        wants = {"storage": "1"}
    for n in range(3):
        space.seed(f"n{n}", record)
    answer = space.ok("get-nodes-deploy-capacity", {"nodenames": ["n0", "n1", "n2"], "workload_resource": wants})
    assert 0 < answer["total"] <= INT64_MAX
    space.ok("get-metrics", {"nodes": [{"podname": "p", "nodename": "n0"}]})


# -- decision 10: whole keys ------------------------------------------------------------------------------

segments = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="/"), min_size=1, max_size=6
)


@SLOW
@given(name=segments, parents=st.lists(segments, min_size=1, max_size=3))
def test_a_name_never_answers_for_a_longer_key_ending_in_it(gpu_space: Keyspace, name: str, parents: list[str]) -> None:
    deep = "/".join([*parents, name])
    gpu_space.seed(deep, {"capacity": {"prod_count_map": {"a": 8}}, "usage": {"prod_count_map": {}}})
    wants = {"prod_count_map": {"a": 1}}
    for names in ([name], [name, "other"]):
        answer = gpu_space.ok("get-nodes-deploy-capacity", {"nodenames": names, "workload_resource": wants})
        assert answer == {"nodes_deploy_capacity_map": {}, "total": 0}
        infos = gpu_space.ok("get-nodes-resource-info", {"nodenames": names})["node_resource_info_map"]
        assert infos[name]["capacity"]["prod_count_map"] == {}
        rows = gpu_space.ok("get-metrics", {"nodes": [{"podname": "p", "nodename": n} for n in names]})
        assert rows == []
    both = gpu_space.ok("get-nodes-deploy-capacity", {"nodenames": [name, deep], "workload_resource": wants})
    assert list(both["nodes_deploy_capacity_map"]) == [deep]


WRITES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "gpu": [
        ("add-node", {"resource": {"prod_count_map": {"a": 1}}}),
        ("set-node-resource-capacity", {"resource": {"prod_count_map": {"a": 1}}}),
        ("set-node-resource-usage", {"resource": {"prod_count_map": {"a": 1}}}),
        ("set-node-resource-info", {"capacity": {"prod_count_map": {"a": 1}}}),
        ("fix-node-resource", {"workloads_resource": [{"prod_count_map": {"a": 1}}]}),
    ],
    "storage": [
        ("add-node", {"resource": {"storage": "1G"}}),
        ("set-node-resource-capacity", {"resource_request": {"storage": "1G"}}),
        ("set-node-resource-usage", {"resource": {"storage": 1}}),
        ("set-node-resource-info", {"capacity": {"storage": 1}}),
        ("fix-node-resource", {"workloads_resource": [{"storage_request": 1}]}),
    ],
}
bad_names = st.one_of(
    st.builds(
        lambda head, c, tail: head + c + tail,
        segments,
        st.sampled_from([chr(c) for c in [*range(32), *range(127, 160)]]),
        segments,
    ),
    st.integers(4097, 20000).map(lambda n: "n" * n),
    st.integers(1366, 3000).map(lambda n: "\u20ac" * n),  # 3 bytes each: past 4096 bytes, not characters
)


@SLOW
@given(name=bad_names)
def test_names_too_long_or_with_control_characters_are_refused_at_every_write(space: Keyspace, name: str) -> None:
    space.seed(name, RECORDS[space.plugin])  # an older version stored it: still not written again
    for verb, extra in WRITES[space.plugin]:
        space.refused(verb, {"nodename": name, **extra}, "node name")
    space.ok("remove-node", {"nodename": name})  # but an operator can always clean it up
    assert space.stored(name) is None


def test_a_4096_byte_name_is_accepted(space: Keyspace) -> None:
    name = "\u00e9" * 2048
    for verb, extra in WRITES[space.plugin]:
        space.ok(verb, {"nodename": name, **extra})
    assert space.stored(name) is not None


# -- decision 12: set-node-resource-info restores what get-node-resource-info read -------------------------

add_requests = st.fixed_dictionaries(
    {
        "volumes": st.lists(
            st.builds("/v{}:{}G".format, st.integers(0, 5), st.integers(1, 1000)),
            max_size=3,
            unique_by=lambda v: v.split(":")[0],
        ),
        "storage": st.integers(0, 10).map(lambda n: f"{n}T"),
        "disks": st.lists(st.just("/dev/vda:/,/v0:100:100:1G:1G"), max_size=1),
    }
)  # fmt: skip


@SLOW
@given(resource=add_requests, used=st.integers(0, 10))
def test_restoring_a_node_from_its_own_info_leaves_it_unchanged(
    storage_space: Keyspace, resource: dict[str, Any], used: int
) -> None:
    storage_space.etcd.call("/v3/kv/deleterange", {"key": _b64(storage_space.key("n1").encode())})
    storage_space.ok("add-node", {"nodename": "n1", "resource": resource})
    storage_space.ok(
        "set-node-resource-usage", {"nodename": "n1", "resource": {"storage": used}, "delta": True, "incr": True}
    )
    stored = storage_space.etcd.get(storage_space.key("n1"))
    info = storage_space.ok("get-node-resource-info", {"nodename": "n1"})
    # core's RemoveNode rollback: set-node-resource-info with exactly what it read
    storage_space.ok("set-node-resource-info", {"nodename": "n1", "capacity": info["capacity"], "usage": info["usage"]})
    assert storage_space.etcd.get(storage_space.key("n1")) == stored


def test_set_node_resource_info_example_of_the_issue_stores_2e62(storage_space: Keyspace) -> None:
    capacity = {"volumes": {"/a": P62}, "disks": [], "storage": P62}
    status, _, stderr = storage_space.run("set-node-resource-info", {"nodename": "n1", "capacity": capacity})
    assert status == 0, stderr
    assert storage_space.stored("n1")["capacity"]["storage"] == P62


# -- decision 13: bulk reads of nothing, and fix of a node never added ------------------------------------


@pytest.mark.parametrize("nodenames", [[], None])
def test_bulk_reads_of_no_nodes_answer_empty(space: Keyspace, nodenames: list[str] | None) -> None:
    space.seed("n1", RECORDS[space.plugin])
    assert space.ok("get-nodes-resource-info", {"nodenames": nodenames}) == {"node_resource_info_map": {}}
    answer = space.ok("get-nodes-deploy-capacity", {"nodenames": nodenames, "workload_resource": {}})
    assert answer == {"nodes_deploy_capacity_map": {}, "total": 0}


def test_bulk_reads_without_the_key_still_need_names(space: Keyspace) -> None:
    space.refused("get-nodes-resource-info", {}, "node name is empty")
    space.refused("get-most-idle-node", {"nodenames": []}, "node name is empty")


def test_fix_of_a_node_without_a_record_answers_null_and_writes_nothing(space: Keyspace) -> None:
    space.seed("other", RECORDS[space.plugin])
    before = space.snapshot()
    workloads = {"gpu": [{"prod_count_map": {"a": 1}}], "storage": [{"storage_request": 1}]}[space.plugin]
    status, stdout, stderr = space.run("fix-node-resource", {"nodename": "ghost", "workloads_resource": workloads})
    assert (status, stdout, stderr) == (0, "null", "")
    assert space.snapshot() == before
