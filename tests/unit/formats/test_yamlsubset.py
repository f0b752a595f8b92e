"""The config fast path reads every file it accepts exactly as PyYAML does, and hands the rest over."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from resource_extend.formats import yamlsubset
from resource_extend.formats.yamlsubset import Unsupported
from tests.support import ROOT, examples

KEYS = ["etcd", "machines", "prefix", "auth", "username", "password", "scheduler", "max_deploy_count", "ca",
        "on", "null", "1", "a b", "key_2", "x-y", "dial_timeout"]  # fmt: skip
SCALARS = [
    "http://127.0.0.1:2379", "/eru", "'/eru'", '"/eru"', "10000", "-5", "0", "1.5", "01.5", "yes", "No", "off",
    "true", "FALSE", "~", "null", "", "0x1f", "0o17", "1_000", "2001-12-14", "190:20:30", ".inf", "1e3", "foo:",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43", "0b101", "5GiB",
    "a: b", "a #c", "a#b", "[a, b]", "[]", "['x', \"y\"]", "[a, [b]]", "{a: 1}", "&x a", "*x", "!!str 1", "|",
    ">", '"a\\nb"', '"a\\x41"', "'it''s'", "it's", "é", "=", "<<", "- a", "30s", "'", '"', "@x", "%x",
]  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        indent = " " * draw(st.sampled_from([0, 0, 2, 2, 4, 1, 3]))
        kind = draw(st.sampled_from(["entry", "open", "item", "comment", "blank"]))
        if kind == "entry":
            lines.append(f"{indent}{draw(st.sampled_from(KEYS))}: {draw(st.sampled_from(SCALARS))}")
        elif kind == "open":
            lines.append(f"{indent}{draw(st.sampled_from(KEYS))}:")
        elif kind == "item":
            lines.append(f"{indent}- {draw(st.sampled_from(SCALARS))}")
        elif kind == "comment":
            lines.append(f"{indent}# {draw(st.sampled_from(SCALARS))}")
        else:
            lines.append("")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n# end\n"]))


def pyyaml(text: str) -> Any:
    return yaml.load(text, Loader=yaml.SafeLoader)


@settings(max_examples=examples(3000), deadline=None)
@given(documents())
def test_what_the_subset_accepts_it_reads_as_pyyaml_does(text: str) -> None:
    try:
        ours = yamlsubset.parse(text)
    except Unsupported:
        return
    assert ours == pyyaml(text), text


@pytest.mark.parametrize("sample", ["gpu.yaml.sample", "storage.yaml.sample"])
def test_the_shipped_samples_take_the_fast_path(sample: str) -> None:
    text = (ROOT / sample).read_text()
    assert yamlsubset.parse(text) == pyyaml(text)


def test_a_typical_core_config_takes_the_fast_path() -> None:
    text = """
etcd:
  machines:
    - "http://10.0.0.1:2379"   # first
    - http://10.0.0.2:2379
  prefix: /eru-gpu
  auth:
    username: eru
    password: 'p@ss#word'
resource_plugin:
  dir: /etc/eru/plugins
  call_timeout: 30s
scheduler:
  max_deploy_count: 20
log_level: info
"""
    assert yamlsubset.parse(text) == pyyaml(text)


@pytest.mark.parametrize(
    "text",
    ["a: &x 1\nb: *x\n", "a: |\n  text\n", "a: {b: 1}\n", "- a: 1\n", "a: 2001-12-14\n", "a: 0x10\n", "a:\tb\n"],
)
def test_anything_else_is_handed_to_pyyaml(text: str) -> None:
    with pytest.raises(Unsupported):
        yamlsubset.parse(text)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("etcd:\n  dial_timeout: 010\n", {"etcd": {"dial_timeout": 8}}),  # YAML 1.1's octal, not ten
        ("etcd:\n  dial_timeout: -010\n", {"etcd": {"dial_timeout": -8}}),
        ("a: 00\n", {"a": 0}),
        ("etcd:\n  prefix:/eru\n", {"etcd": "prefix:/eru"}),  # no space after the colon: one string, no mapping
        ("a: 1\nb:c\n", None),  # PyYAML refuses a plain scalar line in a mapping
        ("a: 1\n---\nb: 2\n", None),  # a second document, which safe_load refuses
        ("a: 1\n--- \n", None),
    ],
)
def test_lines_the_subset_could_misread_are_pyyamls_to_read_or_refuse(text: str, read: Any) -> None:
    # Each a mutant of the fast path once survived on (issue 37): a leading zero read as decimal, a key
    # without the space after its colon read as a mapping, a document marker past the first line skipped.
    with pytest.raises(Unsupported):
        yamlsubset.parse(text)
    if read is None:
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(text)
    else:
        assert pyyaml(text) == read
