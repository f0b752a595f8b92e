"""The import budget of a call: every module a store verb or a calculate verb loads is listed here, with why.

Core starts the plugin once per call, so every import is paid on every call (issue 13: ``dataclasses`` and
``typing`` alone cost ~10 ms of a ~100 ms call; the call path uses neither, nor ``decimal``: see
resource_extend/typeshim.py and build.py's ``NeverDecimal``). The executable runs as its shebang runs it
(``python -IS -c`` and the line of the shebang, or for a build with an absolute interpreter the archive's
``__main__`` run the way the interpreter runs a zipapp); what it adds to
``sys.modules`` beyond a bare ``python -IS`` must be in ``BUDGET``. A new import fails the test naming the
module: cut it, import it lazily where it is needed, or add it here with its reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import plugins as registry
from resource_extend_dev.devetcd import DevEtcd
from tests.support import PLUGINS, ROOT, executable


def _budget(table: str) -> dict[str, str]:
    """``reason`` lines, each followed by indented lines of the module names it accounts for."""
    budget: dict[str, str] = {}
    reason = ""
    for line in table.strip("\n").splitlines():
        if line.startswith(" "):
            budget.update(dict.fromkeys(line.split(), reason))
        else:
            reason = line.strip()
    return budget


BUDGET = _budget(
    """
the registry and the entry modules (the shebang's -c execs the stub, which runs the start compiled for this minor)
    plugins plugins.gpu plugins.storage _resource_extend_boot
the command line, verb table, the executable's start, config and its work bounds, JSON, schema checks, store and
its early read, the node verbs both plugins share (and the packages that hold them), and what a plugin's manifest is
    resource_extend.plugin
    resource_extend resource_extend.command resource_extend.formats resource_extend.store
    resource_extend.command.cli resource_extend.errors resource_extend.command.verb resource_extend.config
    resource_extend.command.executable resource_extend.bounds
    resource_extend.formats.yamlsubset resource_extend.formats.jsonio resource_extend.formats.validation
    resource_extend.formats.schemaerror resource_extend.formats.decoding resource_extend.store.nodes
    resource_extend.command.prefetch resource_extend.envelope resource_extend.command.nodeverbs
    resource_extend.typeshim
the node verbs that keep a record rather than serve a workload (add-node, fix-node-resource, metrics, ...)
    resource_extend.command.nodeupkeep
the schema check of the documents that grow with the nodes (get-metrics, get-nodes-deploy-capacity), on representatives
    resource_extend.formats.bigdocs
the request of the verb that runs, read by its family's module (a call creates no other verb's request classes)
    resource_extend.envelope.nodeinfo resource_extend.envelope.sides resource_extend.envelope.plans
etcd over its JSON gateway: endpoints (parsed by config), the KV protocol, the retry policy, the client, HTTP/1.1
(the socket's half, and the bounded parser of its replies), base64 of its keys and values
    resource_extend.store.etcd resource_extend.endpoints resource_extend.store.etcd.kv
    resource_extend.store.etcd.policy resource_extend.store.etcd.transport resource_extend.store.etcd.gateway
    resource_extend.store.etcd.messages resource_extend.store.etcd.connection resource_extend.store.etcd.dial
    resource_extend.store.etcd.base64text resource_extend.store.etcd.http1
reads of many nodes' records (get-metrics, get-nodes-deploy-capacity, ...): the store's and the gateway's halves
of a bulk read and its plan, imported when one starts (a single-node call never loads them); its span reads
over gRPC on h2c (HTTP/2, HPACK, the RangeRequest and RangeResponse messages), from a plain http:// member
    resource_extend.store.etcd.gatewaybulk resource_extend.store.etcd.chunks resource_extend.store.etcd.h2
    resource_extend.store.etcd.h2.client resource_extend.store.etcd.h2.hpack resource_extend.store.etcd.h2.protobuf
the GPU plugin: its manifest and the counted code's record, payloads and node verbs (which use goarith.ratio)
    resource_extend.gpu resource_extend.gpu.manifest resource_extend.gpu.record
    resource_extend.gpu.prodmap resource_extend.gpu.payloads resource_extend.gpu.node_verbs
    resource_extend.goarith
the storage plugin: its manifest, record (which decodes volumes, disks and bindings) and node verbs
    resource_extend.storage resource_extend.storage.manifest resource_extend.storage.record
    resource_extend.storage.size resource_extend.storage.disk
    resource_extend.storage.volume resource_extend.storage.binding resource_extend.storage.plan
    resource_extend.storage.workload resource_extend.storage.payloads resource_extend.storage.node_verbs
a node resource in request form (add-node, set-node-resource-capacity, a resource_request), imported when one is read
    resource_extend.storage.node_request
metrics, imported when get-metrics or get-metrics-description runs
    resource_extend.metrics resource_extend.gpu.metrics resource_extend.storage.metrics
calculate verbs and their schedulers, imported when one runs
    resource_extend.gpu.calculate_verbs resource_extend.gpu.scheduler resource_extend.storage.calculate_verbs
    resource_extend.storage.scheduler resource_extend.storage.scheduler.workloads
    resource_extend.storage.scheduler.count resource_extend.storage.scheduler.resize
    resource_extend.storage.scheduler.placement resource_extend.storage.scheduler.affinity
    resource_extend.storage.scheduler.assembly resource_extend.storage.scheduler.passes
    resource_extend.storage.scheduler.enumeration resource_extend.storage.scheduler.outcome
    resource_extend.storage.scheduler.quotaplans
    resource_extend.storage.scheduler.classes resource_extend.storage.scheduler.host
    resource_extend.storage.scheduler.limits resource_extend.storage.workload_request
    resource_extend.command.deploy
get-nodes-deploy-capacity's answer and explain's Limit, its request and calculate-realloc's: those verbs' only
    resource_extend.capacity resource_extend.envelope.capacity resource_extend.envelope.realloc
the C halves of json and socket (jsonio, store/etcd/connection.py): their Python wrappers import re, enum,
functools and collections, which cost a call more than its etcd round trip
    _json _socket
base64's C half, imported by store/etcd/base64text.py for bulk reads only (get-metrics, get-nodes-deploy-capacity of
more than a few nodes), where it is faster per record: a single-node call codes its few strings without it
    binascii
"""
)
# Only a build whose absolute interpreter's path leaves no room for -c's command in the shebang line runs the
# archive as a zipapp, and the interpreter imports these to do so.
ZIPAPP_RUN = _budget(
    """
runpy: how the interpreter runs a zipapp's __main__
    runpy importlib importlib._abc importlib._bootstrap importlib._bootstrap_external importlib.machinery
    importlib.util warnings types contextlib functools _functools collections _collections itertools
    keyword operator _operator reprlib
and the os module, which runpy and importlib.util import (a call through the shebang's -c never does)
    os os.path posixpath genericpath stat _stat _collections_abc
"""
)
# What no verb call may load, checked on every call test_a_call_imports_only_the_modules_in_the_budget makes:
# what issue 13 measured, what only help, doctor, explain, a failure, source checkouts or the grpc transport
# may load, and the modules of type declarations only. Of the etcd client: what follows a failure (failing,
# retry, tls's alerts), auth or several endpoints (greeting, race).
NEVER = {"yaml", "pathlib", "fastjsonschema", "grpc", "etcd3", "resource_extend.command.verbhelp",
         "resource_extend.formats.schemafiles", "resource_extend.store.etcd.grpc", "resource_extend.store.etcd.tls",
         "ssl", "resource_extend.command.helptext", "resource_extend.plugin.protocols",
         "resource_extend.plugin.answers", "resource_extend.envelope.protocol", "resource_extend.store.etcd.protocol",
         "resource_extend.store.etcd.failing", "resource_extend.store.etcd.greeting", "resource_extend.store.etcd.race",
         "resource_extend.store.etcd.retry", "resource_extend.tools", "resource_extend.tools.doctor",
         "resource_extend.tools.explain", "resource_extend.plugin.diagnosis", "resource_extend.boot.start",
         "site", "zipfile",
         "typing", "dataclasses", "inspect", "decimal", "re", "json", "socket", "base64", "enum",
         "functools", "collections", "contextlib", "importlib", "warnings", "selectors", "runpy",
         "collections.abc", "_thread", "threading"}  # fmt: skip
VALIDATORS = tuple(f"resource_extend._validators_{plugin}" for plugin in PLUGINS)

# Records the modules a call leaves in sys.modules, however it ends (sys.exit, or posix._exit after the
# flush), and how many classes of the ast module exist: the first compile() of a process builds them (~120
# classes, a third of what a call cost above the bare interpreter), so a call must never compile. The probe
# itself imports nothing a bare interpreter has not (no os), so that a call importing os shows.
PROBE = """
import gc, posix, sys
out, exe = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]

def report():
    with open(out, "w") as f:
        for name, module in sorted(sys.modules.items()):
            loader = type(getattr(module, "__loader__", None)).__name__
            f.write("%s\\t%s\\t%s\\n" % (name, getattr(module, "__file__", None) or "", loader))
        ast = [o for o in gc.get_objects() if isinstance(o, type) and o.__module__ == "ast"]
        f.write("!ast-classes\\t%d\\t\\n" % len(ast))
        zipimport = sys.modules.get("zipimport")
        f.write("!zip-directories\\t%d\\t\\n" % len(getattr(zipimport, "_zip_directory_cache", ())))
        # importlib marks the spec of each module it loads; the start's preload does not.
        by_importlib = [n for n, m in sys.modules.items() if hasattr(getattr(m, "__spec__", None), "_initializing")]
        f.write("!by-importlib\\t%s\\t\\n" % ",".join(sorted(by_importlib)))
        f.write("!at-first-send\\t%s\\t\\n" % ",".join(first_send))

# What was loaded when the call first sent bytes to etcd (the etcd client makes its sockets from _socket.socket).
import _socket
first_send = []

Socket = _socket.socket

class Probed(Socket):
    __slots__ = ()

    def sendall(self, data, *args):
        if not first_send:
            first_send.extend(sorted(sys.modules))
        return Socket.sendall(self, data, *args)

_socket.socket = Probed

if exe == "-":
    report()
else:
    _exit = posix._exit
    posix._exit = lambda status: (report(), _exit(status))
    with open(exe, "rb") as f:
        line = f.readline().decode()
        if line == "#!/bin/sh\\n":  # a name on PATH: the next line is what sh execs
            line = f.readline().decode().rpartition(' "$0"')[0] + "\\n"
    try:
        if ' -c "' in line:  # as the shebang runs it: python -IS -c CODE archive verb
            sys.argv = ["-c", exe] + sys.argv[1:]
            exec(line.split(' -c "', 1)[1].rstrip().rstrip('"'), {"__name__": "__main__"})
        elif " -ISc" in line:  # an absolute interpreter's: python -ISc<CODE> archive verb
            sys.argv = ["-c", exe] + sys.argv[1:]
            exec(line.split(" -ISc", 1)[1].rstrip(), {"__name__": "__main__"})
        else:  # a zipapp run by path
            sys.path.insert(0, exe)
            import runpy
            runpy._run_module_as_main("__main__", False)
    finally:
        report()
"""

REQUESTS: dict[str, dict[str, Any]] = {
    "gpu": {
        "add-node": {"nodename": "n1", "resource": {"prod_count_map": {"nvidia-3070": 2}}},
        "calculate-deploy": {
            "nodename": "n1",
            "deploy_count": 1,
            "workload_resource_request": {"prod_count_map": {"nvidia-3070": 1}},
        },
        "set-node-resource-usage": {
            "nodename": "n1",
            "resource": {"prod_count_map": {"nvidia-3070": 1}},
            "incr": True,
        },
        "get-metrics": {"nodes": [{"podname": "p", "nodename": f"n{i}"} for i in range(1, 13)]},
    },
    "storage": {
        "add-node": {"nodename": "n1", "resource": {"volumes": ["/data0:1T"], "storage": "2T"}},
        "calculate-deploy": {
            "nodename": "n1",
            "deploy_count": 1,
            "workload_resource_request": {"volumes": ["AUTO:/dir:rw:1G"], "storage": "1G"},
        },
        "set-node-resource-usage": {"nodename": "n1", "resource": {"storage": 1}, "incr": True},
        "get-metrics": {"nodes": [{"podname": "p", "nodename": f"n{i}"} for i in range(1, 13)]},
    },
}
# A bulk read: more nodes than etcd/chunks.py's FEW_KEYS, so the keys are counted, then read, through binascii.
BULK = "get-metrics"


def loaded(probe_out: Path, argv: list[str], cwd: Path, stdin: bytes = b"") -> tuple[dict[str, str], bytes, bytes]:
    """The modules a run leaves in sys.modules, each with the file it was loaded from and its loader's class."""
    done = subprocess.run(
        [sys.executable, "-IS", "-c", PROBE, str(probe_out), *argv],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        timeout=60,
    )
    modules = dict(line.split("\t", 1) for line in probe_out.read_text().splitlines())
    return modules, done.stdout, done.stderr


def served(plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path) -> dict[str, str]:
    """The modules a successful call of ``verb`` (with its request in REQUESTS) leaves loaded."""
    request = REQUESTS[plugin].get(verb, {"nodename": "n1"})
    modules, stdout, stderr = loaded(
        tmp_path / "call", [executable(plugin), verb], plugin_dirs[plugin], json.dumps(request).encode()
    )
    assert stderr == b"" and stdout, stderr
    return modules


def ast_classes(modules: dict[str, str]) -> int:
    modules.pop("!zip-directories", None)
    modules.pop("!by-importlib", None)
    modules.pop("!at-first-send", None)
    return int(modules.pop("!ast-classes").split("\t")[0])


def zip_directories(modules: dict[str, str]) -> int:
    """How many zip directories zipimport read in the run (each costs a call ~2.6 M instructions)."""
    return int(modules["!zip-directories"].split("\t")[0])


@pytest.fixture(scope="module")
def plugin_dirs(tmp_path_factory: pytest.TempPathFactory, etcd: DevEtcd) -> dict[str, Path]:
    dirs = {}
    for plugin, requests in REQUESTS.items():
        work = tmp_path_factory.mktemp(f"budget-{plugin}")
        # Block-style yaml as in the samples: the plugins read it without PyYAML.
        (work / f"{plugin}.yaml").write_text(f"etcd:\n  machines:\n    - {etcd.url}\n  prefix: /budget-{plugin}\n")
        added = subprocess.run(
            [executable(plugin), "add-node"],
            input=json.dumps(requests["add-node"]).encode(),
            cwd=work,
            capture_output=True,
        )
        assert added.returncode == 0, added.stderr
        dirs[plugin] = work
    return dirs


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize(
    "verb", ["get-node-resource-info", "set-node-resource-usage", "calculate-deploy", "name", BULK]
)
def test_a_call_imports_only_the_modules_in_the_budget(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    work = plugin_dirs[plugin]
    bare, _, _ = loaded(tmp_path / "bare", ["-"], work)
    assert ast_classes(bare) == 0
    request = REQUESTS[plugin].get(verb, {"nodename": "n1"})
    modules, stdout, stderr = loaded(tmp_path / "call", [executable(plugin), verb], work, json.dumps(request).encode())
    assert stderr == b"" and stdout, stderr  # the call itself succeeded
    # The stub in front of the archive reads its members by offset: no zip directory is read.
    assert zip_directories(modules) == 0
    assert ast_classes(modules) == 0, "something on the call path ran compile() (zipimport of a source does)"
    with open(executable(plugin), "rb") as f:
        line = f.readline() + f.readline()
    allowed = BUDGET if b" -c " in line or b" -ISc" in line else {**BUDGET, **ZIPAPP_RUN}
    extra = sorted(m for m in modules.keys() - bare.keys() if m not in allowed and not m.startswith(VALIDATORS))
    assert not extra, f"{plugin} {verb} imports modules outside the budget in tests/test_import_budget.py: {extra}"
    forbidden = sorted(NEVER & (modules.keys() - bare.keys()))
    assert not forbidden, f"{plugin} {verb} imports what no call may: {forbidden}"


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage", "calculate-deploy"])
def test_a_store_or_calculate_call_loads_every_module_of_its_own_without_importlib(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # The start loads what every call imports and what the verb imports (build.py's PRELOAD and VERB_PRELOAD),
    # each group of code unmarshalled as one piece: importlib's machinery costs ~60 K instructions a module.
    modules = served(plugin, verb, plugin_dirs, tmp_path)
    ours = [
        m for m in modules["!by-importlib"].split("\t")[0].split(",") if m.startswith(("resource_extend", "plugins"))
    ]
    assert not ours, f"{plugin} {verb} imports these through importlib, not the start's preload: {ours}"


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage", "calculate-deploy"])
def test_a_call_that_reads_its_node_first_sends_that_read_before_it_loads_the_manifest_and_the_verb(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # cli.serve_named: the request parsed and the node's read sent, then the manifest's modules and the verb's
    # load while etcd answers (boot/start.py MANIFEST_PRELOAD, VERB_PRELOAD).
    modules = served(plugin, verb, plugin_dirs, tmp_path)
    at_send = set(modules["!at-first-send"].split("\t")[0].split(","))
    manifest = registry.manifest_module(plugin)
    assert "resource_extend.command.cli" in at_send and "resource_extend.store.etcd.gateway" in at_send
    assert manifest in modules and manifest not in at_send
    assert not [m for m in at_send if m.startswith(("resource_extend.storage.", "resource_extend.gpu."))]
    assert not [m for m in at_send if m.startswith(VALIDATORS)]


def test_each_module_a_verb_loads_is_in_one_group_of_code_and_every_call_loads_the_first() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    verbs = {"deploy": ("v.d", "sched", "plan"), "realloc": ("v.r", "sched", "plan"), "capacity": ("v.c", "sched")}
    groups = build.code_groups(("cli", "store"), verbs)
    assert groups == [("cli", "store"), ("v.d",), ("sched",), ("plan",), ("v.r",), ("v.c",)]
    # No module twice, none lost; each verb's modules are whole groups, so it unmarshals nothing it does not run.
    flat = [m for g in groups for m in g]
    assert len(flat) == len(set(flat)) == 2 + len({m for ms in verbs.values() for m in ms})
    for modules in verbs.values():
        assert not [g for g in groups[1:] if set(g) & set(modules) and not set(g) <= set(modules)]
    # What the manifest imports beyond the first group is a piece of its own, second: loaded after the first read.
    assert build.code_groups(("cli",), verbs, ("record", "kind"))[:3] == [("cli",), ("record", "kind"), ("v.d",)]


NOT_FOR_NODE_VERBS = {"resource_extend.storage.scheduler", "resource_extend.storage.calculate_verbs",
                      "resource_extend.gpu.scheduler", "resource_extend.gpu.calculate_verbs",
                      "resource_extend.command.deploy", "resource_extend.metrics", "resource_extend.gpu.metrics",
                      "resource_extend.storage.metrics"}  # fmt: skip


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage"])
def test_a_node_verb_loads_no_calculate_verb_scheduler_or_metrics(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # The verb tables name calculate verbs and metrics through a LazyModule: importing one eagerly fails here.
    modules = served(plugin, verb, plugin_dirs, tmp_path)
    assert not NOT_FOR_NODE_VERBS & modules.keys()


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage", "calculate-deploy"])
def test_a_call_core_makes_per_workload_loads_no_upkeep_verb(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # add-node, fix-node-resource, the many-node reads and metrics (~5 KB, 7 handlers) are named through a
    # LazyModule in the verb table: the calls core makes for every workload never unmarshal them.
    assert "resource_extend.command.nodeupkeep" not in served(plugin, verb, plugin_dirs, tmp_path)
    assert "resource_extend.command.nodeupkeep" in served(plugin, BULK, plugin_dirs, tmp_path)


def test_a_deploy_loads_neither_explains_words_nor_reallocs_placement(
    plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # scheduler/limits.py words why a pass stopped (only explain asks) and scheduler/affinity.py places a
    # realloc: ~19 KB of code a calculate-deploy would otherwise unmarshal, imported where they are used.
    # So are the counts (scheduler/count.py: VolumeCount, DeployCount), a realloc (scheduler/resize.py),
    # the other calculate verbs' requests and answer (each module a class or two a deploy never creates),
    # and the enumeration of a request with disk quotas (scheduler/quotaplans.py: ~15 KB and a class), which a
    # request of sizes alone, such as this one, never runs.
    modules = served("storage", "calculate-deploy", plugin_dirs, tmp_path)
    assert "resource_extend.storage.scheduler.workloads" in modules
    assert "resource_extend.storage.scheduler.enumeration" in modules
    assert (
        not {
            "resource_extend.storage.scheduler.limits",
            "resource_extend.storage.scheduler.affinity",
            "resource_extend.storage.scheduler.count",
            "resource_extend.storage.scheduler.resize",
            "resource_extend.storage.scheduler.quotaplans",
        }
        & modules.keys()
    )


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_deploy_creates_no_other_calculate_verbs_request_nor_explains_limit(
    plugin: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    modules = served(plugin, "calculate-deploy", plugin_dirs, tmp_path)
    assert "resource_extend.envelope.plans" in modules
    loaded = {"resource_extend.capacity", "resource_extend.envelope.capacity", "resource_extend.envelope.realloc"}
    assert not loaded & modules.keys()


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("verb", ["get-node-resource-info", "set-node-resource-usage", "calculate-deploy", BULK])
def test_only_a_bulk_read_loads_binascii_and_the_bulk_read_code(
    plugin: str, verb: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # Importing binascii (a shared object mapping libz on a pyenv build) costs a call ~0.47 M instructions:
    # a single-node call's key and record are coded by etcd/base64text.py alone; a bulk read's many
    # records go through binascii, faster per record. The code of a bulk read (store and gateway halves,
    # ~15 KB) is imported when one starts, and a single-node call never unmarshals it.
    modules = served(plugin, verb, plugin_dirs, tmp_path)
    assert ("binascii" in modules) == (verb == BULK)
    assert ("resource_extend.store.etcd.gatewaybulk" in modules) == (verb == BULK)
    assert ("resource_extend.store.etcd.chunks" in modules) == (verb == BULK)
    assert ("resource_extend.store.etcd.h2.client" in modules) == (verb == BULK)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_call_loads_the_project_from_the_code_table_in_the_archive(
    plugin: str, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    # Never from a file on disk (issue 10 item 4), and never compiling a source on the call: every module
    # of the project comes from this interpreter's code table (boot/start.py's CodeTable), named as its
    # source in the archive.
    modules, _, stderr = loaded(tmp_path / "call", [executable(plugin), "get-node-resource-info"], plugin_dirs[plugin],
                                b'{"nodename": "n1"}')  # fmt: skip
    assert stderr == b""
    ours = {m: f for m, f in modules.items() if m.split(".")[0] in ("resource_extend", "plugins")}
    archive = executable(plugin) + "/site-packages/"
    assert len(ours) > 10
    assert not [m for m, f in ours.items() if not (f.startswith(archive) and f.endswith(".py\tCodeTable"))], ours


def absolute(tmp_path_factory: pytest.TempPathFactory, name: str, python: str) -> Path:
    """``resource-gpu`` built with ``python``, an absolute path, in its shebang."""
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    work, out = tmp_path_factory.mktemp(f"{name}-work"), tmp_path_factory.mktemp(name)
    pythons = build.interpreters(sys.executable, python)
    build.build(["gpu"], work, out, build.RUNTIME_DEPS, python=python, pythons=pythons)
    return out / "resource-gpu"


@pytest.fixture(scope="module")
def absolute_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``resource-gpu`` with this interpreter's path in its shebang: ``-ISc`` and the stub's line, one argument."""
    return absolute(tmp_path_factory, "absolute", sys.executable)


@pytest.fixture(scope="module")
def zipapp_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``resource-gpu`` with an interpreter path too long for the stub's line to fit in the shebang's 127 bytes:
    ``-IS`` alone, so the interpreter runs the archive as a zipapp."""
    link = tmp_path_factory.mktemp("long") / ("p" * 60) / "python3"
    link.parent.mkdir()
    link.symlink_to(sys.executable)
    return absolute(tmp_path_factory, "zipapp", str(link))


def test_an_absolute_interpreter_runs_the_stub_as_env_does_and_loads_the_same(
    absolute_build: Path, plugin_dirs: dict[str, Path], tmp_path: Path
) -> None:
    with open(absolute_build, "rb") as f:
        line = f.readline()
    assert line.startswith(f"#!{sys.executable} -IScimport sys,posix;".encode()), line
    for verb, request in (("get-node-resource-info", {"nodename": "n1"}), (BULK, REQUESTS["gpu"][BULK])):
        modules, stdout, stderr = loaded(
            tmp_path / verb, [str(absolute_build), verb], plugin_dirs["gpu"], json.dumps(request).encode()
        )
        assert stderr == b"" and stdout, stderr
        assert zip_directories(modules) == 0 and ast_classes(modules) == 0
        bare, _, _ = loaded(tmp_path / f"bare-{verb}", ["-"], plugin_dirs["gpu"])
        extra = sorted(m for m in modules.keys() - bare.keys() - {"!ast-classes"} if m not in BUDGET)
        assert not [m for m in extra if not m.startswith(VALIDATORS) and not m.startswith("!")], extra
    # Run by the kernel as core runs it, the answer is the default build's.
    request = json.dumps({"nodename": "n1"}).encode()
    for exe in (str(absolute_build), executable("gpu")):
        done = subprocess.run([exe, "get-node-resource-info"], input=request, cwd=plugin_dirs["gpu"],
                              capture_output=True, timeout=60)  # fmt: skip
        assert (done.returncode, done.stderr) == (0, b""), done
    assert len({subprocess.run([exe, "get-node-resource-info"], input=request, cwd=plugin_dirs["gpu"],
                               capture_output=True, timeout=60).stdout
                for exe in (str(absolute_build), executable("gpu"))}) == 1  # fmt: skip


def test_a_zipapp_run_never_compiles_either(zipapp_build: Path, plugin_dirs: dict[str, Path], tmp_path: Path) -> None:
    # The archive's __main__ is also bytecode compiled by the shebang's interpreter: zipimport would otherwise
    # compile() the source, and a process's first compile() builds the ast module's ~120 classes.
    with open(zipapp_build, "rb") as f:
        line = f.readline()
    assert line.endswith(b"/python3 -IS\n") and len(line) < 127, line
    modules, stdout, stderr = loaded(
        tmp_path / "call", [str(zipapp_build), "get-node-resource-info"], plugin_dirs["gpu"], b'{"nodename": "n1"}'
    )
    assert stderr == b"" and stdout, stderr
    assert ast_classes(modules) == 0
    bare, _, _ = loaded(tmp_path / "bare", ["-"], plugin_dirs["gpu"])
    extra = sorted(m for m in modules.keys() - bare.keys() - {"!ast-classes"} if m not in {**BUDGET, **ZIPAPP_RUN})
    assert not [m for m in extra if not m.startswith(VALIDATORS)], extra
    done = subprocess.run([str(zipapp_build), "get-node-resource-info"], input=b'{"nodename": "n1"}',
                          cwd=plugin_dirs["gpu"], capture_output=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, b"") and b"capacity" in done.stdout, done


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_module_the_start_preloads_is_one_a_store_call_imports_anyway(
    plugin: str, plugin_dirs: dict[str, Path]
) -> None:
    # The start loads build.py's EVERY_CALL (and what they import) before every call; a seed that left the
    # call path would cost each call its loading, and no budget test would see it: run a call from the
    # sources, without the start, and look.
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import plugins\n"
        "from resource_extend.command import cli\n"
        f"plugin = plugins.plugin({plugin!r})\n"
        "verb = cli.verb_table(plugin).verb('get-node-resource-info')\n"
        'status, out, err = cli.answer(plugin, verb, None, lambda limit: b\'{"nodename": "n1"}\')\n'
        "assert status == 0, err\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=plugin_dirs[plugin], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    # A checkout compiles its validators with fastjsonschema; the executables' compiled ones import the shim
    # (tests/test_validators.py holds them to raising only its exception).
    assert not set(build.EVERY_CALL) - imported - {"resource_extend.formats.schemaerror"}
