"""Mutated vector requests, for every verb of both plugins, against a real etcd (issue 10, "Done when").

Each example takes a conformance vector's store and request, mutates the request (swapped types, edge
numbers, separators and control characters in strings, lone surrogates, dropped and foreign keys) and
serves it. Whatever the input, the call either

- exits 0 with valid UTF-8 JSON that matches the verb's response schema, or
- exits 128 with exactly one stderr line, no traceback and no "internal error", and leaves the whole
  keyspace of its own etcd exactly as it was: every value and every mod revision, and no new revision.

Most calls are served in-process through ``cli.answer`` (the whole call but the process: config, stdin,
schemas, verb, store); a share runs through the built executables, where stdout and stderr are real
bytes. Each test counts its own calls and how they ended, so it holds run alone or in any order. CI
replays a fixed set (the ``ci`` profile in conftest.py); ``make test-deep`` serves 8,000 calls per plugin,
and ``RESOURCE_FUZZ_EXAMPLES=20000`` explores more.
"""

from __future__ import annotations

import base64
import functools
import http.client
import json
import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resource_extend.command import cli
from resource_extend.formats import validation
from resource_extend_dev.conformance import load_cases, run_plugin, write_config
from resource_extend_dev.devetcd import DevEtcd
from tests.support import DEEP, PLUGINS, TABLES, VECTORS, executable

# The issue's 2,000 calls per plugin in every run (in-process calls cost milliseconds); 8,000 in a deep run.
IN_PROCESS_EXAMPLES = int(os.environ.get("RESOURCE_FUZZ_EXAMPLES", 8000 if DEEP else 2000))
EXECUTABLE_EXAMPLES = max(50, IN_PROCESS_EXAMPLES // 40)
PREFIX = "/fuzz"

CASES = [c for c in load_cases(sorted(str(p) for p in VECTORS.glob("*.jsonl"))) if "stdin_raw" not in c]
# Every verb gets a seed even without a vector (storage calculate-remap has none).
FALLBACK = {"nodename": "n1", "nodenames": ["n1"], "workload_resource": None, "deploy_count": 1}


@functools.cache  # drawn from on every example: the same list each time, built once
def seeds(plugin: str, verb: str) -> list[dict[str, Any]]:
    found = [c for c in CASES if c["plugin"] == plugin and c["verb"] == verb]
    return found or [{"plugin": plugin, "verb": verb, "store": {}, "request": FALLBACK}]


# -- mutations ---------------------------------------------------------------------------------------

FIELDS = [
    "nodename", "nodenames", "resource", "resource_request", "workload_resource", "workload_resource_request",
    "workloads_resource", "info", "capacity", "usage", "delta", "incr", "deploy_count", "nodes", "podname",
    "prod_count_map", "volumes", "volume", "volumes-request", "volumes-limit", "storage", "storage-request",
    "disks", "rm-disks", "volume_plan_request", "volumes_request", "storage_request", "disks_request",
]  # fmt: skip
EDGE_NUMBERS = [0, 1, -1, 2, 2**31, 2**53 + 1, 2**62, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**21, 0.5, 3.0, 1e300]
EDGE_STRINGS = [
    "", "n1", "n2", "rack7/n1", "AUTO", "/", "../../etc", "nvidia-3090", "nvidia-3070", "AUTO:/data:rw:1G",
    "AUTO:/data:rw:-10G", "AUTO:/x:rw,ro:1G", "AUTO:/d:rwm:1T", "/data0:/dir:ro", "a:b:c:d:e:f:g:h:i", "/data0:1T",
    "/data0:4096P", "/dev/vda:/,/data0:1000:1000:1G:1G", "1T", "-1", "10X", "0x10", "1e3", "\ud800", "\udc80",
    "n\x00", "n\n", "\u2028", "é", "x" * 5000,
]  # fmt: skip
INSERTIONS = [":", ",", "\x00", "\n", "\ud800", "\udc80", "/", "..", "-", "9", "X", "é"]

leaves = (
    st.sampled_from(EDGE_NUMBERS)
    | st.sampled_from(EDGE_STRINGS)
    | st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(value: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*here, index))


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = replaced(value[head], rest, new)
    return copy


@st.composite
def mutation(draw: st.DrawFn, value: Any) -> Any:
    path = draw(st.sampled_from(list(paths(value))))
    old = at(value, path)
    kind = draw(st.sampled_from(["replace", "edge", "string", "number", "drop", "add", "wrap", "unwrap"]))
    if kind == "replace":
        return replaced(value, path, draw(values))
    if kind == "edge":
        return replaced(value, path, draw(st.sampled_from(EDGE_NUMBERS + EDGE_STRINGS)))
    if kind == "string" and isinstance(old, str):
        at_index = draw(st.integers(0, len(old)))
        piece = draw(st.sampled_from(INSERTIONS))
        return replaced(value, path, old[:at_index] + piece + old[at_index + draw(st.integers(0, 2)) :])
    if kind == "number" and isinstance(old, (int, float)) and not isinstance(old, bool):
        change = draw(st.sampled_from(["neg", "inc", "dec", "big", "half"]))
        number = {"neg": -old, "inc": old + 1, "dec": old - 1, "big": old * 2**40, "half": old / 2}[change]
        return replaced(value, path, number)
    if kind == "drop" and path:
        parent = at(value, path[:-1])
        if isinstance(parent, dict):
            return replaced(value, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
        return replaced(value, path[:-1], [v for i, v in enumerate(parent) if i != path[-1]])
    if kind == "add" and isinstance(old, dict):
        return replaced(value, path, {**old, draw(st.sampled_from(FIELDS) | st.text(max_size=5)): draw(values)})
    if kind == "wrap":
        return replaced(value, path, draw(st.sampled_from([[old], {"prod_count_map": old}, {"volumes": old}])))
    if kind == "unwrap" and isinstance(old, (list, dict)) and old:
        return replaced(value, path, next(iter(old.values() if isinstance(old, dict) else old)))
    return replaced(value, path, draw(leaves))


@st.composite
def calls(draw: st.DrawFn, plugin: str, verbs: list[str]) -> tuple[str, dict[str, Any], bytes, dict[str, Any]]:
    """(verb, store, stdin bytes, config extra) from a mutated vector of a uniformly drawn verb."""
    verb = draw(st.sampled_from(verbs))
    case = draw(st.sampled_from(seeds(plugin, verb)))
    request: Any = case.get("request", {})
    if draw(st.integers(0, 9)) == 0:  # now and then another verb's request
        request = draw(st.sampled_from([c.get("request", {}) for c in CASES if c["plugin"] == plugin]))
    for _ in range(draw(st.integers(1, 3))):
        request = draw(mutation(request))
    # ASCII escapes exercise the decoder's surrogate handling; raw UTF-8 with surrogatepass sends the
    # invalid bytes themselves.
    if draw(st.booleans()):
        stdin = json.dumps(request).encode()
    else:
        stdin = json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return verb, case.get("store") or {}, stdin, case.get("config") or {}


# -- the store, seen whole ----------------------------------------------------------------------------
# The harness's own etcd requests (a seed when the keyspace is not already the example's store, the keyspace
# after a refusal) go over one kept-alive connection (DevEtcd.call opens one per request), and a seed is one
# transaction (one sync, not one per key), so they cost a fraction of the call they check.


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_PREFIX_END = PREFIX[:-1] + chr(ord(PREFIX[-1]) + 1)
_kept: dict[str, http.client.HTTPConnection] = {}
Keyspace = tuple[int, dict[str, tuple[str, str]]]  # the store revision, and each key's value and mod revision


def gateway(etcd: DevEtcd, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """``etcd.call`` over one connection kept alive for the module (``fuzz_etcd`` closes it)."""
    connection = _kept.get(etcd.url)
    if connection is None:
        connection = _kept[etcd.url] = http.client.HTTPConnection("127.0.0.1", etcd.port, timeout=10)
    connection.request("POST", path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    reply = connection.getresponse()
    data = reply.read()
    assert reply.status == 200, (path, reply.status, data[:500])
    doc: dict[str, Any] = json.loads(data or b"{}")
    return doc


def keyspace(etcd: DevEtcd) -> Keyspace:
    """The store revision and every key's value and mod revision (this etcd serves only this file)."""
    reply = gateway(etcd, "/v3/kv/range", {"key": _b64("\0"), "range_end": _b64("\0")})
    kvs = {
        base64.b64decode(kv["key"]).decode(): (kv.get("value", ""), kv["mod_revision"]) for kv in reply.get("kvs") or []
    }
    return int(reply["header"]["revision"]), kvs


class Seeder:
    """Makes everything under PREFIX exactly a vector's store (what its call starts from) and says what the
    whole keyspace then is: one transaction deletes the keys the store lacks and puts the records that differ,
    and the keyspace after it follows from its answer. What a refused call left (checked equal to what it
    started from) is the next example's start, so only an answered call's aftermath is read again."""

    def __init__(self, etcd: DevEtcd, plugin: str) -> None:
        self.etcd, self.plugin = etcd, plugin
        self.known: Keyspace | None = None

    def seed(self, store: dict[str, Any]) -> Keyspace:
        now, self.known = self.known or keyspace(self.etcd), None
        wanted = {f"{PREFIX}/resource/{self.plugin}/{node}": _b64(json.dumps(record)) for node, record in store.items()}
        held = {key: value for key, (value, _) in now[1].items() if PREFIX <= key < _PREFIX_END}
        gone = [key for key in held if key not in wanted]
        put = {key: value for key, value in wanted.items() if held.get(key) != value}
        if not gone and not put:
            return now
        ops: list[dict[str, Any]] = [{"request_delete_range": {"key": _b64(key)}} for key in gone]
        ops += [{"request_put": {"key": _b64(key), "value": value}} for key, value in put.items()]
        revision = int(gateway(self.etcd, "/v3/kv/txn", {"success": ops})["header"]["revision"])
        assert revision == now[0] + 1, (revision, now[0])  # nothing else wrote in between
        kvs = {key: held_kv for key, held_kv in now[1].items() if key not in gone}
        kvs.update({key: (value, str(revision)) for key, value in put.items()})
        return revision, kvs

    def unchanged(self, before: Keyspace) -> None:
        """A refused call left the keyspace as it was: the next example starts from it."""
        self.known = before


@pytest.fixture(scope="module")
def fuzz_etcd() -> Iterator[DevEtcd]:
    with DevEtcd() as server:
        yield server
        kept = _kept.pop(server.url, None)
        if kept is not None:
            kept.close()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# -- the checks ----------------------------------------------------------------------------------------


def check_outcome(
    plugin: str, verb: str, status: int, stdout: bytes, stderr: bytes, etcd: DevEtcd, before: Any
) -> None:
    assert b"Traceback" not in stdout + stderr
    if status == 0:
        assert stderr == b"", stderr
        response = json.loads(stdout.decode("utf-8"))  # strict UTF-8
        validation.check(plugin, verb, "response", response)
        return
    assert status == 128, (status, stderr)
    assert stdout == b""
    text = stderr.decode("utf-8")
    lines = text.split("\n")
    assert len(lines) == 2 and lines[1] == "", text
    assert lines[0].startswith(f"resource-{plugin} {verb}: "), text
    assert "internal error" not in lines[0], text
    assert keyspace(etcd) == before, f"{verb} failed ({lines[0]}) yet changed the keyspace"


def outcome_kind(status: int, stderr: bytes) -> str:
    if status == 0:
        return "answered"
    return "refused by the schema" if b"does not match the schema" in stderr else "refused by the verb"


def configurer(work: Path, etcd: DevEtcd, plugin: str) -> Callable[[dict[str, Any]], str]:
    """``configure(extra)`` writes the plugin's yaml with ``extra`` (a vector's config) and returns its path; it
    writes only when ``extra`` differs from the last it wrote (most vectors have none): each test makes its own."""
    written: list[str] = []

    def configure(extra: dict[str, Any]) -> str:
        wanted = json.dumps(extra, sort_keys=True)
        if written != [wanted]:
            write_config(str(work), plugin, etcd.url, PREFIX, extra or None)
            written[:] = [wanted]
        return str(work / f"{plugin}.yaml")

    return configure


def served_cleanly(plugin: str, examples: int, serve: Callable[[st.DataObject], tuple[int, bytes]]) -> Counter[str]:
    """Run ``serve`` (one mutated call, checked; its status and stderr) on ``examples`` hypothesis draws, and
    count how the calls ended: each test checks its own budget, whatever ran before it."""
    served: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        status, stderr = serve(data)
        served[outcome_kind(status, stderr)] += 1

    one()
    print(f"{plugin} fuzz outcomes: {dict(served)}")
    return served


@pytest.mark.parametrize("plugin", PLUGINS)
def test_mutated_vector_requests_served_in_process_answer_cleanly(plugin: str, fuzz_etcd: DevEtcd, work: Path) -> None:
    table = TABLES[plugin]
    configure, seeder = configurer(work, fuzz_etcd, plugin), Seeder(fuzz_etcd, plugin)

    def serve(data: st.DataObject) -> tuple[int, bytes]:
        verb_name, store, stdin, extra = data.draw(calls(plugin, [v.name for v in table.verbs]))
        verb = table.verb(verb_name)
        assert verb is not None
        config_path = configure(extra)
        before = seeder.seed(store)
        status, response, error = cli.answer(table.plugin, verb, config_path, lambda _limit: stdin)
        stderr = (error + "\n").encode("utf-8") if status else b""
        check_outcome(plugin, verb_name, status, response, stderr, fuzz_etcd, before)
        if status:
            seeder.unchanged(before)
        return status, stderr

    served = served_cleanly(plugin, IN_PROCESS_EXAMPLES, serve)
    # The issue's budget (2,000 calls per plugin), and mutations that reach past the schema: plenty answered,
    # plenty refused by the verbs themselves. Since decision 19 the schemas refuse every foreign key a
    # mutation adds, so fewer answer than before (18 % of CI's fixed set for gpu, 20-25 % before): an eighth.
    total = sum(served.values())
    assert total >= min(IN_PROCESS_EXAMPLES, 2000), served
    assert served["answered"] >= total // 8, served
    assert served["refused by the verb"] >= total // 10, served


@pytest.mark.parametrize("plugin", PLUGINS)
def test_mutated_vector_requests_through_the_executables_answer_cleanly(
    plugin: str, fuzz_etcd: DevEtcd, work: Path
) -> None:
    verbs = [*(v.name for v in TABLES[plugin].verbs), "name", "verbs"]
    configure, seeder = configurer(work, fuzz_etcd, plugin), Seeder(fuzz_etcd, plugin)

    def serve(data: st.DataObject) -> tuple[int, bytes]:
        verb, store, stdin, extra = data.draw(calls(plugin, verbs))
        configure(extra)
        before = seeder.seed(store)
        done = subprocess.run([executable(plugin), verb], input=stdin, cwd=work, capture_output=True, timeout=30)
        check_outcome(plugin, verb, done.returncode, done.stdout, done.stderr, fuzz_etcd, before)
        if done.returncode:
            seeder.unchanged(before)
        if verb in ("name", "verbs"):
            assert done.returncode == 0
        return done.returncode, done.stderr

    served = served_cleanly(plugin, EXECUTABLE_EXAMPLES, serve)
    assert sum(served.values()) >= 50, served  # a share of the calls as real processes
    assert served["answered"] and served["refused by the verb"], served


def test_the_fuzz_budget_meets_the_issue() -> None:
    # At least 2,000 in-process calls per plugin and 50 through the executables, unless asked for fewer.
    assert IN_PROCESS_EXAMPLES >= 2000 or "RESOURCE_FUZZ_EXAMPLES" in os.environ
    assert EXECUTABLE_EXAMPLES >= 50


def test_the_process_helper_serves_a_real_executable(fuzz_etcd: DevEtcd, work: Path) -> None:
    # One sanity call through the real process helper, so a broken executable cannot pass unnoticed.
    write_config(str(work), "gpu", fuzz_etcd.url, PREFIX)
    out = run_plugin(executable("gpu"), "calculate-remap", b"{}", str(work))
    assert (out.status, out.stdout) == (0, '{"engine_params_map":{}}')
