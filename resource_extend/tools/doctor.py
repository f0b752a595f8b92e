"""``resource-<plugin> doctor``: read every record under the plugin's prefix at once and report what is wrong.

An operator's command, not a verb: core never calls it, ``verbs`` does not list it, it reads no stdin and
writes nothing. Each node with a problem gets the command that repairs it, ready to paste: the verb and its
JSON request (the record ``diagnosis.salvage`` and the plugin's ``corrected`` propose), or ``etcdctl del``
for a key no verb can name. Exit 0 when every record is clean, 1 when anything was found or there was
nothing to check (a mistyped prefix), 128 when the store could not be read at all (one stderr line, as a
verb fails). The checks themselves are pure (``diagnosis`` and the manifest's ``checks``); this module only
reads etcd and prints.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

from resource_extend.errors import PluginError
from resource_extend.plugin import Plugin
from resource_extend.plugin.diagnosis import (
    REMOVE,
    REWRITE,
    Finding,
    examine,
    key_problem,
    node_of,
    salvage,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from resource_extend.config import EtcdConfig

EXIT_CLEAN, EXIT_FOUND, EXIT_FAILED = 0, 1, 128
# What a terminal shows without wrapping: the table's rows and the commands' lines fit (a detail is cut
# short, whole with --verbose; a single JSON string longer than this is the one exception).
WIDTH = 120


class Repair:
    """The command that repairs one node: its words, and the JSON request piped into it (if any)."""

    __slots__ = ("note", "request", "words")

    def __init__(self, words: list[str], request: dict[str, Any] | None = None, note: str = "") -> None:
        self.words, self.request, self.note = words, request, note

    def line(self) -> str:
        """The command on one line, as ``--json`` gives it."""
        command = " ".join(shlex.quote(word) for word in self.words)
        if self.request is None:
            return command
        return f"echo {_quoted(_compact(self.request))} | {command}"

    def lines(self, width: int = WIDTH) -> list[str]:
        """The command as the table prints it: indented, wrapped between JSON members (whitespace inside the
        quotes is JSON whitespace, a line ending in ``|`` continues the pipeline), so it pastes as printed."""
        command = " ".join(shlex.quote(word) for word in self.words)
        # A note is a shell comment: the lines still paste as printed.
        after: list[str] = []
        # Broken between words, and inside the JSON it quotes after a comma.
        tokens = [(piece, " " if i == 0 else "") for word in self.note.split() for i, piece in enumerate(_pieces(word))]
        for token, gap in tokens:
            if after and len(after[-1]) + len(gap) + len(token) <= width:
                after[-1] += gap + token
            else:
                after.append(f"  # {token}")
        if self.request is None:
            return [f"  {command}", *after]
        lines, line, fresh = [], "  echo '", True
        for piece in _pieces(_compact(self.request)):
            piece = piece.replace("'", "'\\''")
            if not fresh and len(line) + len(piece) > width:
                lines.append(line)
                line = "    "
            line, fresh = line + piece, False
        line += "'"
        if len(line) + 3 + len(command) > width:
            lines.append(line + " |")
            line = "    " + command
        else:
            line += " | " + command
        return [*lines, line, *after]


def run(plugin: Plugin[Any], config_flag: str | None, as_json: bool, verbose: bool = False) -> int:
    try:
        settings, directory, entries = _read_all(plugin, config_flag)
    except PluginError as exc:
        sys.stderr.write(f"resource-{plugin.name} doctor: {' '.join(str(exc).split())}\n")
        return EXIT_FAILED
    checks = plugin.checks
    record = plugin.record
    exe = _this_command(plugin, config_flag)
    findings: list[tuple[Finding, Repair]] = []
    for key, value in entries:
        node = node_of(key, directory)
        odd = key_problem(node, key)
        if odd is not None:
            repair = _delete(settings, key) if node == "" else Repair([*exe, REMOVE], {"nodename": node})
            findings.append((odd, repair))
            continue
        found = examine(node, value, record.decode, checks.GO_RECORD, checks.check_record, record.checked)
        if found:
            proposal = _proposal(value, checks, record)
            repair = Repair([*exe, REWRITE], {"nodename": node, **proposal}, _capacity_note(value, proposal))
            findings += [(finding, repair) for finding in found]
    if as_json:
        sys.stdout.write(report_json(directory, len(entries), findings))
    else:
        sys.stdout.write(report(directory, len(entries), findings, verbose))
    return EXIT_FOUND if findings or not entries else EXIT_CLEAN


def _read_all(plugin: Plugin[Any], config_flag: str | None) -> tuple[EtcdConfig, str, list[tuple[str, bytes]]]:
    """The etcd settings, the plugin's directory and every (key, value) under it, in one range read."""
    from resource_extend import config
    from resource_extend.store.etcd import transport
    from resource_extend.store.nodes import NodeStore

    settings = config.load(plugin.name, config_flag)
    kv = transport.open(settings.etcd)
    directory = NodeStore(kv, settings.etcd.prefix, plugin.name, plugin.record).key("")
    entries = sorted((entry.key, entry.value) for entry in kv.scan(directory))
    return settings.etcd, directory, entries


def _this_command(plugin: Plugin[Any], config_flag: str | None) -> list[str]:
    """This executable and its config as absolute paths, so that a repair pastes from any directory: core's
    layout finds the yaml in the working directory, which the shell the repair is pasted in need not be."""
    import posixpath

    from resource_extend import config

    running = sys.argv[0] if sys.argv and posixpath.basename(sys.argv[0]) == f"resource-{plugin.name}" else ""
    words = [posixpath.abspath(running) if "/" in running else f"resource-{plugin.name}"]
    if config_flag is not None or not config.environ(config.CONFIG_ENV):  # $ERU_RESOURCE_CONFIG_PATH travels
        words += ["--config", posixpath.abspath(config.config_path(plugin.name, config_flag))]
    return words


def _capacity_note(value: bytes, proposal: dict[str, Any]) -> str:
    """What the operator must do after the repair when it cannot keep the stored capacity: it writes the
    capacity it could read (a storage record's unreadable storage becomes 0), which plans would trust."""
    try:
        stored = json.loads(value).get("capacity")
    except (ValueError, AttributeError, RecursionError):
        stored = None
    if stored == proposal.get("capacity"):
        return ""
    written = _compact(proposal.get("capacity"))
    return f"this writes capacity {written}: set the real one again after it (set-node-resource-capacity)"


def _proposal(value: bytes, checks: Any, record: Any) -> dict[str, Any]:
    """The record to write instead: what can be kept of the stored one, corrected; if that still is not
    clean (a check this module does not know), the plugin's empty record, which always is."""
    proposal: dict[str, Any] = checks.corrected(salvage(value, checks.GO_RECORD))
    data = _compact(proposal).encode()
    if examine("", data, record.decode, checks.GO_RECORD, checks.check_record, record.checked):
        proposal = checks.corrected({})
    return proposal


def _delete(settings: EtcdConfig, key: str) -> Repair:
    """``etcdctl del`` for a key no verb can name, with this config's endpoints, TLS files and user (etcdctl
    asks for the password)."""
    words = ["etcdctl", f"--endpoints={','.join(settings.machines)}"]
    words += [f"--{flag}={file}" for flag, file in (("cacert", settings.ca), ("cert", settings.cert)) if file]
    words += [f"--key={settings.key}"] if settings.key else []
    words += [f"--user={settings.username}"] if settings.username else []
    return Repair([*words, "del", key])


def report(directory: str, records: int, findings: list[tuple[Finding, Repair]], verbose: bool = False) -> str:
    """A table a person reads: one row per finding, each node's repair command after its rows."""
    if not records:
        return f"0 records under {directory} — is etcd.prefix right?\n"
    if not findings:
        # No count here: the table reads the same whatever other nodes share the prefix (--json has it).
        return f"no problems found under {directory}\n"
    rows = [("NODE", "PROBLEM", "DETAIL")] + [(_shown(f.node), f.kind, f.detail) for f, _ in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    room = max(WIDTH - widths[0] - widths[1] - 4, 20)
    lines = []
    for i, (node, kind, detail) in enumerate(rows):
        if not verbose and len(detail) > room:
            detail = detail[: room - 1] + "…"
        lines.append(f"{node.ljust(widths[0])}  {kind.ljust(widths[1])}  {detail}".rstrip())
        # A node's findings are adjacent (one record each) and share one repair: print it after the last.
        if i and (i == len(findings) or findings[i][1] is not findings[i - 1][1]):
            lines += findings[i - 1][1].lines()
    nodes = len({f.node for f, _ in findings})
    lines.append(f"{len(findings)} problem(s) on {nodes} node(s) under {directory}")
    lines.append("each node's indented command repairs it: check the numbers it writes, then paste it")
    return "\n".join(lines) + "\n"


def report_json(directory: str, records: int, findings: list[tuple[Finding, Repair]]) -> str:
    found = [
        {**finding.to_json(), "command": repair.line(), **({"note": repair.note} if repair.note else {})}
        for finding, repair in findings
    ]
    doc = {"directory": directory, "records": records, "findings": found}
    return json.dumps(doc) + "\n"


def _shown(node: str) -> str:
    """A node name as a table cell: quoted when empty or not printable, so every row stays one row."""
    return node if node and node.isprintable() else json.dumps(node)


def _pieces(text: str) -> list[str]:
    """``text`` (compact JSON) cut after each comma outside a string: where a line may break."""
    pieces, start, in_string, escaped = [], 0, False, False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ",":
            pieces.append(text[start : i + 1])
            start = i + 1
    return [*pieces, text[start:]]


def _compact(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
