"""Where the plugin's yaml is, and the few keys the plugins read from it.

The file is core's own config format; the plugins read ``etcd`` and ``scheduler`` and ignore the rest,
so one file can serve core and its plugins.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from resource_extend.errors import PluginError

CONFIG_ENV = "ERU_RESOURCE_CONFIG_PATH"
DEFAULT_PREFIX = "/eru"
DEFAULT_MAX_DEPLOY_COUNT = 10000
# Well under core's 30 s call timeout: a dead etcd must fail the call, not hang it.
DEFAULT_DIAL_TIMEOUT = 2.0
DEFAULT_REQUEST_TIMEOUT = 5.0
DEFAULT_TOTAL_TIMEOUT = 8.0
# How the store reaches etcd: its v3 JSON gateway (standard library only) or native gRPC (the grpc extra).
TRANSPORTS = ("gateway", "grpc")
DEFAULT_TRANSPORT = "gateway"


@dataclass(frozen=True)
class EtcdConfig:
    machines: tuple[str, ...]
    prefix: str = DEFAULT_PREFIX
    ca: str = ""
    cert: str = ""
    key: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    dial_timeout: float = DEFAULT_DIAL_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    transport: str = DEFAULT_TRANSPORT

    @property
    def tls(self) -> bool:
        # As in the reference, TLS is configured only when all three files are given.
        return bool(self.ca and self.cert and self.key)


@dataclass(frozen=True)
class Config:
    path: str
    etcd: EtcdConfig
    max_deploy_count: int = DEFAULT_MAX_DEPLOY_COUNT
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def config_path(plugin: str, flag_value: str | None) -> str:
    """``--config`` wins, then ``$ERU_RESOURCE_CONFIG_PATH`` (even if it names another file), then ./<plugin>.yaml."""
    if flag_value:
        return flag_value
    env = os.environ.get(CONFIG_ENV)
    if env:
        return env
    return f"{plugin}.yaml"


def load(plugin: str, flag_value: str | None = None) -> Config:
    path = config_path(plugin, flag_value)
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise PluginError(
            f"config {path}: file not found (Machines is required, but blank): "
            f"pass --config, set {CONFIG_ENV}, or put {plugin}.yaml in the working directory"
        ) from None
    except OSError as exc:
        raise PluginError(f"config {path}: cannot read: {exc.strerror}") from None
    return parse(path, _load_yaml(path, text))


def _load_yaml(path: str, text: bytes) -> Any:
    """JSON (which is YAML) or the simple YAML configs use, without PyYAML; else PyYAML's C loader."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None:
        from resource_extend import yamlsubset

        if decoded.lstrip().startswith("{"):
            import json

            try:
                return json.loads(decoded)
            except ValueError:
                pass
        try:
            return yamlsubset.parse(decoded)
        except yamlsubset.Unsupported:
            pass
    import yaml  # ~35 ms of imports: only files beyond the simple subset pay for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise PluginError(f"config {path}: invalid YAML{at}: {problem}") from None


def parse(path: str, doc: Any) -> Config:
    """Turn a loaded yaml document into a Config, with the reference loader's required-field texts."""
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise PluginError(f"config {path}: the top level must be a mapping")
    etcd = _section(path, doc, "etcd")
    machines = etcd.get("machines")
    if isinstance(machines, str):
        machines = [machines]
    if not machines:
        raise PluginError(f"config {path}: etcd.machines: Machines is required, but blank")
    if not isinstance(machines, list) or not all(isinstance(m, str) and m for m in machines):
        raise PluginError(f"config {path}: etcd.machines must be a list of URLs")
    prefix = etcd.get("prefix", DEFAULT_PREFIX)
    if prefix is None:
        prefix = DEFAULT_PREFIX
    if not isinstance(prefix, str):
        raise PluginError(f"config {path}: etcd.prefix must be a string")
    if prefix == "":
        raise PluginError(f"config {path}: etcd.prefix: Prefix is required, but blank")
    auth = _section(path, etcd, "auth", "etcd.")
    transport = etcd.get("transport", DEFAULT_TRANSPORT)
    if transport is None:
        transport = DEFAULT_TRANSPORT
    if transport not in TRANSPORTS:
        raise PluginError(f"config {path}: etcd.transport: {transport!r} is not one of: {', '.join(TRANSPORTS)}")
    scheduler = _section(path, doc, "scheduler")
    return Config(
        path=path,
        etcd=EtcdConfig(
            machines=tuple(machines),
            prefix=prefix,
            ca=_text(path, etcd, "ca", "etcd."),
            cert=_text(path, etcd, "cert", "etcd."),
            key=_text(path, etcd, "key", "etcd."),
            username=_text(path, auth, "username", "etcd.auth."),
            password=_text(path, auth, "password", "etcd.auth."),
            dial_timeout=_seconds(path, etcd, "dial_timeout", DEFAULT_DIAL_TIMEOUT),
            request_timeout=_seconds(path, etcd, "request_timeout", DEFAULT_REQUEST_TIMEOUT),
            total_timeout=_seconds(path, etcd, "total_timeout", DEFAULT_TOTAL_TIMEOUT),
            transport=transport,
        ),
        max_deploy_count=_count(path, scheduler, "max_deploy_count", DEFAULT_MAX_DEPLOY_COUNT),
        raw=doc,
    )


def _section(path: str, doc: dict[str, Any], key: str, parent: str = "") -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PluginError(f"config {path}: {parent}{key} must be a mapping")
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
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise PluginError(f"config {path}: etcd.{key} must be a positive number of seconds")
    return float(value)


def _count(path: str, doc: dict[str, Any], key: str, default: int) -> int:
    value = doc.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise PluginError(f"config {path}: scheduler.{key} must be an integer")
    return value
