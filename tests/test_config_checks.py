"""Decision 15: every config value is checked when the file is loaded, and a config error wins over bad stdin.

The unit checks call the loader; the command-line checks run the built executables as core does (cwd
= the plugin directory, the request on stdin), for every verb of both plugins.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from resource_extend import config
from resource_extend.errors import PluginError
from resource_extend_dev.conformance import Outcome, run_plugin
from tests.support import ODD_CONFIGS, PLUGINS, TABLES, executable, serve_in_process

GOOD = "http://127.0.0.1:2379"


def load_text(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "gpu.yaml"
    path.write_text(text)
    return config.load("gpu", str(path))


def etcd_with(**extra: Any) -> dict[str, Any]:
    return {"etcd": {"machines": [GOOD], **extra}}


# -- ranges ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["dial_timeout", "request_timeout", "total_timeout"])
@pytest.mark.parametrize("text", [".nan", ".inf", "-.inf", "0", "-1", "0.0", "'5'", "5s", "true", "[1]"])
def test_a_timeout_must_be_finite_and_positive(tmp_path: Path, key: str, text: str) -> None:
    with pytest.raises(PluginError, match=rf"etcd\.{key}: .* is not a finite number of seconds > 0"):
        load_text(tmp_path, f"etcd:\n  machines: [{GOOD}]\n  {key}: {text}\n")


@pytest.mark.parametrize("key", ["dial_timeout", "request_timeout", "total_timeout"])
def test_a_positive_timeout_is_taken_in_seconds(tmp_path: Path, key: str) -> None:
    assert getattr(load_text(tmp_path, f"etcd:\n  machines: [{GOOD}]\n  {key}: 0.5\n").etcd, key) == 0.5


@pytest.mark.parametrize("text", ["0", "-1", "1000001", "100000000", "1e8", "10.0", "true", "'10'"])
def test_max_deploy_count_must_be_an_integer_from_one_to_a_million(tmp_path: Path, text: str) -> None:
    with pytest.raises(PluginError, match=r"scheduler\.max_deploy_count: .* is not an integer in 1\.\.1000000"):
        load_text(tmp_path, f"etcd:\n  machines: [{GOOD}]\nscheduler:\n  max_deploy_count: {text}\n")


@pytest.mark.parametrize("value", [1, 1_000_000])
def test_max_deploy_count_bounds_are_valid(value: int) -> None:
    assert config.parse("x", {**etcd_with(), "scheduler": {"max_deploy_count": value}}).bounds.max_deploy_count == value


@pytest.mark.parametrize("url", ["ftp://x", "http://", "https://:2379", "127.0.0.1:2379", "http://a:0", "x"])
def test_an_endpoint_must_be_an_http_or_https_url_with_a_host(tmp_path: Path, url: str) -> None:
    with pytest.raises(PluginError, match=r"config .*gpu\.yaml: etcd\.machines: .* is not an http://host"):
        load_text(tmp_path, json.dumps({"etcd": {"machines": [GOOD, url]}}))


# -- unknown keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "named", "hint"),
    [
        ({"etcd": {"machine": [GOOD]}}, "etcd.machine", "etcd.machines"),
        ({"etcd": {"machines": [GOOD], "totl_timeout": 3}}, "etcd.totl_timeout", "etcd.total_timeout"),
        ({"etcd": {"machines": [GOOD], "auth": {"user": "u"}}}, "etcd.auth.user", None),
        ({"etcd": {"machines": [GOOD], "auth": {"usernme": "u"}}}, "etcd.auth.usernme", "etcd.auth.username"),
        ({**etcd_with(), "scheduler": {"max_deploy_cnt": 3}}, "scheduler.max_deploy_cnt", "scheduler.max_deploy_count"),
        ({**etcd_with(), "scheduler": {"gpu_weight": 3}}, "scheduler.gpu_weight", None),
    ],
)
def test_an_unknown_key_under_etcd_or_scheduler_is_named(doc: dict[str, Any], named: str, hint: str | None) -> None:
    with pytest.raises(PluginError) as caught:
        config.parse("x", doc)
    assert f"{named}: unknown key" in str(caught.value)
    if hint:
        assert f"did you mean {hint}?" in str(caught.value)


def test_core_keys_in_the_shared_sections_are_accepted() -> None:
    doc = {
        "etcd": {"machines": [GOOD], "lock_prefix": "__lock__/eru"},
        "scheduler": {"maxshare": -1, "sharebase": 100, "max_deploy_count": 5},
        "log_level": "info",
        "anything": {"else": 1},
    }
    assert config.parse("x", doc).bounds.max_deploy_count == 5


# -- TLS files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "missing"), [("cert", "key"), ("key", "cert")])
def test_half_a_client_certificate_is_an_error_at_load(tmp_path: Path, given: str, missing: str) -> None:
    pem = tmp_path / "x.pem"
    pem.write_text("x")
    with pytest.raises(PluginError, match=rf"etcd\.{given} is set without etcd\.{missing}"):
        config.parse("x", etcd_with(**{given: str(pem)}))


# -- what is read ----------------------------------------------------------------------------------------


def test_dev_zero_is_refused_without_reading_it() -> None:
    with pytest.raises(PluginError, match="not a regular file"):
        config.load("gpu", "/dev/zero")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "gpu.yaml"
    os.mkfifo(fifo)
    result: list[BaseException | None] = []

    def load() -> None:
        try:
            config.load("gpu", str(fifo))
        except BaseException as exc:  # handed to the asserting thread
            result.append(exc)
        else:
            result.append(None)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "wb"):  # unblock the reader so the thread ends
            pass
        pytest.fail("loading a FIFO blocked")
    assert isinstance(result[0], PluginError) and "not a regular file" in str(result[0])


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text(f"etcd:\n  machines: [{GOOD}]\n" + "#" * config.MAX_CONFIG_BYTES)
    with pytest.raises(PluginError, match="a config holds at most"):
        config.load("gpu", str(path))


# -- a config error beats bad stdin, for every verb ---------------------------------------------------

EVERY_VERB = [(name, verb.name) for name in PLUGINS for verb in TABLES[name].verbs]
BAD_CONFIGS = {
    "url": json.dumps({"etcd": {"machines": ["ftp://x"]}}),
    "range": f"etcd:\n  machines: [{GOOD}]\n  total_timeout: .nan\n",
    "unknown-key": f"etcd:\n  machine: [{GOOD}]\n",
}


def config_error_line(out: Outcome, plugin: str, verb: str) -> None:
    assert out.status == 128 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"resource-{plugin} {verb}: config {plugin}.yaml: etcd."), lines[0]


# Every verb served in-process (cli.answer finds ./<plugin>.yaml as the executable does); the executables
# answer the same for one verb each, below.
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
@pytest.mark.parametrize(("plugin", "verb"), EVERY_VERB)
def test_a_config_error_wins_over_bad_stdin_for_every_verb(
    plugin: str, verb: str, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / f"{plugin}.yaml").write_text(BAD_CONFIGS[case])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    config_error_line(serve_in_process(plugin, verb, b"{not json", None), plugin, verb)


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_config_error_wins_over_bad_stdin_through_the_executable(plugin: str, case: str, tmp_path: Path) -> None:
    (tmp_path / f"{plugin}.yaml").write_text(BAD_CONFIGS[case])
    verb = "set-node-resource-usage"
    out = run_plugin(executable(plugin), verb, b"{not json", str(tmp_path))
    config_error_line(out, plugin, verb)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_the_executable_refuses_dev_zero_and_a_fifo_promptly(target: str, tmp_path: Path) -> None:
    if target == "fifo":
        os.mkfifo(tmp_path / "gpu.yaml")
    env = {k: v for k, v in os.environ.items() if k != config.CONFIG_ENV}
    if target == "/dev/zero":
        env[config.CONFIG_ENV] = "/dev/zero"
    out = run_plugin(executable("gpu"), "get-node-resource-info", b'{"nodename": "n1"}', str(tmp_path), 10, env)
    assert out.status == 128 and out.stdout == ""
    assert "not a regular file" in out.stderr and len(out.stderr.splitlines()) == 1


# -- how the file is read: yaml.safe_load's reading, never libyaml's (issue 20 items 6 and 7) -------------


def test_an_empty_config_flag_is_refused_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match=r"--config was given an empty path"):
        config.load("gpu", "")


@pytest.mark.parametrize("argv", [["--config", ""], ["--config="]])
def test_the_executable_refuses_an_empty_config_flag_in_one_line(argv: list[str], tmp_path: Path) -> None:
    # A good file sits where the fallbacks would find it: an empty flag must not read it.
    (tmp_path / "gpu.yaml").write_text(json.dumps(etcd_with()))
    env = {**os.environ, config.CONFIG_ENV: str(tmp_path / "gpu.yaml")}
    done = subprocess.run(
        [executable("gpu"), *argv, "calculate-remap"],
        input=b"{}",
        cwd=tmp_path,
        capture_output=True,
        timeout=30,
        env=env,
    )
    assert (done.returncode, done.stdout) == (128, b"")
    assert done.stderr.decode().splitlines() == [
        "resource-gpu calculate-remap: config: --config was given an empty path: pass the file's path, or leave "
        f"--config out to read ${config.CONFIG_ENV} or ./gpu.yaml"
    ]


# What libyaml's CSafeLoader reads differently from yaml.safe_load; the plugins read as safe_load does.
SAFE_LOAD_READINGS = {
    "tab in a plain scalar": (f"etcd:\n  machines: [{GOOD}]\n  prefix: /eru\tx\n", "refused"),
    "an empty tag": (f"etcd:\n  machines: [{GOOD}]\n  prefix: !\n", "/eru"),  # null: the default, not ''
    "a BOM mid-file": (f"etcd:\n  machines: [{GOOD}]\n  prefix: /p\n\ufeffscheduler:\n  max_deploy_cnt: 5\n", "/p"),
}


@pytest.mark.parametrize("case", sorted(SAFE_LOAD_READINGS))
def test_the_config_is_read_as_yaml_safe_load_reads_it(case: str, tmp_path: Path) -> None:
    text, prefix = SAFE_LOAD_READINGS[case]
    if prefix == "refused":
        with pytest.raises(PluginError, match=r"config .*gpu\.yaml: invalid YAML at line 3"):
            load_text(tmp_path, text)
    else:
        # The BOM makes '\ufeffscheduler' a top-level key of core's, so its typo is not ours to refuse.
        assert load_text(tmp_path, text).etcd.prefix == prefix


@pytest.mark.parametrize(
    "words", ["maximum recursion depth exceeded", "maximum recursion depth exceeded while calling a Python object"]
)
def test_a_config_nested_past_pyyaml_reads_in_the_same_words_on_every_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, words: str
) -> None:
    # Deep enough, 3.9-3.11 say the second (a C call hit the limit), 3.12 and 3.13 the first.
    import yaml

    def deep(*args: Any, **kw: Any) -> Any:
        raise RecursionError(words)

    monkeypatch.setattr(yaml, "load", deep)
    with pytest.raises(PluginError) as caught:
        load_text(tmp_path, f"etcd:\n  machines: [{GOOD}]\n  prefix: '/a\tb'\n")
    assert str(caught.value).endswith("gpu.yaml: invalid YAML: nested too deeply")


def test_the_loader_never_uses_libyaml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import yaml

    class Refused(yaml.SafeLoader):
        def __init__(self, stream: Any) -> None:
            raise AssertionError("CSafeLoader used")

    monkeypatch.setattr(yaml, "CSafeLoader", Refused, raising=False)
    assert load_text(tmp_path, f"etcd:\n  machines: [{GOOD}]\n  prefix: '/a\tb'\n").etcd.prefix == "/a\tb"


# Files PyYAML reads (or refuses) that the fast path's JSON reading cannot: through the executable, which
# imports no json package (on 3.10 and 3.11 the bare C scanner raised SystemError: issue 20 item 1).
@pytest.mark.parametrize("case", sorted(ODD_CONFIGS))
def test_a_file_the_fast_path_cannot_read_is_pyyamls_to_read_or_refuse(case: str, tmp_path: Path) -> None:
    text, refusal = ODD_CONFIGS[case]
    (tmp_path / "gpu.yaml").write_text(text)
    out = run_plugin(executable("gpu"), "calculate-remap", b"{}", str(tmp_path))
    assert "internal error" not in out.stderr
    if refusal is None:
        assert (out.status, out.stderr) == (0, ""), out
    else:
        assert (out.status, out.stdout) == (128, ""), out
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("resource-gpu calculate-remap: config gpu.yaml: "), out.stderr
        assert refusal in lines[0], lines[0]
