"""Help an operator reads: the usage names every form, verb help shows real types and a runnable example."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from resource_extend.command import verbhelp
from resource_extend.command.nodeverbs import verb_table
from resource_extend.formats import validation
from resource_extend.gpu.manifest import PLUGIN as GPU
from resource_extend.storage.manifest import PLUGIN as STORAGE
from tests.support import PLUGINS, ROOT, PluginDir, executable

VERBS = [(table.plugin.name, verb.name) for table in (verb_table(GPU), verb_table(STORAGE)) for verb in table.verbs]


def run(*args: str, cwd: Path = ROOT, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ERU_RESOURCE_CONFIG_PATH"}
    done = subprocess.run(list(args), cwd=cwd, input=stdin, capture_output=True, timeout=60, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.mark.parametrize("plugin", PLUGINS)
def test_help_names_every_form_of_the_command_line(plugin: str) -> None:
    out = run(executable(plugin), "--help")
    assert (out.returncode, out.stderr) == (0, "")
    usage = out.stdout.split("\n\n")[1]
    forms = ["--config PATH", "<verb> --help", "help <verb>", "doctor [--json|--verbose]", "--version | -v"]
    forms.append("--help | -h")
    for form in forms:
        assert usage.count(form) == 1, form
    assert "ERU_RESOURCE_LOG=debug" in out.stdout and "Never set it under core" in out.stdout


@pytest.mark.parametrize(("plugin", "verb"), VERBS)
def test_verb_help_shows_a_type_for_every_key_and_an_example_the_schema_accepts(plugin: str, verb: str) -> None:
    text = verbhelp.describe(f"resource-{plugin}", plugin, verb, "summary")
    keys = text.split("request keys:\n", 1)[1].split("\n\n", 1)[0] if "request keys:" in text else ""
    for line in keys.splitlines():
        assert "  any" not in line or verb == "calculate-remap", line  # remap reads nothing
    example = re.search(rf"^  echo '(.*)' \| \./resource-{plugin} {verb}$", text, re.MULTILINE)
    assert example, text
    validation.check(plugin, verb, "request", json.loads(example[1].replace("'\\''", "'")))


def test_the_gpu_deploy_example_requests_cards() -> None:
    text = verbhelp.describe("resource-gpu", "gpu", "calculate-deploy", "plan")
    example = json.loads(re.search(r"echo '(.*)' \|", text)[1])  # type: ignore[index]
    assert example["workload_resource_request"]["prod_count_map"]


def test_verb_help_comes_from_the_built_executable_too() -> None:
    out = run(executable("storage"), "help", "add-node")
    assert out.returncode == 0
    assert "nodename  string" in out.stdout and "echo '" in out.stdout


def test_schema_texts_cite_only_what_exists() -> None:
    for path in sorted((ROOT / "schemas").rglob("*.json")):
        text = path.read_text()
        assert "README decision" not in text, path
        assert "helper" not in text, path  # the reference's internal function names mean nothing to an operator
        for number in re.findall(r"docs/protocol\.md, difference (\d+)", text):
            assert f"\n| {number} |" in (ROOT / "docs" / "protocol.md").read_text(), (path, number)


def test_a_mistyped_verb_gets_a_suggestion_not_the_verb_list() -> None:
    out = run(executable("gpu"), "calculate-deplyo")
    assert out.returncode == 2
    first, second = out.stderr.splitlines()
    assert first == "resource-gpu: unknown verb 'calculate-deplyo'; did you mean 'calculate-deploy'?"
    assert second.startswith("usage: resource-gpu") and len(second) < 120
    assert "did you mean" not in run(executable("gpu"), "zzzzzz").stderr


def test_version_says_which_transports_the_build_carries() -> None:
    out = run(executable("gpu"), "-v")
    assert "Transports:     gateway only (built without grpc)" in out.stdout.splitlines()


def test_the_venv_has_a_command_for_each_executable_and_the_conformance_kit() -> None:
    bin_dir = ROOT / ".venv" / "bin"
    assert run(str(bin_dir / "resource-gpu"), "name").stdout == '"gpu"'
    assert run(str(bin_dir / "resource-storage"), "name").stdout == '"storage"'
    kit = run(str(bin_dir / "resource-extend-conformance"), "--help", cwd=Path("/"))
    assert kit.returncode == 0 and kit.stdout.startswith("usage: resource-extend-conformance")


def test_plain_verbs_never_import_help_doctor_or_difflib(gpu: PluginDir) -> None:
    probe = (
        "import posix, sys\n"
        "def leave(status):\n    raise SystemExit(status)\n"
        "posix._exit = leave  # the call ends by posix._exit once answered; stay alive to look at sys.modules\n"
        "from resource_extend.command.cli import main\n"
        "from resource_extend.gpu.manifest import PLUGIN\n"
        "try:\n    main(PLUGIN, ['get-node-resource-info'])\n"
        "except SystemExit:\n    pass\n"
        "loaded = [m for m in ('difflib', 'resource_extend.command.verbhelp', 'resource_extend.tools.doctor',"
        " 'resource_extend.plugin.diagnosis') if m in sys.modules]\n"
        "sys.stderr.write(repr(loaded))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ERU_RESOURCE_CONFIG_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=gpu.path, input=b'{"nodename":"ghost"}', capture_output=True, env=env,
        timeout=60,
    )  # fmt: skip
    assert done.stdout == b"null"
    assert done.stderr == b"[]"
