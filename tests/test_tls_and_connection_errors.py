"""TLS as documented (docs/configuration.md), and connection errors that name their fix, against real etcds.

The matrix: server-only TLS (``ca`` alone), client certificates, a wrong CA, an expired server
certificate, a wrong host name, missing files, half a cert/key pair, http:// to a TLS member, https://
to a plain one, a member without the JSON gateway, auth enabled without credentials. Each failure is
one stderr line that says which of these it is.
"""

from __future__ import annotations

import datetime
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resource_extend_dev.conformance import Outcome, run_plugin
from resource_extend_dev.devetcd import DevEtcd
from tests.support import executable

REQUEST = {"nodenames": ["n1"]}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import trustme

    folder = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=30)
    certs = {
        "server": ca.issue_cert("127.0.0.1"),  # not "localhost": a wrong host name for the same member
        "expired": ca.issue_cert("127.0.0.1", not_before=past, not_after=past + datetime.timedelta(days=1)),
    }
    files = {"ca": str(folder / "ca.pem")}
    ca.cert_pem.write_to_path(files["ca"])
    for name, cert in certs.items():
        files[name] = str(folder / f"{name}.pem")
        files[f"{name}-key"] = str(folder / f"{name}-key.pem")
        cert.cert_chain_pems[0].write_to_path(files[name])
        cert.private_key_pem.write_to_path(files[f"{name}-key"])
    return files


@pytest.fixture(scope="module")
def server_tls_etcd(pki: dict[str, str]) -> Iterator[DevEtcd]:
    """https without client certificates: the later flags win over DevEtcd's (etcd asks for a client
    certificate whenever it has a trusted CA file)."""
    tls = (pki["ca"], pki["server"], pki["server-key"])
    with DevEtcd(extra_args=("--client-cert-auth=false", "--trusted-ca-file="), tls=tls) as server:
        yield server


@pytest.fixture(scope="module")
def expired_etcd(pki: dict[str, str]) -> Iterator[DevEtcd]:
    tls = (pki["ca"], pki["expired"], pki["expired-key"])
    with DevEtcd(extra_args=("--client-cert-auth=false", "--trusted-ca-file="), tls=tls, verify=False) as server:
        yield server


@pytest.fixture(scope="module")
def gateway_off_etcd() -> Iterator[DevEtcd]:
    with DevEtcd(extra_args=("--enable-grpc-gateway=false",), probe="health") as server:
        yield server


def call(tmp_path: Path, etcd: dict[str, Any]) -> Outcome:
    (tmp_path / "gpu.yaml").write_text(json.dumps({"etcd": {"total_timeout": 3, **etcd}}))
    return run_plugin(executable("gpu"), "get-nodes-resource-info", json.dumps(REQUEST).encode(), str(tmp_path))


def works(out: Outcome) -> None:
    assert out.status == 0 and out.stderr == "", out


def one_line(out: Outcome) -> str:
    assert out.status == 128 and out.stdout == "", out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


# -- what works -----------------------------------------------------------------------------------------


def test_ca_alone_is_server_only_tls(tmp_path: Path, server_tls_etcd: DevEtcd, pki: dict[str, str]) -> None:
    works(call(tmp_path, {"machines": [server_tls_etcd.url], "ca": pki["ca"]}))


def test_cert_and_key_give_a_client_certificate(tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]) -> None:
    etcd, files = tls_etcd
    works(
        call(tmp_path, {"machines": [etcd.url], "ca": files["ca"], "cert": files["client"], "key": files["client-key"]})
    )


# -- what fails, and says why -----------------------------------------------------------------------------


def test_https_without_ca_checks_the_system_trust_store(tmp_path: Path, server_tls_etcd: DevEtcd) -> None:
    line = one_line(call(tmp_path, {"machines": [server_tls_etcd.url]}))
    assert "not signed by a CA in the system trust store (set etcd.ca)" in line


def test_a_wrong_ca_is_named(tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]) -> None:
    etcd, files = tls_etcd
    line = one_line(
        call(
            tmp_path,
            {"machines": [etcd.url], "ca": files["bad-ca"], "cert": files["client"], "key": files["client-key"]},
        )
    )
    assert f"not signed by the CA in etcd.ca ({files['bad-ca']})" in line and etcd.url in line


def test_an_expired_server_certificate_is_named(tmp_path: Path, expired_etcd: DevEtcd, pki: dict[str, str]) -> None:
    line = one_line(call(tmp_path, {"machines": [expired_etcd.url], "ca": pki["ca"]}))
    assert "the server's certificate has expired" in line


def test_a_wrong_host_name_is_named(tmp_path: Path, server_tls_etcd: DevEtcd, pki: dict[str, str]) -> None:
    url = server_tls_etcd.url.replace("127.0.0.1", "localhost")
    line = one_line(call(tmp_path, {"machines": [url], "ca": pki["ca"]}))
    assert "does not name host 'localhost'" in line


def test_a_missing_client_certificate_is_named(tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]) -> None:
    etcd, files = tls_etcd
    line = one_line(call(tmp_path, {"machines": [etcd.url], "ca": files["ca"]}))
    assert "requires a client certificate: set etcd.cert and etcd.key" in line


def test_a_ca_bundle_slower_to_load_than_the_total_timeout_fails_the_call_within_it(
    tmp_path: Path, server_tls_etcd: DevEtcd, pki: dict[str, str]
) -> None:
    # Issue 35: a 50 MB bundle held a call with a 1 s total_timeout for 4.4-4.7 s, loaded again by each
    # connection. Here ~20 MB, the member's CA first: OpenSSL reads it in ~0.2 s a megabyte.
    import time

    import trustme

    filler = trustme.CA().cert_pem.bytes()
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(Path(pki["ca"]).read_bytes() + filler * (20_000_000 // len(filler)))
    (tmp_path / "gpu.yaml").write_text(
        json.dumps({"etcd": {"machines": [server_tls_etcd.url], "ca": str(bundle), "total_timeout": 1}})
    )
    started = time.monotonic()
    out = run_plugin(executable("gpu"), "get-nodes-resource-info", json.dumps(REQUEST).encode(), str(tmp_path))
    took = time.monotonic() - started
    line = one_line(out)
    assert took < 2.0, (took, line)
    assert f"etcd.ca {bundle} (20.0 MB) took longer than" in line and server_tls_etcd.url in line, line


@pytest.mark.parametrize("key", ["ca", "cert", "key"])
def test_a_missing_file_names_its_key_and_path(
    key: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]
) -> None:
    etcd, files = tls_etcd
    settings = {"machines": [etcd.url], "ca": files["ca"], "cert": files["client"], "key": files["client-key"]}
    settings[key] = str(tmp_path / "missing.pem")
    line = one_line(call(tmp_path, settings))
    assert f"etcd.{key}: {tmp_path / 'missing.pem'}: no such file" in line


def closed_port() -> int:
    """A port nothing listens on: every connection to it is refused at once."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    return port


@pytest.mark.parametrize("transport", ["gateway", "grpc"])
@pytest.mark.parametrize("key", ["ca", "cert", "key"])
def test_a_missing_file_is_named_at_load_with_every_endpoint_down(key: str, transport: str, tmp_path: Path) -> None:
    """Before any connection: with every member down the operator still reads the file to fix, not a refusal
    (the grpc transport too: the check is the config's, so the gateway build names it for either)."""
    files = {name: tmp_path / f"{name}.pem" for name in ("ca", "cert", "key")}
    for name, file in files.items():
        file.write_text(f"a {name}")
    files[key].unlink()
    down = [f"https://127.0.0.1:{closed_port()}", f"https://127.0.0.1:{closed_port()}"]
    line = one_line(call(tmp_path, {"machines": down, "transport": transport, **{k: str(f) for k, f in files.items()}}))
    assert line == f"resource-gpu get-nodes-resource-info: config gpu.yaml: etcd.{key}: {files[key]}: no such file"


def test_tls_files_are_not_checked_for_a_plain_cluster(tmp_path: Path, etcd: DevEtcd) -> None:
    """Only https:// endpoints use them: a config naming absent files still serves a plain etcd."""
    works(call(tmp_path, {"machines": [etcd.url], "prefix": "/eru-plain-tls", "ca": str(tmp_path / "absent.pem")}))


@pytest.mark.parametrize(("given", "missing"), [("cert", "key"), ("key", "cert")])
def test_half_a_pair_is_refused_at_load(
    given: str, missing: str, tmp_path: Path, tls_etcd: tuple[DevEtcd, dict[str, str]]
) -> None:
    etcd, files = tls_etcd
    line = one_line(
        call(tmp_path, {"machines": [etcd.url], "ca": files["ca"], given: files[f"client{'-key' * (given == 'key')}"]})
    )
    assert f"etcd.{given} is set without etcd.{missing}" in line


def test_http_to_a_tls_member_suggests_https_and_names_the_endpoint_once(
    tmp_path: Path, server_tls_etcd: DevEtcd
) -> None:
    url = server_tls_etcd.url.replace("https://", "http://")
    line = one_line(call(tmp_path, {"machines": [url]}))
    assert "this member serves TLS: use https://" in line
    assert line.count(url) == 1, line


def test_https_to_a_plain_member_suggests_http(tmp_path: Path, etcd: DevEtcd) -> None:
    line = one_line(call(tmp_path, {"machines": [etcd.url.replace("http://", "https://")]}))
    assert "does not serve TLS: use http://" in line


def test_a_member_without_the_json_gateway_points_to_the_grpc_transport(
    tmp_path: Path, gateway_off_etcd: DevEtcd
) -> None:
    line = one_line(call(tmp_path, {"machines": [gateway_off_etcd.url]}))
    assert "404 page not found" in line and "gateway is off" in line and "etcd.transport: grpc" in line


def test_auth_without_credentials_names_the_keys_to_set(tmp_path: Path, auth_etcd: DevEtcd) -> None:
    line = one_line(call(tmp_path, {"machines": [auth_etcd.url], "prefix": "/eru-auth"}))
    assert "user name is empty" in line and "set etcd.auth.username and etcd.auth.password" in line


# -- host names: resolved within the dial's time ----------------------------------------------------------

SLOW = "etcd.slow.test"


@pytest.fixture
def slow_resolver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The system's resolver, except that a lookup of SLOW hangs, as behind a DNS server that never answers
    (the resolver's own timeouts and attempts: 10 s and more). Addresses and other names resolve as usual."""
    import _socket
    import time

    real = _socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name != SLOW:
            return real(host, port, *args)
        if len(args) >= 4 and args[3] & _socket.AI_NUMERICHOST:
            raise _socket.gaierror(_socket.EAI_NONAME, "Name or service not known")
        asked.append(name)
        time.sleep(5)
        raise _socket.gaierror(_socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(_socket, "getaddrinfo", getaddrinfo)
    return asked


def _gateway(machines: tuple[str, ...], prefix: str, **kw: Any) -> tuple[Any, Any]:
    from resource_extend.config import EtcdConfig
    from resource_extend.gpu.manifest import GpuRecord
    from resource_extend.store.etcd.gateway import GatewayKV
    from resource_extend.store.nodes import NodeStore

    kv = GatewayKV(EtcdConfig(machines=machines, prefix=prefix, **kw))
    return kv, NodeStore(kv, prefix, "gpu", GpuRecord)


def test_a_host_name_the_resolver_does_not_answer_fails_the_call_within_the_dial_timeout(
    prefix: str, slow_resolver: list[str]
) -> None:
    import time

    from resource_extend.errors import StoreUnavailable

    _, store = _gateway((f"http://{SLOW}:2379",), prefix, dial_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as failed:
        store.get("n1")
    took = time.monotonic() - started
    assert slow_resolver == [SLOW]
    assert str(failed.value) == f"etcd unavailable: http://{SLOW}:2379: resolving {SLOW} took longer than 0.3 s"
    assert took < 1.5, f"{took:.2f} s: the call waited on the resolver, not its dial timeout"


def test_the_early_read_gives_up_a_name_the_resolver_is_slow_on_and_leaves_it_to_the_verb(
    prefix: str, slow_resolver: list[str]
) -> None:
    import time

    kv, store = _gateway((f"http://{SLOW}:2379",), prefix)
    started = time.monotonic()
    kv.prefetch(store.key("n1"))
    assert time.monotonic() - started < 1.0
    assert kv._conn is None and kv._pending is None and kv._unreachable is None


def test_a_host_name_reaches_etcd_through_the_resolver_for_one_node_and_in_bulk(etcd: DevEtcd, prefix: str) -> None:
    # "localhost": /etc/hosts, maybe ::1 first (refused: etcd listens on 127.0.0.1), then 127.0.0.1. The bulk
    # read goes over h2c to the same name.
    from resource_extend.gpu.manifest import GpuRecord

    url = etcd.url.replace("127.0.0.1", "localhost")
    _, store = _gateway((url,), prefix)
    names = [f"n{i:02}" for i in range(20)]
    for i, name in enumerate(names):
        store.put(name, GpuRecord({"a": i + 1}, {}))
    assert store.get("n03").capacity == {"a": 4}
    assert {name: record.capacity["a"] for name, record in store.get_many(names).items()} == {
        name: i + 1 for i, name in enumerate(names)
    }


def test_a_member_at_an_ipv6_address_is_asked_with_its_address_in_brackets() -> None:
    # Host and :authority name "[::1]:port": etcd tolerates the bare "::1:port", a proxy in front of it may not.
    import base64
    import socket as sockets
    import threading

    from resource_extend.errors import StoreUnavailable

    try:
        server = sockets.socket(sockets.AF_INET6)
        server.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    server.listen()
    heads: list[bytes] = []

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            heads.append(conn.recv(65536))
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    _, store = _gateway((f"http://[::1]:{port}",), "/v6", request_timeout=2, total_timeout=2)
    with pytest.raises(StoreUnavailable):
        store.get("n1")
    thread.join(5)
    server.close()
    assert heads and f"\r\nHost: [::1]:{port}\r\n".encode() in heads[0], heads
    assert base64.b64encode(b"/v6/resource/gpu/n1") in heads[0]


def test_a_dial_to_a_name_spends_one_dial_timeout_on_resolving_and_connecting_together(
    monkeypatch: pytest.MonkeyPatch, silent_listener: int
) -> None:
    # The resolver answers after 0.6 s of a 1 s dial timeout, with an address whose connection attempt is never
    # answered: the dial gives up at 1 s in all, not 0.6 s + 1 s.
    import _socket
    import time

    from resource_extend.store.etcd.dial import connect as _connect

    real = _socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any) -> Any:
        if host != SLOW.encode():
            return real(host, port, *args)
        if len(args) >= 4 and args[3] & _socket.AI_NUMERICHOST:
            raise _socket.gaierror(_socket.EAI_NONAME, "Name or service not known")
        time.sleep(0.6)
        return real("127.0.0.1", silent_listener, *args)

    monkeypatch.setattr(_socket, "getaddrinfo", getaddrinfo)
    started = time.monotonic()
    with pytest.raises(OSError):
        _connect(SLOW.encode(), silent_listener, 1.0)
    took = time.monotonic() - started
    assert 0.9 < took < 1.4, f"{took:.2f} s for a dial timeout of 1 s"


def test_a_host_without_a_thread_to_spare_is_resolved_as_before(
    etcd: DevEtcd, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No thread to be had (a pids cgroup, RLIMIT_NPROC): the lookup runs in the call's own thread, and the call
    # answers as ever, rather than end in an internal error.
    import _thread

    from resource_extend.gpu.manifest import GpuRecord

    def no_thread(*args: Any) -> Any:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(_thread, "start_new_thread", no_thread)
    _, store = _gateway((etcd.url.replace("127.0.0.1", "localhost"),), prefix)
    store.put("n1", GpuRecord({"a": 1}, {}))
    assert store.get("n1").capacity == {"a": 1}


@pytest.fixture
def silent_listener() -> Iterator[int]:
    """A port whose accept queue is full: a new connection attempt is dropped, so connect() waits it out."""
    import contextlib

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    queued = []
    for _ in range(4):
        client = socket.socket()
        client.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            client.connect(("127.0.0.1", port))
        queued.append(client)
    import time

    time.sleep(0.3)
    try:
        yield port
    finally:
        for client in queued:
            client.close()
        server.close()
