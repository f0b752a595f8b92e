"""What the command line prints when it serves no verb: ``--help``, ``--version``, a verb's or a command's
help, the usage line and the unknown-verb line after a bad command line.

cli.py imports this module only on those paths, so a verb call never loads (or unmarshals) these texts.
"""

from __future__ import annotations

import posix
import sys

from resource_extend import __version__
from resource_extend.command.nodeverbs import verb_table
from resource_extend.command.verb import DOCTOR, EXPLAIN, LOG_ENV
from resource_extend.plugin import prog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from resource_extend.plugin import Plugin

CONFIG_ENV = "ERU_RESOURCE_CONFIG_PATH"  # config.CONFIG_ENV; repeated so help imports no config code


def version_text(plugin: Plugin[Any]) -> str:
    """The build's identity, the reference's labels after a first line naming the plugin: ``--version`` of an
    executable renamed on install, or of a wheel's console command, says which plugin it is."""
    try:
        from resource_extend import _build_info as info  # type: ignore[attr-defined]

        revision, built, precompiled, built_for = info.REVISION, info.BUILT, info.PRECOMPILED, info.BUILT_FOR
    except ImportError:
        revision, built, precompiled, built_for = "HEAD", "now", (), None
    runtime = f"Python {sys.version.split()[0]}"
    return (
        f"{'Plugin:':<16}{prog(plugin)} ({plugin.summary})\n"
        f"{'Version:':<16}{__version__}\n{'Git hash:':<16}{revision}\n{'Built:':<16}{built}\n"
        f"{'Python version:':<16}{runtime}\n{'OS/Arch:':<16}{sys.platform}/{posix.uname().machine}\n"
        f"{'Bytecode:':<16}{bytecode(precompiled, built_for)}\n{'Transports:':<16}{transports()}\n"
    )


def bytecode(precompiled: tuple[str, ...], built_for: tuple[str, str, str] | None) -> str:
    """Which minors the build compiled the code for, and whether this interpreter is one of them."""
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if built_for is not None:  # a --grpc build: its __main__ refuses any other interpreter or platform
        tag, platform, machine = built_for
        return f"a --grpc build for {tag} on {platform}/{machine} only, which this python3 ({minor}) is"
    from resource_extend.command import executable

    loads = executable.precompiled()
    if loads is None:
        import resource_extend

        where = resource_extend.__file__ or ""
        if "-packages/" in where:  # an installed wheel, not the checkout an editable install points into
            return f"not a built executable: an installed package; this python3 ({minor}) imports it from site-packages"
        return f"not a built executable: this python3 ({minor}) imports the checkout's modules"
    built = f"precompiled for {', '.join(precompiled)}" if precompiled else "none precompiled"
    if loads:
        return f"{built}; this python3 ({minor}) loads them"
    return f"{built}; this python3 ({minor}) compiles them from the sources (slower; make build with it precompiles)"


def transports() -> str:
    """What this executable can reach etcd with on this interpreter: grpc only if its modules really load."""
    try:
        import grpc  # noqa: F401  (the --grpc build's compiled extension: it loads only where it was built for)
        import pyetcd  # noqa: F401
    except Exception as exc:  # an extension for another interpreter fails with ImportError or worse
        if isinstance(exc, ModuleNotFoundError) and exc.name in ("grpc", "pyetcd"):
            return "gateway only (built without grpc)"
        return f"gateway only (grpc is bundled but does not load here: {type(exc).__name__}: {exc})"
    return "gateway and grpc (etcd.transport: grpc works)"


def usage_line(plugin: Plugin[Any]) -> str:
    return f"usage: {prog(plugin)} [--config PATH] <verb> < request.json   ({prog(plugin)} --help lists the verbs)"


# The options the command line reads (cli._dispatch), for an unknown one's did-you-mean.
OPTIONS = ("--config", "--node", "--help", "--json", "--verbose", "--version")


def unknown_option(arg: str) -> str:
    """``unknown option '--jsn'; did you mean '--json'?``, as an unknown verb is worded."""
    import difflib  # the error path only

    close = difflib.get_close_matches(arg.partition("=")[0], OPTIONS, n=1, cutoff=0.6)
    return f"unknown option {arg!r}" + (f"; did you mean {close[0]!r}?" if close else "")


def unknown_verb(plugin: Plugin[Any], name: str) -> str:
    import difflib  # the error path only

    close = difflib.get_close_matches(name, [*verb_table(plugin).names(), DOCTOR, EXPLAIN], n=1, cutoff=0.6)
    return f"unknown verb {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")


def help_text(plugin: Plugin[Any]) -> str:
    program, verbs = prog(plugin), verb_table(plugin).verbs
    width = max(len(v.name) for v in verbs)
    lines = [
        f"{program} — eru resource plugin: {plugin.summary}",
        "",
        f"usage: {program} [--config PATH] <verb> < request.json",
        f"       {program} <verb> --help      (or: {program} help <verb>) the verb's request keys and an example",
        f"       {program} doctor [--json|--verbose]  check every stored record, with each repair; writes nothing",
        f"       {program} explain [--node NAME]... [--json] < request.json",
        "                                   each node's capacity for a request and what limits it",
        f"       {program} --help | -h        this text",
        f"       {program} --version | -v     version, build and transports",
        "",
        "Core runs one verb per call: the request is one JSON object on stdin, the response JSON on stdout.",
        f"Config: --config PATH, else ${CONFIG_ENV}, else ./{plugin.name}.yaml.",
        f"{LOG_ENV}=debug: a timing line, and on failure the traceback, on stderr. Never set it under core,",
        "which reads stdout and stderr combined.",
        "",
        "verbs:",
        f"  {'name':<{width}}  print the plugin's name",
        f"  {'verbs':<{width}}  list the verbs core may call",
    ]
    lines += [f"  {v.name:<{width}}  {v.summary}" for v in verbs]
    return "\n".join(lines) + "\n"


def doctor_help(plugin: Plugin[Any]) -> str:
    program = prog(plugin)
    return (
        f"{program} doctor — check every record of this plugin in etcd, in one read; writes nothing\n\n"
        f"usage: {program} [--config PATH] doctor [--json | --verbose]\n\n"
        "Reports per node: records this plugin cannot read (and why), values past int64, records the Go\n"
        "reference cannot decode (wrong JSON types, fractions where integers belong), negative counts, usage\n"
        "above capacity, usage of devices or products the capacity lacks, records every write would be\n"
        "refused for, and keys that name no node (an empty or nested name). After each node's rows, the\n"
        "command that repairs it, to paste as printed: the verb with its JSON request (the record with what\n"
        "is wrong left out or capped; check its numbers first), or etcdctl del. Lines fit 120 columns, a long\n"
        "detail cut short: --verbose prints it whole; --json prints one JSON object instead of the table.\n"
        "Exit 0: no problems; 1: problems found, or no record under the prefix (is etcd.prefix right?);\n"
        "128: the store could not be read (one line on stderr).\n"
        "No stdin is read. See docs/troubleshooting.md.\n"
    )


def explain_help(plugin: Plugin[Any]) -> str:
    program = prog(plugin)
    return (
        f"{program} explain — how many workloads of a request each node takes, and the first limit it reaches\n\n"
        f"usage: {program} [--config PATH] explain [--node NAME]... [--json] < request.json\n\n"
        "stdin: get-nodes-deploy-capacity's request (workload_resource; nodenames and deploy_count optional).\n"
        "Nodes: each --node, else nodenames, else every node under the prefix. For a node that takes fewer than\n"
        "deploy_count (default 1) workloads, the limit the scheduler reached first, with its numbers; a summary\n"
        "line last. --json prints one JSON object instead. Counts come from the scheduler the verbs run.\n"
        "Exit 0 with the report; 128 when the request, config or store fails (one line on stderr). Writes\n"
        "nothing. See docs/explain.md.\n"
    )


def verb_help(plugin: Plugin[Any], name: str) -> str:
    verb = verb_table(plugin).verb(name)
    summary = verb.summary if verb else ("print the plugin's name" if name == "name" else "list the verbs")
    from resource_extend.command import verbhelp

    return verbhelp.describe(prog(plugin), plugin.name, name, summary)
