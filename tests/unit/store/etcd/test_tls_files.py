"""The TLS files' context (store/etcd/tls.py ``context``): loaded once a process, again when the files change,
and never waited for past the connection's end (issue 35: a 50 MB CA bundle outlasted a 1 s total_timeout)."""

from __future__ import annotations

import os
import ssl
import time
from pathlib import Path

import pytest

from resource_extend.config import EtcdConfig
from resource_extend.store.etcd import dial, tls


def _config(ca: Path) -> EtcdConfig:
    return EtcdConfig(machines=("https://127.0.0.1:2379",), ca=str(ca))


def test_the_files_load_once_and_again_when_they_change(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(ca))
    first = tls.context(_config(ca), time.monotonic() + 30)
    assert tls.context(_config(ca), time.monotonic() + 30) is first
    trustme.CA().cert_pem.write_to_path(str(ca))  # renewed in place
    os.utime(ca, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert tls.context(_config(ca), time.monotonic() + 30) is not first


def test_a_load_not_done_by_the_end_is_a_timeout_naming_the_file_and_is_not_started_again(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = tmp_path / "bundle.pem"
    pem = trustme.CA().cert_pem.bytes()
    ca.write_bytes(pem * (3_000_000 // len(pem)))  # ~0.5 s or more for OpenSSL
    with pytest.raises(dial.Slow, match=rf"TLS: loading etcd.ca {ca} \(3.0 MB\) took longer than 0.0 s"):
        tls.context(_config(ca), time.monotonic())
    assert isinstance(tls.context(_config(ca), time.monotonic() + 60), ssl.SSLContext)  # the same load, waited for
