"""Where the plugin's yaml is, the few keys the plugins read from it, and their checks.

The file is core's own config format; the plugins read ``etcd`` and ``scheduler`` and ignore the rest,
so one file can serve core and its plugins. Every value is checked here, when the file is loaded
(spec decision 15), so a bad file fails every verb before stdin is read, store or no store.
Loading runs on every call: plain classes with ``__slots__``, no imports beyond ``posix``; what only a
failing call, a file beyond yamlsubset's subset or a TLS cluster needs is configrare.py's, imported then.
"""

from __future__ import annotations

import posix  # os's C half: importing os (and stat, posixpath) costs a call ~6 M instructions
import sys

from resource_extend.bounds import KEYS as BOUND_KEYS
from resource_extend.bounds import Bounds
from resource_extend.errors import PluginError
from resource_extend.etcd.endpoints import parse_endpoint

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

CONFIG_ENV = "ERU_RESOURCE_CONFIG_PATH"
DEFAULT_PREFIX = "/eru"
# Well under core's 30 s call timeout: a dead etcd must fail the call, not hang it.
DEFAULT_DIAL_TIMEOUT = 2.0
DEFAULT_REQUEST_TIMEOUT = 5.0
DEFAULT_TOTAL_TIMEOUT = 8.0
# How the store reaches etcd: its v3 JSON gateway (standard library only) or native gRPC (the grpc extra).
TRANSPORTS = ("gateway", "grpc")
DEFAULT_TRANSPORT = "gateway"
# A config is a few hundred bytes; a bigger file is a wrong path (a log, a device), not a config.
MAX_CONFIG_BYTES = 1 << 20
_INFINITY = float("inf")  # NaN fails every comparison, so 0 < x < inf refuses it too

# The keys core's own config has under these sections (read by core, ignored here) and ours.
ETCD_KEYS = (
    "machines", "prefix", "lock_prefix", "ca", "cert", "key", "auth",
    "transport", "dial_timeout", "request_timeout", "total_timeout",
)  # fmt: skip
AUTH_KEYS = ("username", "password")
# The scheduler section's limits on a call's work are bounds.py's (decision 18); maxshare and sharebase are core's.
SCHEDULER_KEYS = (*BOUND_KEYS, "maxshare", "sharebase")


class EtcdConfig:
    """The ``etcd`` section. TLS follows each endpoint's scheme: ``https://`` is TLS, checked against
    ``ca`` when set (else the system trust store), with a client certificate when ``cert`` and ``key``
    are set; ``http://`` is plain, as etcd's Go client does."""

    __slots__ = (
        "ca",
        "cert",
        "dial_timeout",
        "endpoints",
        "key",
        "machines",
        "password",
        "prefix",
        "request_timeout",
        "total_timeout",
        "transport",
        "username",
    )  # fmt: skip

    def __init__(
        self,
        machines: tuple[str, ...],
        prefix: str = DEFAULT_PREFIX,
        ca: str = "",
        cert: str = "",
        key: str = "",
        username: str = "",
        password: str = "",
        dial_timeout: float = DEFAULT_DIAL_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
        transport: str = DEFAULT_TRANSPORT,
    ) -> None:
        self.machines = machines
        self.endpoints = tuple(parse_endpoint(url) for url in machines)
        self.prefix, self.ca, self.cert, self.key = prefix, ca, cert, key
        self.username, self.password = username, password
        self.dial_timeout, self.request_timeout, self.total_timeout = dial_timeout, request_timeout, total_timeout
        self.transport = transport

    @property
    def client_certificate(self) -> bool:
        return bool(self.cert and self.key)

    def __repr__(self) -> str:  # never the password
        return f"EtcdConfig(machines={self.machines!r}, prefix={self.prefix!r}, username={self.username!r})"


class Config:
    __slots__ = ("bounds", "etcd", "path", "raw")

    def __init__(self, path: str, etcd: EtcdConfig, bounds: Bounds | None = None, raw: Any = None) -> None:
        self.path, self.etcd = path, etcd
        self.bounds = bounds if bounds is not None else Bounds(path)
        self.raw: dict[str, Any] = raw if raw is not None else {}


def config_path(plugin: str, flag_value: str | None) -> str:
    """``--config`` wins, then ``$ERU_RESOURCE_CONFIG_PATH`` (even if it names another file), then ./<plugin>.yaml.

    ``--config ""`` is refused: falling back would read a file the caller did not name (issue 20)."""
    if flag_value is not None:
        if not flag_value:
            raise PluginError(
                "config: --config was given an empty path: pass the file's path, or leave --config out to read "
                f"${CONFIG_ENV} or ./{plugin}.yaml"
            )
        return flag_value
    env = environ(CONFIG_ENV)
    if env:
        return env
    return f"{plugin}.yaml"


def environ(name: str) -> str | None:
    """``os.environ.get(name)``, read from posix's bytes as os decodes them."""
    value = posix.environ.get(name.encode())
    return None if value is None else value.decode(sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())


def load(plugin: str, flag_value: str | None = None) -> Config:
    path = config_path(plugin, flag_value)
    try:
        text = _read(path)
    except FileNotFoundError:
        from resource_extend import configrare  # a failing call only

        raise PluginError(configrare.not_found(plugin, path, flag_value)) from None
    except OSError as exc:
        raise PluginError(f"config {path}: cannot read: {exc.strerror or exc}") from None
    try:
        return parse(path, _load_yaml(path, text))
    except PluginError as exc:
        message = str(exc)
        raise PluginError(message if message.startswith("config ") else f"config {path}: {message}") from None


def _read(path: str) -> bytes:
    """The file's bytes, if it is a regular file of at most MAX_CONFIG_BYTES.

    O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat on the opened descriptor, so
    what is checked is what is read."""
    fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)
    try:
        info = posix.fstat(fd)
        if info.st_mode & 0o170000 != 0o100000:  # stat.S_ISREG, without importing stat
            raise PluginError(f"config {path}: not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise PluginError(f"config {path}: {info.st_size} bytes; a config holds at most {MAX_CONFIG_BYTES}")
        chunks, size = [], 0
        while size <= MAX_CONFIG_BYTES:
            chunk = posix.read(fd, MAX_CONFIG_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_CONFIG_BYTES:  # grew while we read it
            raise PluginError(f"config {path}: more than {MAX_CONFIG_BYTES} bytes")
        return b"".join(chunks)
    finally:
        posix.close(fd)


def _load_yaml(path: str, text: bytes) -> Any:
    """The small subset yamlsubset reads exactly as PyYAML does, without PyYAML; else ``yaml.safe_load``'s
    reading (decision 15): the pure-Python SafeLoader, never libyaml's CSafeLoader, which reads some files
    differently (a tab inside a plain scalar, ``a: !``, a byte-order mark mid-file)."""
    try:
        decoded = text.decode("ascii")
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None:
        from resource_extend import yamlsubset

        try:
            return yamlsubset.parse(decoded)
        except Exception:  # Unsupported, or any failure of the fast path: PyYAML decides
            # A file the fast path cannot read, however it fails (the C JSON scanner raised SystemError on
            # a trailing comma: issue 20), is PyYAML's to read or refuse, never an internal error.
            pass
    from resource_extend import configrare  # only files beyond the simple subset

    return configrare.load_with_pyyaml(path, text)


def parse(path: str, doc: Any) -> Config:
    """Turn a loaded yaml document into a checked Config, with the reference loader's required-field texts."""
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise PluginError(f"config {path}: the top level must be a mapping")
    etcd = _section(path, doc, "etcd", ETCD_KEYS)
    machines = etcd.get("machines")
    if isinstance(machines, str):
        machines = [machines]
    if not machines:
        from resource_extend import configrare  # a failing call only

        why = configrare.no_section(doc, "etcd", ("scheduler",))
        raise PluginError(f"config {path}: etcd.machines: Machines is required, but blank{why}")
    if not isinstance(machines, list) or not all(isinstance(m, str) and m for m in machines):
        raise PluginError(f"config {path}: etcd.machines must be a list of URLs")
    prefix = etcd.get("prefix", DEFAULT_PREFIX)
    if prefix is None:
        prefix = DEFAULT_PREFIX
    if not isinstance(prefix, str):
        raise PluginError(f"config {path}: etcd.prefix must be a string")
    if prefix == "":
        raise PluginError(f"config {path}: etcd.prefix: Prefix is required, but blank")
    auth = _section(path, etcd, "auth", AUTH_KEYS, "etcd.")
    transport = etcd.get("transport", DEFAULT_TRANSPORT)
    if transport is None:
        transport = DEFAULT_TRANSPORT
    if transport not in TRANSPORTS:
        raise PluginError(f"config {path}: etcd.transport: {transport!r} is not one of: {', '.join(TRANSPORTS)}")
    scheduler = _section(path, doc, "scheduler", SCHEDULER_KEYS)
    ca, cert, key = (_text(path, etcd, name, "etcd.") for name in ("ca", "cert", "key"))
    if bool(cert) != bool(key):
        given, missing = ("cert", "key") if cert else ("key", "cert")
        raise PluginError(
            f"config {path}: etcd.{given} is set without etcd.{missing}: a client certificate needs both "
            "(for server-only TLS set just etcd.ca)"
        )
    # Only for a TLS cluster (one stat per file): a missing file fails here, before any connection is tried.
    tls = (ca or cert) and any(m[:8].lower() == "https://" for m in machines)
    if tls:
        from resource_extend import configrare  # TLS clusters only

        problem = configrare.tls_file_problem(ca, cert, key)
        if problem:
            raise PluginError(f"config {path}: {problem}")
    username = _text(path, auth, "username", "etcd.auth.")
    password = _text(path, auth, "password", "etcd.auth.")
    if password and not username:
        raise PluginError(f"config {path}: etcd.auth.password is set without etcd.auth.username")
    return Config(
        path=path,
        etcd=EtcdConfig(
            machines=tuple(machines),
            prefix=prefix,
            ca=ca,
            cert=cert,
            key=key,
            username=username,
            password=password,
            dial_timeout=_seconds(path, etcd, "dial_timeout", DEFAULT_DIAL_TIMEOUT),
            request_timeout=_seconds(path, etcd, "request_timeout", DEFAULT_REQUEST_TIMEOUT),
            total_timeout=_seconds(path, etcd, "total_timeout", DEFAULT_TOTAL_TIMEOUT),
            transport=transport,
        ),
        bounds=Bounds.read(path, scheduler),
        raw=doc,
    )


def _section(path: str, doc: dict[str, Any], key: str, known: tuple[str, ...], parent: str = "") -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PluginError(f"config {path}: {parent}{key} must be a mapping")
    for name in value:
        if name not in known:
            from resource_extend import configrare  # a failing call only

            raise PluginError(f"config {path}: {configrare.unknown_key(f'{parent}{key}', name, known)}")
    return value


def _text(path: str, doc: dict[str, Any], key: str, parent: str) -> str:
    value = doc.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PluginError(f"config {path}: {parent}{key} must be a string")
    return value


def _seconds(path: str, doc: dict[str, Any], key: str, default: float) -> float:
    value = doc.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < _INFINITY:
        raise PluginError(f"config {path}: etcd.{key}: {value!r} is not a finite number of seconds > 0")
    return float(value)
