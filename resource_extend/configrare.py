"""The config's readings and checks a call with a plain, good config never runs, loaded only when one does:
PyYAML for a file beyond yamlsubset's subset, the words of a missing file or an unknown key, and the check
of a TLS cluster's files (config.py imports this module on those paths, so other calls never load it).
"""

from __future__ import annotations

import posix

from resource_extend.config import CONFIG_ENV, environ
from resource_extend.errors import PluginError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
    """``yaml.safe_load``'s reading of a file beyond yamlsubset's subset (config._load_yaml), its refusal in one
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
        from resource_extend.jsonslow import reason  # the int limit's words, the same on every interpreter

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
    return ""
