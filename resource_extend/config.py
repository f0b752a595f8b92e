"""Where the plugin's yaml is, the few keys the plugins read from it, and their checks.

The file is core's own config format; the plugins read ``etcd`` and ``scheduler`` and ignore the rest,
so one file can serve core and its plugins. Every value is checked here, when the file is loaded
(spec decision 15), so a bad file fails every verb before stdin is read, store or no store.
Loading runs on every call: plain classes with ``__slots__``, no imports beyond ``posix``; what only a
failing call or a file beyond yamlsubset's subset needs (``os``, PyYAML) is imported inside the function
that needs it.
"""

from __future__ import annotations

import posix  # os's C half: importing os (and stat, posixpath) costs a call ~6 M instructions
import sys

from resource_extend.bounds import KEYS as BOUND_KEYS
from resource_extend.bounds import Bounds
from resource_extend.endpoints import parse_endpoint
from resource_extend.errors import PluginError

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
        "source",
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
        source: str = "",
    ) -> None:
        self.machines = machines
        self.endpoints = tuple(parse_endpoint(url) for url in machines)
        self.prefix, self.ca, self.cert, self.key = prefix, ca, cert, key
        self.username, self.password = username, password
        self.dial_timeout, self.request_timeout, self.total_timeout = dial_timeout, request_timeout, total_timeout
        self.transport = transport
        self.source = source  # the file it was read from, for the errors found only when it is used

    @property
    def where(self) -> str:
        """How a failure found when the transport uses a setting starts: ``config gpu.yaml``, as a failure
        found when the file loads does (``config`` alone for an EtcdConfig built without a file)."""
        return f"config {self.source}" if self.source else "config"

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

    ``--config ""`` is refused: falling back would read a file the caller did not name (issue 20). An empty
    variable counts as unset, as a shell's ``VAR= cmd`` means it."""
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
        raise PluginError(not_found(plugin, path, flag_value)) from None
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
        from resource_extend.formats import yamlsubset

        try:
            return yamlsubset.parse(decoded)
        except Exception:  # Unsupported, or any failure of the fast path: PyYAML decides
            # A file the fast path cannot read, however it fails (the C JSON scanner raised SystemError on
            # a trailing comma: issue 20), is PyYAML's to read or refuse, never an internal error.
            pass
    return load_with_pyyaml(path, text)


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
        why = no_section(doc, "etcd", ("scheduler",))
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
        problem = tls_file_problem(ca, cert, key)
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
            source=path,
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
            raise PluginError(f"config {path}: {unknown_key(f'{parent}{key}', name, known)}")
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
    try:  # an int past a float's range compares below infinity and then fails to convert
        seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    except OverflowError:
        seconds = None
    if seconds is None or not 0 < seconds < _INFINITY:
        raise PluginError(f"config {path}: etcd.{key}: {value!r} is not a finite number of seconds > 0")
    return seconds


def not_found(plugin: str, path: str, flag_value: str | None) -> str:
    """Name the file looked for, where it came from, and the fix that applies to that source."""
    if flag_value:
        return f"config {path}: file not found: check the path given to --config"
    if environ(CONFIG_ENV):
        return f"config {path}: file not found: check the path in ${CONFIG_ENV}"
    import os  # a failing call only

    try:
        here = os.getcwd()
    except OSError:  # the working directory was removed under us
        here = "the working directory"
    return (
        f"config {os.path.join(here, path)}: file not found: "
        f"put {plugin}.yaml in {here} (core's resource_plugin.dir), pass --config PATH, or set {CONFIG_ENV}"
    )


def load_with_pyyaml(path: str, text: bytes) -> Any:
    """``yaml.safe_load``'s reading of a file beyond yamlsubset's subset (``_load_yaml``), its refusal in one
    line."""
    import yaml  # ~35 ms of imports: only files beyond the simple subset pay for it

    try:
        return yaml.load(text, Loader=yaml.SafeLoader)  # safe_load's own loader, spelled out
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise PluginError(f"config {path}: invalid YAML{at}: {problem}") from None
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        # safe_load refuses these too, outside YAMLError: a timestamp like 2001-02-30, a nesting too deep.
        if isinstance(exc, RecursionError):  # its words differ by interpreter; the depth (~490) does not
            raise PluginError(f"config {path}: invalid YAML: nested too deeply") from None
        from resource_extend.formats.jsonio import reason  # the int limit's words, the same on every interpreter

        why = reason(exc) if isinstance(exc, ValueError) else str(exc)
        raise PluginError(f"config {path}: invalid YAML: {type(exc).__name__}: {why}") from None


def unknown_key(section: str, name: Any, known: tuple[str, ...]) -> str:
    """``<section>.<name>: unknown key``, with the known key it is likely a typo of, else the known keys."""
    hint = _near(name, known)
    return f"{section}.{name}: unknown key" + (
        f" (did you mean {section}.{hint}?)" if hint else f" (known: {', '.join(known)})"
    )


def no_section(doc: dict[str, Any], section: str, known: tuple[str, ...]) -> str:
    """Why a required key of ``section`` reads as blank when the file has no such section: the top-level key
    that is likely a typo of it (``etdc:``), else the top-level keys the file does have."""
    if section in doc:
        return ""
    near = [name for name in doc if isinstance(name, str) and name not in known and _near(name, (section,))]
    if near:
        return f" (the file has no {section} section: did you mean {section} for {near[0]!r}?)"
    return f" (the file has no {section} section)"


def _near(name: Any, known: tuple[str, ...]) -> str | None:
    """The known key one or two edits away from ``name`` (a typo, a dropped or doubled letter)."""
    if not isinstance(name, str):
        return None
    best: tuple[int, str] | None = None
    for candidate in known:
        distance = _edits(name.lower(), candidate)
        if distance <= 2 and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


def _edits(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def _why_unreadable(path: str) -> str:
    """Why this user cannot read ``path``: a directory on its path this user cannot enter fails stat() too,
    and reads as a missing file unless its errno is looked at."""
    try:
        posix.stat(path)
    except ValueError:
        return "no such file"
    except OSError as exc:
        if exc.errno == 13:  # EACCES: a directory on the way lacks x for this user
            return "a directory on its path cannot be entered by this user (check each directory's x permission)"
        return "no such file"
    return "not readable by this user"


def tls_file_problem(ca: str, cert: str, key: str) -> str:
    """``etcd.<name>: <path>: <why>`` for the first TLS file set but not readable, else ``""``.

    Checked when the config loads (any ``https://`` endpoint) so that a missing file is named at once,
    not after a TCP connection succeeds, and by both transports before they load the files."""
    for name, file in (("ca", ca), ("cert", cert), ("key", key)):
        if file and not posix.access(file, posix.R_OK):
            return f"etcd.{name}: {file}: {_why_unreadable(file)}"
        if file and _is_directory(file):  # readable, but ssl loads files only: said here, with the file's name
            pem = f"{file.rstrip('/')}/<file>.pem"
            return f"etcd.{name}: {file}: is a directory; name the PEM file in it (etcd.{name}: {pem})"
    return ""


def _is_directory(path: str) -> bool:
    try:
        return (posix.stat(path).st_mode & 0o170000) == 0o040000  # S_IFDIR, without importing stat
    except (OSError, ValueError):
        return False
