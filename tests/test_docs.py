"""The examples in README.md and docs/ run against the built executables: a drifting example fails here.

An example is a fenced ``console`` block of ``$ echo '<request>' | resource-<plugin> <verb>`` lines, each
followed by the response it prints (one line of JSON, or ``exit 128: <text the error line contains>``).
Examples in one file run in order against one fresh etcd namespace, so later ones see earlier writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from resource_extend.conformance import equal, run_plugin, write_config
from resource_extend.devetcd import DevEtcd
from tests.conftest import PLUGINS, ROOT, executable

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
CALL = re.compile(r"^\$ echo '(?P<request>.*)' \| (?:\./)?resource-(?P<plugin>\w+) (?P<verb>[\w-]+)$")


def examples(path: Path) -> list[tuple[str, str, str, str]]:
    found = []
    for block in BLOCK.findall(path.read_text()):
        lines = [line for line in block.splitlines() if line.strip()]
        for i, line in enumerate(lines):
            match = CALL.match(line)
            if match:
                found.append((match["plugin"], match["verb"], match["request"], lines[i + 1]))
    return found


DOCS_WITH_EXAMPLES = [p for p in DOCS if examples(p)]


def test_the_plugin_docs_carry_runnable_examples() -> None:
    names = {p.name for p in DOCS_WITH_EXAMPLES}
    assert {"gpu.md", "storage.md"} <= names


@pytest.mark.parametrize("doc", DOCS_WITH_EXAMPLES, ids=[p.name for p in DOCS_WITH_EXAMPLES])
def test_doc_examples_print_what_they_say(doc: Path, etcd: DevEtcd, prefix: str, tmp_path: Path) -> None:
    for plugin in PLUGINS:
        write_config(str(tmp_path), plugin, etcd.url, prefix)
    for plugin, verb, request, expected in examples(doc):
        out = run_plugin(executable(plugin), verb, request.encode(), str(tmp_path))
        where = f"{doc.name}: resource-{plugin} {verb} {request}"
        if expected.startswith("exit 128: "):
            assert out.status == 128, where
            assert expected[len("exit 128: ") :] in out.stderr, (where, out.stderr)
        else:
            assert out.status == 0, (where, out.stderr)
            assert equal(json.loads(expected), json.loads(out.stdout)), (where, out.stdout)


YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)
CONFIGS = [
    (path.name, i, block)
    for path in DOCS
    for i, block in enumerate(YAML_BLOCK.findall(path.read_text()))
    if block.lstrip().startswith("etcd:")
] + [(name, 0, (ROOT / name).read_text()) for name in ("gpu.yaml.sample", "storage.yaml.sample")]


def test_the_docs_show_a_complete_config() -> None:
    assert any(name == "configuration.md" for name, _, _ in CONFIGS)


@pytest.mark.parametrize(("name", "index", "text"), CONFIGS, ids=[f"{n}-{i}" for n, i, _ in CONFIGS])
def test_config_examples_load_with_the_plugins_loader(name: str, index: int, text: str, tmp_path: Path) -> None:
    from resource_extend import config

    path = tmp_path / "plugin.yaml"
    path.write_text(text)
    loaded = config.load("gpu", str(path))
    assert loaded.etcd.machines and loaded.etcd.prefix
