"""Every shell example in README.md and docs/ runs as pasted, and prints what the page says it prints.

An example is a ``$ <command>`` line in a fenced ``console`` block, followed by the lines the terminal
shows (stdout and stderr, whole lines, as they interleave). Each command runs in ``bash`` as a newcomer
pastes it, from a directory that is neither the repository root nor a plugin directory, with only what
README.md tells a reader to set up once after ``make build``: its ``export`` lines, evaluated at the
repository root (the executables on ``PATH``, ``$ERU_RESOURCE_CONFIG_PATH`` naming a config by its absolute
path, which here reaches a throwaway etcd instead of the samples' ``127.0.0.1:2379``); ``etcdctl`` reaches
that etcd through ``$ETCDCTL_ENDPOINTS``. A command that calls ``./resource-<plugin>`` runs in core's plugin
directory, which the page must have told the reader to ``cd`` to: a stand-in of ``/etc/eru/plugins`` as the
install steps leave it (both executables, ``gpu.yaml`` and ``storage.yaml``), in an operator's shell
without the README's exports. Each page runs in order against an empty store, and so do all pages one
after the other. Calls of the executables in ``sh`` blocks (commands shown without output) must run
without an error line.

Other branches change the texts the plugins print; after a merge, rewrite the shown outputs from what
the executables print now, then review them with ``git diff``:

    make build && .venv/bin/python -m tests.test_docs --update
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import plugins as registry
from resource_extend_dev.devetcd import DevEtcd, binary, free_ports
from tests.support import site_pages

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
PREFIX = "/eru"  # as in gpu.yaml.sample, so the etcdctl keys the pages show are the keys written
# A call of an executable (after a pipe or at the start, maybe behind variable assignments) and how it names
# the file: "" (found on PATH), "./" (core's plugin directory), anything else (a path that holds only somewhere).
PLUGIN_CALL = re.compile(r"(?:^|\| )(?:[A-Z_]+=\S* )*(\S*?)resource-(gpu|storage)\b")
ERROR_LINE = re.compile(r"^resource-(gpu|storage)( [\w-]+)?: ")
ADDED = re.compile(r'"nodename":"([^"]+)".*\| (?:\./)?resource-(gpu|storage) add-node')
PLUGIN_DIR = "/etc/eru/plugins"  # core's resource_plugin.dir, as the pages name it
SAMPLE_ETCD = "http://127.0.0.1:2379"  # the samples' etcd, the one `make etcd-up` starts
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)


class Example:
    __slots__ = ("command", "doc", "shown")

    def __init__(self, doc: Path, command: str, shown: list[str]) -> None:
        self.doc, self.command, self.shown = doc, command, shown

    def __repr__(self) -> str:
        return f"{self.doc.name}: $ {self.command}"


def examples(doc: Path) -> list[Example]:
    found: list[Example] = []
    for block in BLOCK.findall(doc.read_text()):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append(Example(doc, line[2:], []))
            elif found and line.strip():
                found[-1].shown.append(line.rstrip())
    return found


DOCS_WITH_EXAMPLES = [p for p in DOCS if examples(p)]


def session_exports(page: Path = ROOT / "README.md") -> list[str]:
    """The ``export`` lines of a page's ``sh`` blocks: what a reader sets up once, at the repository root."""
    lines = [
        line.split("  #", 1)[0].strip() for block in SH_BLOCK.findall(page.read_text()) for line in block.splitlines()
    ]
    return [line for line in lines if line.startswith("export ")]


def in_plugin_dir(doc: Path, command: str) -> bool:
    """Whether the command runs in core's plugin directory: it calls ``./resource-<plugin>`` after its page
    told the reader to ``cd`` there."""
    calls_here = any(prefix == "./" for prefix, _ in PLUGIN_CALL.findall(command))
    return calls_here and f"cd {PLUGIN_DIR}" in doc.read_text().split(command)[0]


def _with_test_etcd(sample: Path, etcd: DevEtcd, to: Path) -> Path:
    text = sample.read_text()
    # Never the samples' 127.0.0.1:2379: on a shared machine that may be someone else's etcd.
    assert SAMPLE_ETCD in text, f"{sample} names no {SAMPLE_ETCD}: the examples would reach an unknown etcd"
    to.write_text(text.replace(SAMPLE_ETCD, etcd.url))
    return to


class Shell:
    """Fresh shells whose etcd is the throwaway one: a reader's, in a directory of its own after README's
    setup, and an operator's in core's plugin directory."""

    def __init__(self, etcd: DevEtcd, work: Path) -> None:
        self.etcd = etcd
        venv = str(ROOT / ".venv")
        path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not p.startswith(venv)]
        self.operator = {
            "PATH": os.pathsep.join([os.path.dirname(binary("etcdctl")), *path]),
            "HOME": os.environ.get("HOME", str(work)),
            "LANG": "C.UTF-8",
            "ETCDCTL_ENDPOINTS": etcd.url,
        }
        # The README's exports as a reader runs them, at the root right after `make build`.
        done = subprocess.run(
            ["bash", "-c", "; ".join([*session_exports(), "env -0"])], cwd=ROOT, env=self.operator,
            stdout=subprocess.PIPE, check=True, timeout=60,
        )  # fmt: skip
        pairs = (item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item)
        self.reader = {name: value for name, value in pairs if name not in ("PWD", "OLDPWD", "SHLVL", "_")}
        named = self.reader.get("ERU_RESOURCE_CONFIG_PATH")
        if named and os.path.isabs(named) and os.path.isfile(named):
            # The config the README names, reaching the throwaway etcd; a relative or missing one stays as
            # named, so that every example fails as it would for the reader.
            (work / "config").mkdir()
            self.reader["ERU_RESOURCE_CONFIG_PATH"] = str(
                _with_test_etcd(Path(named), etcd, work / "config" / Path(named).name)
            )
        self.anywhere = work / "anywhere"
        self.anywhere.mkdir()
        # core's plugin directory as README's install steps leave it.
        self.plugins = work / "plugins"
        self.plugins.mkdir()
        for plugin in registry.SHIPPED:
            shutil.copy2(ROOT / f"resource-{plugin}", self.plugins / f"resource-{plugin}")
            _with_test_etcd(ROOT / f"{plugin}.yaml.sample", etcd, self.plugins / f"{plugin}.yaml")

    def wipe(self) -> None:
        start = f"{PREFIX}/".encode()
        end = start[:-1] + bytes([start[-1] + 1])
        self.etcd.call("/v3/kv/deleterange", {"key": _b64(start), "range_end": _b64(end)})

    def run(self, command: str, plugin_dir: bool = False) -> tuple[int, list[str]]:
        where, env = (self.plugins, self.operator) if plugin_dir else (self.anywhere, self.reader)
        done = subprocess.run(
            ["bash", "-c", command], cwd=where, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
        )  # fmt: skip
        # Blank lines are dropped on both sides: a page cannot show them inside an example.
        # doctor's repairs name the executable by its absolute path: the plugin directory's is shown as
        # /etc/eru/plugins, and so is the checkout's (doctor.md says so).
        text = done.stdout.decode(errors="replace")
        lines = text.replace(f"{self.plugins}/", f"{PLUGIN_DIR}/").replace(f"{ROOT}/", f"{PLUGIN_DIR}/").splitlines()
        return done.returncode, [line.rstrip() for line in lines if line.strip()]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def drift(shell: Shell, example: Example) -> str | None:
    """None when the example prints what its page shows, with a matching exit status; else how it differs."""
    status, printed = shell.run(example.command, in_plugin_dir(example.doc, example.command))
    problems = []
    if printed != example.shown:
        shown = "\n".join(f"    {line}" for line in example.shown)
        got = "\n".join(f"    {line}" for line in printed)
        problems.append(f"the page shows:\n{shown}\n  the command printed:\n{got}")
    failed = any(ERROR_LINE.match(line) for line in printed)
    if failed and status == 0:
        problems.append("an error line, but exit status 0")
    if not failed and status != 0 and " doctor" not in example.command:
        problems.append(f"exit status {status} without an error line")
    return None if not problems else f"{example!r}\n  " + "\n  ".join(problems)


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    with DevEtcd() as etcd:
        yield Shell(etcd, tmp_path_factory.mktemp("docs"))


def test_the_plugin_docs_carry_runnable_examples() -> None:
    names = {p.name for p in DOCS_WITH_EXAMPLES}
    assert {"README.md", "gpu.md", "storage.md", "troubleshooting.md"} <= names


def test_every_page_of_the_site_is_checked() -> None:
    """The site's nav (mkdocs.yml) lists pages of docs/; each is among the pages whose examples run here."""
    assert {ROOT / "docs" / page for page in site_pages()} <= set(DOCS)


def test_examples_call_the_executables_by_name_or_in_the_plugin_directory_the_page_cds_to() -> None:
    """By name (found on the PATH README sets up), so that they paste from any directory; ``./`` only after
    the page told the reader to ``cd`` to core's plugin directory."""
    for doc in DOCS:
        for command in [example.command for example in examples(doc)] + hand_calls(doc):
            for prefix, _ in PLUGIN_CALL.findall(command):
                assert prefix == "" or in_plugin_dir(doc, command), (doc.name, command)


def test_the_sites_home_sets_the_examples_up_as_the_readme_does() -> None:
    """The site's pages send a reader to docs/index.md for the setup the examples run with, which is README's."""
    assert session_exports() and session_exports(ROOT / "docs" / "index.md") == session_exports()


def test_each_page_adds_nodes_of_its_own_so_pages_paste_in_order() -> None:
    owner: dict[tuple[str, str], str] = {}
    for doc in DOCS_WITH_EXAMPLES:
        for example in examples(doc):
            for node, plugin in ADDED.findall(example.command):
                assert owner.setdefault((plugin, node), doc.name) == doc.name, (plugin, node, owner[(plugin, node)])


@pytest.mark.parametrize("doc", DOCS_WITH_EXAMPLES, ids=[p.name for p in DOCS_WITH_EXAMPLES])
def test_doc_examples_print_what_they_say(doc: Path, shell: Shell) -> None:
    shell.wipe()
    drifted = [why for example in examples(doc) if (why := drift(shell, example))]
    assert not drifted, "\n\n".join(drifted) + "\n\n(after a deliberate change: python -m tests.test_docs --update)"


def test_every_page_pasted_in_order_into_one_store(shell: Shell) -> None:
    shell.wipe()
    drifted = [why for doc in DOCS_WITH_EXAMPLES for example in examples(doc) if (why := drift(shell, example))]
    assert not drifted, "\n\n".join(drifted)


def update(docs: list[Path]) -> int:
    """Rewrite each example's shown output with what the command prints now."""
    import tempfile

    with DevEtcd() as etcd, tempfile.TemporaryDirectory() as work:
        shell = Shell(etcd, Path(work))
        for doc in docs:
            shell.wipe()
            text = doc.read_text()

            def rewrite(block: re.Match[str], doc: Path = doc) -> str:
                lines = []
                for line in block[1].splitlines():
                    if line.startswith("$ "):
                        lines += [line, *shell.run(line[2:], in_plugin_dir(doc, line[2:]))[1]]
                return "```console\n" + "\n".join(lines) + "\n```"

            new = BLOCK.sub(rewrite, text)
            if new != text:
                doc.write_text(new)
                print(f"rewrote {doc.relative_to(ROOT)}")
    return 0


# In a ``sh`` block (commands shown without their output), the lines that call an executable by hand.
HAND_CALL = re.compile(r"^(?:echo '[^'<]*' \| )?(?:[A-Z_]+=\S* )*(?:\./)?resource-(?:gpu|storage) ")


def hand_calls(doc: Path) -> list[str]:
    lines = [
        line.split("  #", 1)[0].strip() for block in SH_BLOCK.findall(doc.read_text()) for line in block.splitlines()
    ]
    return [line for line in lines if HAND_CALL.match(line + " ")]


DOCS_WITH_HAND_CALLS = [p for p in DOCS if hand_calls(p)]


@pytest.mark.parametrize("doc", DOCS_WITH_HAND_CALLS, ids=[p.name for p in DOCS_WITH_HAND_CALLS])
def test_commands_shown_without_output_run_too(doc: Path, shell: Shell) -> None:
    shell.wipe()
    for command in hand_calls(doc):
        status, printed = shell.run(command, in_plugin_dir(doc, command))
        # doctor exits 1 on the empty store these run against ("0 records under …"), with no error line.
        assert status in ((0, 1) if " doctor" in command else (0,)), (doc.name, command, printed)
        assert not any(ERROR_LINE.match(line) for line in printed), (doc.name, command, printed)


def test_install_commands_name_what_exists() -> None:
    # There is no resource-extend package on PyPI: from a checkout the extra is '.[grpc]'.
    texts = [*DOCS, *sorted(ROOT.glob("resource_extend*/**/*.py"))]
    for path in texts:
        assert "install 'resource-extend[" not in path.read_text(), path


LINK = re.compile(r"\]\((?!https?://)([^)#\s]*)(?:#([^)\s]*))?\)")


def _anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#+ (.*)$", path.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_between_pages_lead_somewhere() -> None:
    for doc in DOCS:
        for target, anchor in LINK.findall(doc.read_text()):
            path = (doc.parent / target).resolve() if target else doc
            assert path.exists(), (doc.name, target)
            if anchor:
                assert anchor in _anchors(path), (doc.name, target, anchor)


def test_the_readme_links_the_operator_pages() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in ("adding-nodes.md", "switching.md", "troubleshooting.md", "python.md"):
        assert f"(docs/{page})" in readme, page


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

    # The TLS files a page names must exist when its https:// config loads: made here, in a folder of the test's.
    tls = tmp_path / "tls"
    tls.mkdir()
    for file in re.findall(r"/etc/eru/tls/([\w.-]+)", text):
        (tls / file).write_text("")
    path = tmp_path / "plugin.yaml"
    path.write_text(text.replace("/etc/eru/tls/", f"{tls}/"))
    loaded = config.load("gpu", str(path))
    assert loaded.etcd.machines and loaded.etcd.prefix


def test_the_readmes_make_etcd_up_starts_an_etcd_and_etcd_down_stops_it_by_its_pid_file(tmp_path: Path) -> None:
    """README's throwaway etcd, started and stopped as its lines say (on free ports and a data directory of the
    test's): etcd-down stops the process etcd-up started, found by the pid file, and drops the data."""
    lines = [line.split("#")[0].strip() for block in SH_BLOCK.findall((ROOT / "README.md").read_text())
             for line in block.splitlines()]  # fmt: skip
    assert "make etcd-up" in lines and "make etcd-down" in lines and not [line for line in lines if "pkill" in line]
    data, ports = str(tmp_path / "etcd"), free_ports(2)
    where = [f"ETCD_DIR={data}", f"ETCD_PORT={ports[0]}", f"ETCD_PEER={ports[1]}"]
    up = subprocess.run(["make", "-s", "etcd-up", *where], cwd=ROOT, capture_output=True, text=True, timeout=120)
    try:
        assert up.returncode == 0, up.stderr
        # It says which etcd it started: the first on PATH may be a distribution's older minor (issue 36).
        assert f"binary: {binary('etcd')}, etcd Version: " in up.stdout, up.stdout
        pid = int(Path(f"{data}.pid").read_text())
        assert _wait(lambda: pid in _running(data)), "etcd-up started no etcd"
        # The pid file names etcd itself, not a wrapper: its executable is etcd.
        assert os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "etcd"
        again = subprocess.run(["make", "-s", "etcd-up", *where], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0 and "already runs" in again.stdout and _running(data) == [pid], again
        down = subprocess.run(["make", "-s", "etcd-down", *where], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert down.returncode == 0, down.stderr
        assert _wait(lambda: not _running(data)), "etcd still runs after etcd-down"
        assert not os.path.exists(data) and not os.path.exists(f"{data}.pid")
    finally:
        for pid in _running(data):
            os.kill(pid, 9)


def test_the_readmes_word_on_an_unknown_verb_is_what_the_executable_prints() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "an unknown verb or bad command line: exit 2 and two lines, the cause and the usage line" in readme
    done = subprocess.run([str(ROOT / "resource-gpu"), "frob"], capture_output=True, text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert (done.returncode, done.stdout, len(lines)) == (2, "", 2), done
    assert lines[0] == "resource-gpu: unknown verb 'frob'" and lines[1].startswith("usage: resource-gpu "), lines


def test_make_dist_writes_versioned_executables_the_wheel_and_sums_sha256sum_checks(tmp_path: Path) -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`make dist` writes `dist/resource-gpu-<version>`, `dist/resource-storage-<version>`, the wheel" in readme
    dist = tmp_path / "dist"
    done = subprocess.run(["make", "-s", "dist", f"DIST={dist}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    version = re.search(r'^version = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert version is not None
    names = sorted(p.name for p in dist.iterdir())
    wheel = f"resource_extend-{version[1]}-py3-none-any.whl"
    assert names == sorted(["SHA256SUMS", f"resource-gpu-{version[1]}", f"resource-storage-{version[1]}", wheel])
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=dist, capture_output=True, text=True)
    assert checked.returncode == 0 and checked.stdout.count(": OK") == 3, checked
    assert (dist / f"resource-gpu-{version[1]}").read_bytes() == (ROOT / "resource-gpu").read_bytes()


def _running(data: str) -> list[int]:
    """The processes whose command line names the data directory (the etcd and any wrapper of it)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if entry.isdigit() and data.encode() in argv and b"--data-dir" in argv:
            found.append(int(entry))
    return found


def _wait(ready: Callable[[], object], seconds: float = 20) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return True
        time.sleep(0.1)
    return False


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"]:
        sys.exit("usage: python -m tests.test_docs --update [README.md docs/x.md ...]")
    chosen = [Path(p).resolve() for p in sys.argv[2:]] or DOCS_WITH_EXAMPLES
    sys.exit(update(chosen))
