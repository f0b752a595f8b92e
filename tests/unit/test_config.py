"""Config resolution and the loader's required-field errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from resource_extend import config
from resource_extend.errors import PluginError


def test_flag_beats_environment_beats_working_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, "/env.yaml")
    assert config.config_path("gpu", "/flag.yaml") == "/flag.yaml"
    assert config.config_path("gpu", None) == "/env.yaml"
    monkeypatch.delenv(config.CONFIG_ENV)
    assert config.config_path("storage", None) == "storage.yaml"


def test_defaults_apply_to_a_minimal_file() -> None:
    loaded = config.parse("x", {"etcd": {"machines": ["http://127.0.0.1:2379"]}})
    assert loaded.etcd.prefix == "/eru"
    assert loaded.bounds.max_deploy_count == 10000
    assert not any(e.tls for e in loaded.etcd.endpoints) and not loaded.etcd.client_certificate


def test_missing_machines_uses_the_reference_text() -> None:
    with pytest.raises(PluginError, match="Machines is required, but blank"):
        config.parse("x", {"etcd": {"prefix": "/p"}})


def test_explicit_empty_prefix_is_an_error() -> None:
    with pytest.raises(PluginError, match="Prefix is required, but blank"):
        config.parse("x", {"etcd": {"machines": ["http://m"], "prefix": ""}})


def test_missing_file_names_the_file_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match=r"gpu\.yaml: file not found: check the path given to --config$"):
        config.load("gpu", str(tmp_path / "gpu.yaml"))


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text("etcd:\n  machines: [a\n")
    with pytest.raises(PluginError, match=r"invalid YAML at line"):
        config.load("gpu", str(path))


def test_the_scheme_decides_tls_and_cert_with_key_a_client_certificate(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    server_only = config.parse("x", {"etcd": {"machines": ["https://a", "http://b"], "ca": str(ca)}})
    assert [e.tls for e in server_only.etcd.endpoints] == [True, False]
    assert not server_only.etcd.client_certificate
    both = config.parse("x", {"etcd": {"machines": ["https://a"], "cert": str(ca), "key": str(ca)}})
    assert both.etcd.client_certificate


def test_password_is_not_in_the_repr() -> None:
    loaded = config.parse("x", {"etcd": {"machines": ["http://m"], "auth": {"username": "u", "password": "s3cret"}}})
    assert "s3cret" not in repr(loaded.etcd)


def test_files_beyond_the_simple_subset_are_read_by_pyyaml(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text("etcd: &e {machines: [http://a:2379], prefix: /p}\nother: *e\n")
    loaded = config.load("gpu", str(path))
    assert loaded.etcd.machines == ("http://a:2379",) and loaded.etcd.prefix == "/p"


def test_json_configs_are_read_directly(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text('{"etcd": {"machines": ["http://a:2379"]}}')
    assert config.load("gpu", str(path)).etcd.machines == ("http://a:2379",)


def test_a_missing_config_given_by_flag_says_to_check_that_path_not_to_pass_the_flag(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "gpu.yaml")
    with pytest.raises(PluginError) as caught:
        config.load("gpu", missing)
    message = str(caught.value)
    assert missing in message and "check the path given to --config" in message
    assert "pass --config" not in message


def test_a_missing_config_named_by_the_environment_says_to_check_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = str(tmp_path / "gpu.yaml")
    monkeypatch.setenv(config.CONFIG_ENV, missing)
    with pytest.raises(PluginError) as caught:
        config.load("gpu")
    assert f"check the path in ${config.CONFIG_ENV}" in str(caught.value)


def test_a_missing_default_config_names_the_directory_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PluginError) as caught:
        config.load("storage")
    message = str(caught.value)
    assert f"config {tmp_path}/storage.yaml: file not found" in message
    assert f"put storage.yaml in {tmp_path}" in message
