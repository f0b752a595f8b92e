"""Replies RFC 9112 refuses, or reads in a way of its own, through the built executables at the default
timeouts (issue 35): a loopback proxy (tests/faultproxy.py) in front of the test etcd sends them, each on a
connection kept alive, so a reply misread as waiting for more bytes would hold the call until its request
timeout (5 s). Two Content-Lengths that disagree fail a read at once in one line naming the member; a 1xx
before the answer, and a head whose lines end in bare LFs, are read as the RFC says and the call answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend.config import DEFAULT_REQUEST_TIMEOUT
from resource_extend_dev.conformance import Outcome
from resource_extend_dev.devetcd import DevEtcd
from tests import support
from tests.faultproxy import HARMLESS, FaultProxy, Rule
from tests.support import INCREMENT, PLUGINS, SEED, executable, one_clean_line, plugin_dir, used

# Well under the request timeout: nothing waits for bytes that never come.
AT_ONCE = 2.0
READ_AS_THE_RFC_SAYS = list(HARMLESS)


@pytest.fixture
def proxy(etcd: DevEtcd) -> Iterator[FaultProxy]:
    with FaultProxy(etcd.port) as server:
        yield server


def call(plugin: str, work: Path, verb: str, request: Any) -> Outcome:
    out, _, took = support.measured(executable(plugin), verb, request, work, DEFAULT_REQUEST_TIMEOUT + 30)
    assert took < AT_ONCE, (verb, took, out)
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out
    return out


def seeded(tmp_path: Path, etcd: DevEtcd, plugin: str, proxy: FaultProxy, prefix: str) -> Path:
    etcd.put(f"{prefix}/resource/{plugin}/n1", json.dumps(SEED[plugin]))
    return plugin_dir(tmp_path, plugin, {"machines": [proxy.url], "prefix": prefix})


def test_two_content_lengths_that_disagree_fail_a_read_at_once_naming_the_member(
    tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    proxy.rules.append(Rule("two-lengths", "/v3/kv/range"))
    out = call("gpu", seeded(tmp_path, etcd, "gpu", proxy, prefix), "get-node-resource-info", {"nodename": "n1"})
    line = one_clean_line(out)  # exit 128, one line
    assert "bad reply" in line and "Content-Length" in line and proxy.url in line, line


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_write_answered_with_two_content_lengths_is_read_back_and_applied_once(
    plugin: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    proxy.rules.append(Rule("two-lengths", "/v3/kv/txn", holding=b"request_put", times=1))
    out = call(plugin, seeded(tmp_path, etcd, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin])
    assert proxy.spoiled == ["two-lengths"]
    assert out.status == 0 and out.stderr == "", out
    stored = etcd.get(f"{prefix}/resource/{plugin}/n1")
    assert stored is not None and used(plugin, json.loads(stored)) == 1


@pytest.mark.parametrize("fault", READ_AS_THE_RFC_SAYS)
def test_a_read_answered_after_a_1xx_or_with_bare_lf_lines_answers(
    fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    proxy.rules.append(Rule(fault, "/v3/kv/range"))
    out = call("gpu", seeded(tmp_path, etcd, "gpu", proxy, prefix), "get-node-resource-info", {"nodename": "n1"})
    assert proxy.spoiled and set(proxy.spoiled) == {fault}
    assert out.status == 0 and out.stderr == "", out
    assert json.loads(out.stdout)["capacity"] == SEED["gpu"]["capacity"]


@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("fault", READ_AS_THE_RFC_SAYS)
def test_a_write_answered_after_a_1xx_or_with_bare_lf_lines_is_applied_once(
    plugin: str, fault: str, tmp_path: Path, etcd: DevEtcd, prefix: str, proxy: FaultProxy
) -> None:
    proxy.rules = [Rule(fault, "/v3/kv/range"), Rule(fault, "/v3/kv/txn")]
    out = call(plugin, seeded(tmp_path, etcd, plugin, proxy, prefix), "set-node-resource-usage", INCREMENT[plugin])
    assert fault in proxy.spoiled
    assert out.status == 0 and out.stderr == "", out
    stored = etcd.get(f"{prefix}/resource/{plugin}/n1")
    assert stored is not None and used(plugin, json.loads(stored)) == 1
