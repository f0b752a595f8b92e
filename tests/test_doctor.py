"""``resource-<plugin> doctor`` finds each kind of problem in a store seeded with raw bytes, and writes nothing."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resource_extend.gpu import checks as gpu_checks
from resource_extend.gpu.manifest import GpuRecord
from resource_extend.plugin.diagnosis import examine, salvage
from resource_extend.storage import checks as storage_checks
from resource_extend.storage.record import StorageRecord
from resource_extend_dev.devetcd import DevEtcd, binary
from tests.support import PluginDir, b64


def seed(etcd: DevEtcd, key: str, value: bytes) -> None:
    """Raw bytes, as another writer (or a hand with etcdctl) could leave them."""
    body = {"key": base64.b64encode(key.encode()).decode(), "value": base64.b64encode(value).decode()}
    etcd.call("/v3/kv/put", body)


def revision(etcd: DevEtcd) -> int:
    return int(etcd.call("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])


def doctor(plugin: PluginDir, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    return subprocess.run(
        [plugin.exe, "doctor", *flags], cwd=plugin.path, capture_output=True, text=True, timeout=60, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def this(plugin: PluginDir) -> str:
    """How a repair names the executable and its config: absolute paths, so that it pastes from anywhere."""
    return f"{plugin.exe} --config {plugin.path / f'{plugin.plugin}.yaml'}"


def findings(plugin: PluginDir) -> list[dict[str, str]]:
    done = doctor(plugin, "--json")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    doc = json.loads(done.stdout)
    assert doc["directory"] == plugin.key("")
    found: list[dict[str, str]] = doc["findings"]
    return found


def kinds(found: list[dict[str, str]], node: str) -> list[str]:
    return [f["problem"] for f in found if f["node"] == node]


def detail(found: list[dict[str, str]], node: str, problem: str) -> str:
    return next(f["detail"] for f in found if f["node"] == node and f["problem"] == problem)


def test_doctor_on_a_clean_store_says_so_and_exits_0(gpu: PluginDir) -> None:
    gpu.ok("add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3090": 2}}})
    gpu.ok("set-node-resource-usage", {"nodename": "n1", "resource_request": {"prod_count_map": {"nvidia-3090": 2}}})
    done = doctor(gpu)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"no problems found under {gpu.key('')}\n"
    assert json.loads(doctor(gpu, "--json").stdout) == {"directory": gpu.key(""), "records": 1, "findings": []}


def test_doctor_never_reports_a_write_token_left_without_its_record(gpu: PluginDir) -> None:
    # The Go remove-node deletes the record and leaves the token a Python write put beside it.
    gpu.ok("add-node", {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3090": 2}}})
    token = f"{gpu.prefix}/write-token/gpu/n1"
    assert gpu.etcd.get(token) is not None
    gpu.etcd.call("/v3/kv/deleterange", {"key": b64(gpu.key("n1").encode())})
    gpu.ok("add-node", {"nodename": "n2", "resource": {"prod_count_map": {"nvidia-3090": 2}}})
    done = doctor(gpu)
    assert (done.returncode, done.stdout) == (0, f"no problems found under {gpu.key('')}\n")
    gpu.ok("remove-node", {"nodename": "n2"})
    tombstone = gpu.etcd.get(f"{gpu.prefix}/write-token/gpu/n2")
    assert tombstone is not None and tombstone.startswith("removed.")  # remove-node leaves its tombstone
    assert "write-token" not in doctor(gpu).stdout  # no record left ("0 records"), tombstones or not


def test_doctor_finds_each_kind_of_gpu_problem(gpu: PluginDir) -> None:
    seed(gpu.etcd, gpu.key("garbage"), b"\xff not json")
    seed(gpu.etcd, gpu.key("huge"), b'{"capacity":{"prod_count_map":{"a100":9223372036854775808}}}')
    seed(gpu.etcd, gpu.key("typed"), b'{"capacity":{"prod_count_map":{"a100":"2"}}}')
    seed(gpu.etcd, gpu.key("floaty"), b'{"capacity":{"prod_count_map":{"a100":2.0}},"usage":{"prod_count_map":{}}}')
    seed(gpu.etcd, gpu.key("over"), b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":3}}}')
    seed(gpu.etcd, gpu.key("minus"), b'{"capacity":{"prod_count_map":{"a100":-1}},"usage":{"prod_count_map":{}}}')
    seed(gpu.etcd, gpu.key("stray"), b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"t4":1}}}')
    seed(gpu.etcd, gpu.key("zero"), b'{"capacity":{"prod_count_map":{"a100":0}},"usage":{"prod_count_map":{}}}')
    gpu.ok("add-node", {"nodename": "fine", "resource": {"prod_count_map": {"a100": 2}}})
    found = findings(gpu)
    assert kinds(found, "garbage") == ["unreadable"]
    assert "invalid JSON" in detail(found, "garbage", "unreadable")
    assert kinds(found, "huge") == ["unreadable", "beyond-int64"]
    assert "9223372036854775808" in detail(found, "huge", "beyond-int64")
    assert kinds(found, "typed") == ["unreadable"]
    assert "Go reference cannot read it either" in detail(found, "typed", "unreadable")
    # Python reads 2.0 as 2; Go's decoder refuses a fraction in an int field.
    assert kinds(found, "floaty") == ["go-undecodable"]
    assert detail(found, "floaty", "go-undecodable").startswith('capacity.prod_count_map["a100"] is 2.0')
    assert kinds(found, "over") == ["usage-above-capacity"]
    assert detail(found, "over", "usage-above-capacity") == "a100: usage 3 > capacity 2"
    assert kinds(found, "minus") == ["negative"]
    assert kinds(found, "stray") == ["usage-without-capacity"]
    # What the store's own check before a write refuses is named in its words.
    assert kinds(found, "zero") == ["write-refused"]
    assert "count is less than or equal to zero" in detail(found, "zero", "write-refused")
    assert kinds(found, "fine") == []
    # One command per node repairs all of its problems: the record rewritten whole, without reading it.
    assert {f["repair"] for f in found} == {"set-node-resource-info"}
    over = next(f["command"] for f in found if f["node"] == "over")
    assert over == (
        """echo '{"nodename":"over","capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":2}}}'"""
        f" | {this(gpu)} set-node-resource-info"
    )


def test_doctor_finds_each_kind_of_storage_problem(tmp_path: Path, etcd: DevEtcd, prefix: str) -> None:
    storage = PluginDir("storage", tmp_path, etcd, prefix)
    disk = '{"device":"/dev/vda","mounts":["/data0"],"read_IOPS":10,"write_IOPS":10,"read_bps":1,"write_bps":1}'
    capacity = f'{{"volumes":{{"/data0":100}},"disks":[{disk}],"storage":1000}}'
    seed(etcd, storage.key("not-object"), b"[1,2]")
    seed(etcd, storage.key("huge"), b'{"capacity":{"volumes":{},"disks":[],"storage":99999999999999999999}}')
    seed(etcd, storage.key("typed"), b'{"capacity":{"volumes":[],"disks":[],"storage":1}}')
    seed(etcd, storage.key("exp"), b'{"capacity":{"volumes":{},"disks":[],"storage":1e3},"usage":null}')
    seed(etcd, storage.key("over"), f'{{"capacity":{capacity},"usage":{{"volumes":{{"/data0":200}},"storage":2000,'
                                    f'"disks":[{{"device":"/dev/vda","read_IOPS":20}}]}}}}'.encode())  # fmt: skip
    seed(etcd, storage.key("minus"), f'{{"capacity":{capacity},"usage":{{"storage":-5}}}}'.encode())
    seed(etcd, storage.key("stray"), f'{{"capacity":{capacity},"usage":{{"volumes":{{"/data9":1}},'
                                     f'"disks":[{{"device":"/dev/vdz","write_bps":1}}]}}}}'.encode())  # fmt: skip
    seed(etcd, storage.key("no-capacity"), b'{"capacity":null,"usage":{"volumes":{},"disks":[],"storage":0}}')
    storage.ok("add-node", {"nodename": "fine", "resource": {"volumes": ["/data0:1T"], "storage": "1T"}})
    found = findings(storage)
    assert kinds(found, "not-object") == ["unreadable"]
    assert kinds(found, "huge") == ["unreadable", "beyond-int64"]
    assert kinds(found, "typed") == ["unreadable"]
    assert kinds(found, "exp") == ["go-undecodable"]
    assert detail(found, "exp", "go-undecodable").startswith("capacity.storage is 1e3")
    assert kinds(found, "over") == ["usage-above-capacity"] * 3
    assert {f["detail"] for f in found if f["node"] == "over"} == {
        "storage: usage 2000 > capacity 1000",
        "volume /data0: usage 200 > capacity 100",
        "disk /dev/vda read_IOPS: usage 20 > capacity 10",
    }
    assert kinds(found, "minus") == ["negative"]
    assert detail(found, "minus", "negative") == "usage storage is -5"
    assert kinds(found, "stray") == ["usage-without-capacity"] * 2
    # A record without capacity cannot be read (decision 9), so the doctor reports it with the read's reason.
    assert kinds(found, "no-capacity") == ["unreadable"]
    assert "capacity" in detail(found, "no-capacity", "unreadable")
    assert kinds(found, "fine") == []


def test_doctor_table_shows_each_finding_and_after_each_node_the_command_that_repairs_it(gpu: PluginDir) -> None:
    seed(gpu.etcd, gpu.key("over"), b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":3}}}')
    seed(gpu.etcd, gpu.key("garbage"), b"{")
    done = doctor(gpu)
    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    # The decoder's words for the bad JSON, cut short to fit 120 columns.
    assert lines[1].startswith("garbage  unreadable            invalid JSON") and lines[1].endswith("…")
    assert len(lines[1]) == 120
    assert lines[:1] + lines[2:] == [
        "NODE     PROBLEM               DETAIL",
        """  echo '{"nodename":"garbage","capacity":{"prod_count_map":{}},"usage":{"prod_count_map":{}}}' |""",
        f"    {this(gpu)} set-node-resource-info",
        # Nothing of the record could be read: the operator must give the node its capacity again.
        """  # this writes capacity {"prod_count_map":{}}: set the real one again after it (set-node-resource-capacity)""",  # noqa: E501
        "over     usage-above-capacity  a100: usage 3 > capacity 2",
        """  echo '{"nodename":"over","capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":2}}}' |"""  # noqa: E501
        "",
        f"    {this(gpu)} set-node-resource-info",
        f"2 problem(s) on 2 node(s) under {gpu.key('')}",
        "each node's indented command repairs it: check the numbers it writes, then paste it",
    ]
    # --verbose: the detail whole.
    assert "(the Go reference cannot read it either)" in doctor(gpu, "--verbose").stdout


def test_doctor_flags_keys_that_name_no_node_and_prints_what_removes_them(gpu: PluginDir) -> None:
    record = b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{}}}'
    seed(gpu.etcd, gpu.key(""), record)
    seed(gpu.etcd, gpu.key("rack7/n1"), record)
    found = findings(gpu)
    assert [(f["node"], f["problem"]) for f in found] == [("", "empty-node-name"), ("rack7/n1", "nested-key")]
    assert found[0]["command"] == f"etcdctl --endpoints={gpu.etcd.url} del {gpu.key('')}"
    assert found[1]["command"] == f"""echo '{{"nodename":"rack7/n1"}}' | {this(gpu)} remove-node"""


def test_doctor_with_nothing_under_the_prefix_says_so_and_fails(gpu: PluginDir) -> None:
    """A mistyped etcd.prefix checks 0 records: that is no clean bill of health."""
    gpu.configure(etcd={"machines": [gpu.etcd.url], "prefix": "/typo"})
    seed(gpu.etcd, f"{gpu.prefix}/resource/gpu/n1", b'{"capacity":{"prod_count_map":{"a100":2}}}')
    done = doctor(gpu)
    said = "0 records under /typo/resource/gpu/ — is etcd.prefix right?\n"
    assert (done.returncode, done.stdout, done.stderr) == (1, said, "")
    assert doctor(gpu, "--json").returncode == 1


GPU_FAULTS = {
    "garbage": b"\xff not json",
    "not-object": b"[1,2]",
    "huge": b'{"capacity":{"prod_count_map":{"a100":9223372036854775808}}}',
    "typed": b'{"capacity":{"prod_count_map":{"a100":"2"}}}',
    "floaty": b'{"capacity":{"prod_count_map":{"a100":2.0}},"usage":{"prod_count_map":{"a100":1.0}}}',
    "over": b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":3}}}',
    "minus": b'{"capacity":{"prod_count_map":{"a100":-1,"t4":2}},"usage":{"prod_count_map":{"t4":-1}}}',
    "stray": b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"t4":1}}}',
    "zero": b'{"capacity":{"prod_count_map":{"a100":0}},"usage":{"prod_count_map":{}}}',
    "it's": b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":5}}}',
    "": b'{"capacity":{"prod_count_map":{"a100":2}}}',
    "rack7/n1": b'{"capacity":{"prod_count_map":{"a100":2}}}',
}
_DISK = '{"device":"/dev/vda","mounts":["/data0"],"read_IOPS":10,"write_IOPS":10,"read_bps":1,"write_bps":1}'
_CAPACITY = f'{{"volumes":{{"/data0":100}},"disks":[{_DISK}],"storage":1000}}'
STORAGE_FAULTS = {
    "not-object": b"[1,2]",
    "garbage": b"{",
    "huge": b'{"capacity":{"volumes":{},"disks":[],"storage":99999999999999999999}}',
    "typed": b'{"capacity":{"volumes":[],"disks":[],"storage":1}}',
    "exp": b'{"capacity":{"volumes":{},"disks":[],"storage":1e3},"usage":null}',
    "over": (
        f'{{"capacity":{_CAPACITY},"usage":{{"volumes":{{"/data0":200}},"storage":2000,'
        '"disks":[{"device":"/dev/vda","read_IOPS":20}]}}'
    ).encode(),
    "minus": f'{{"capacity":{_CAPACITY},"usage":{{"storage":-5}}}}'.encode(),
    "minus-disk": b'{"capacity":{"volumes":{"/data0":-1},"storage":5,"disks":[{"device":"/dev/vdb","write_bps":-3}]}}',
    "stray": (
        f'{{"capacity":{_CAPACITY},"usage":{{"volumes":{{"/data9":1}},'
        '"disks":[{"device":"/dev/vdz","write_bps":1}]}}'
    ).encode(),
    "no-capacity": b'{"capacity":null,"usage":{"volumes":{},"disks":[],"storage":0}}',
    "": b'{"capacity":{"volumes":{},"disks":[],"storage":1}}',
    "a/b": b'{"capacity":{"volumes":{},"disks":[],"storage":1}}',
}


def commands(table: str) -> list[str]:
    """The repair commands of doctor's table: each run of indented lines, exactly as printed."""
    found: list[str] = []
    current: list[str] = []
    for line in table.splitlines():
        if line.startswith(" "):
            current.append(line)
        elif current:
            found.append("\n".join(current))
            current = []
    return found


@pytest.mark.parametrize(("plugin", "faults"), [("gpu", GPU_FAULTS), ("storage", STORAGE_FAULTS)])
def test_each_repair_doctor_prints_pastes_as_printed_and_leaves_the_store_clean(
    plugin: str, faults: dict[str, bytes], tmp_path: Path, etcd: DevEtcd, prefix: str
) -> None:
    where = PluginDir(plugin, tmp_path, etcd, prefix)
    os.symlink(where.exe, tmp_path / f"resource-{plugin}")  # core's layout: the executable beside its yaml
    for node, value in faults.items():
        seed(etcd, where.key(node), value)
    where.ok("add-node", {"nodename": "fine", "resource": {"prod_count_map": {"a100": 2}} if plugin == "gpu" else {
        "volumes": ["/data0:1T"], "storage": "1T"}})  # fmt: skip
    found = findings(where)
    assert {f["node"] for f in found} == set(faults), "every seeded fault is found"
    table = doctor(where)
    assert table.returncode == 1
    # The command's own line is as long as the paths this test's directories have (core's are short).
    assert all(len(line) <= 120 or f" {where.exe} --config " in line for line in table.stdout.splitlines()), (
        table.stdout
    )
    pasted = commands(table.stdout)
    assert len(pasted) == len(faults), "one command per node"
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(binary("etcdctl")), os.environ.get("PATH", "")])}
    env.pop("ERU_RESOURCE_CONFIG_PATH", None)
    elsewhere = tmp_path / "elsewhere"  # an operator's shell is rarely in the plugin directory
    elsewhere.mkdir()
    for command in pasted:
        done = subprocess.run(["sh", "-c", command], cwd=elsewhere, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, (command, done.stderr)
    after = doctor(where)
    assert (after.returncode, after.stdout) == (0, f"no problems found under {where.key('')}\n")
    # What was readable and right is kept: the capacity whose usage ran over it.
    capacity = where.ok("get-node-resource-info", {"nodename": "over"})["capacity"]
    assert capacity == json.loads(faults["over"])["capacity"]


def test_doctor_writes_nothing(gpu: PluginDir) -> None:
    seed(gpu.etcd, gpu.key("over"), b'{"capacity":{"prod_count_map":{"a100":2}},"usage":{"prod_count_map":{"a100":3}}}')
    before = (revision(gpu.etcd), gpu.etcd.dump(gpu.key("")))
    assert doctor(gpu).returncode == 1
    assert (revision(gpu.etcd), gpu.etcd.dump(gpu.key(""))) == before


def test_doctor_is_no_verb_core_sees(gpu: PluginDir) -> None:
    assert "doctor" not in gpu.ok("verbs")


def test_doctor_without_etcd_fails_with_one_line(gpu: PluginDir, silent_endpoint: str) -> None:
    timeouts = {"total_timeout": 1, "request_timeout": 0.5}
    gpu.configure(etcd={"machines": [silent_endpoint], "prefix": gpu.prefix, **timeouts})
    done = doctor(gpu)
    assert done.returncode == 128
    assert done.stdout == ""
    assert done.stderr.startswith("resource-gpu doctor: ") and done.stderr.count("\n") == 1


def test_json_is_refused_outside_doctor(gpu: PluginDir) -> None:
    done = subprocess.run([gpu.exe, "verbs", "--json"], cwd=gpu.path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--json" in done.stderr


counts = st.dictionaries(st.sampled_from(["nvidia-3090", "a100", "t4"]), st.integers(1, 2**62), max_size=3)


@given(counts, st.data())
def test_records_the_plugin_writes_have_no_findings(capacity: dict[str, int], data: Any) -> None:
    usage = {p: data.draw(st.integers(1, k)) for p, k in capacity.items() if data.draw(st.booleans())}
    records = GpuRecord
    stored = records.encode(records.checked(GpuRecord(capacity, usage)))
    found = examine("n", stored, records.decode, gpu_checks.GO_RECORD, gpu_checks.check_record, records.checked)
    assert found == []


@given(counts, st.sampled_from(["nvidia-3090", "a100", "t4"]), st.integers(1, 5))
def test_usage_beyond_capacity_is_always_found(capacity: dict[str, int], product: str, extra: int) -> None:
    usage = {product: capacity.get(product, 0) + extra}
    records = GpuRecord
    stored = records.encode(GpuRecord(capacity, usage))
    found = examine("n", stored, records.decode, gpu_checks.GO_RECORD, gpu_checks.check_record)
    expected = "usage-above-capacity" if product in capacity else "usage-without-capacity"
    assert [f.kind for f in found] == [expected]


# Numbers of every kind a hand can store: in range, negative, past int64, fractions, strings, null.
odd_values: list[Any] = [2**63, -(2**63) - 1, 2.0, 1.5, 1e3, "2", None, True, [], {}]
stored_numbers: st.SearchStrategy[Any] = st.one_of(st.integers(-5, 2**63 + 5), st.sampled_from(odd_values))


@given(st.dictionaries(st.sampled_from(["a100", "t4", ""]), stored_numbers, max_size=3), st.data())
def test_the_gpu_record_doctor_proposes_is_clean_whatever_was_stored(capacity: dict[str, Any], data: Any) -> None:
    usage = data.draw(st.dictionaries(st.sampled_from(["a100", "t4", "h100"]), stored_numbers, max_size=3))
    stored = json.dumps({"capacity": {"prod_count_map": capacity}, "usage": {"prod_count_map": usage}}).encode()
    proposal = json.dumps(gpu_checks.corrected(salvage(stored, gpu_checks.GO_RECORD))).encode()
    record = GpuRecord
    assert examine("n", proposal, record.decode, gpu_checks.GO_RECORD, gpu_checks.check_record, record.checked) == []


@given(
    st.dictionaries(st.sampled_from(["/data0", "/data1", "data", "", "/a:b"]), stored_numbers, max_size=2),
    st.lists(st.fixed_dictionaries({"device": st.sampled_from(["/dev/vda", "/dev/vdb", "", 3]),
                                    "read_IOPS": stored_numbers, "write_bps": stored_numbers}), max_size=3),
    stored_numbers,
    st.data(),
)  # fmt: skip
def test_the_storage_record_doctor_proposes_is_clean_whatever_was_stored(
    volumes: dict[str, Any], disks: list[Any], storage: Any, data: Any
) -> None:
    usage = {
        "volumes": data.draw(st.dictionaries(st.sampled_from(["/data0", "/data9"]), stored_numbers, max_size=2)),
        "disks": data.draw(
            st.lists(
                st.fixed_dictionaries(
                    {"device": st.sampled_from(["/dev/vda", "/dev/vdz"]), "read_IOPS": stored_numbers}
                ),
                max_size=2,
            )
        ),
        "storage": data.draw(stored_numbers),
    }
    stored = json.dumps({"capacity": {"volumes": volumes, "disks": disks, "storage": storage}, "usage": usage})
    proposal = json.dumps(storage_checks.corrected(salvage(stored.encode(), storage_checks.GO_RECORD))).encode()
    record = StorageRecord
    found = examine("n", proposal, record.decode, storage_checks.GO_RECORD, storage_checks.check_record, record.checked)
    assert found == []
