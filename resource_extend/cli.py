"""The command line both executables share: ``<plugin> [--config PATH] <verb>`` with JSON on stdin.

Output hygiene is the contract with core (which may read stdout and stderr combined): on success only
the JSON response on stdout and nothing on stderr; on failure nothing on stdout, one line on stderr and
exit status 128; a bad command line exits 2. Nothing here prints a traceback unless asked to with
``ERU_RESOURCE_LOG=debug``.
"""

from __future__ import annotations

import posix  # os's C half: importing os would cost a call more than its etcd round trip
import sys
import time

from resource_extend import __version__, errors
from resource_extend.errors import PluginError
from resource_extend.verb import Call, Plugin, Verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn, TypeVar

    from resource_extend.store import Record

    R = TypeVar("R", bound=Record)

EXIT_FAILED = 128
EXIT_USAGE = 2
LOG_ENV = "ERU_RESOURCE_LOG"
CONFIG_ENV = "ERU_RESOURCE_CONFIG_PATH"  # config.CONFIG_ENV; repeated so help imports no config code
# Operator's commands beside the verbs: core never calls them and `verbs` does not list them.
DOCTOR = "doctor"
EXPLAIN = "explain"


def main(plugin: Plugin[Any], argv: list[str] | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    try:
        status = _dispatch(plugin, args)
    except errors.UsageError as exc:
        _err(f"{_prog(plugin)}: {exc}")
        _err(_usage_line(plugin))
        status = EXIT_USAGE
    _exit(status)


def _exit(status: int) -> NoReturn:
    """Leave without the interpreter's teardown (15–25 ms of freeing what the kernel frees anyway).

    Every byte of the answer already went out through ``posix.write``; only what a debug traceback left in
    Python's stream buffers is flushed here.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    posix._exit(status)


def _dispatch(plugin: Plugin[Any], args: list[str]) -> int:
    config_flag: str | None = None
    want_help = False
    as_json = verbose = False
    nodes: list[str] = []  # explain's --node
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--config":
            if i + 1 >= len(args):
                raise errors.UsageError("--config needs a path")
            config_flag = args[i + 1]
            i += 2
            continue
        if arg == "--node":
            if i + 1 >= len(args):
                raise errors.UsageError("--node needs a node name")
            nodes.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("--node="):
            nodes.append(arg.split("=", 1)[1])
        elif arg.startswith("--config="):
            config_flag = arg.split("=", 1)[1]
        elif arg in ("--help", "-h"):
            want_help = True
        elif arg == "--json":
            as_json = True
        elif arg == "--verbose":
            verbose = True
        elif arg in ("--version", "-v") and not positional:
            _out(_version_text())
            return 0
        elif arg.startswith("-") and arg != "-":
            raise errors.UsageError(f"unknown option {arg!r}")
        else:
            positional.append(arg)
        i += 1

    if not positional:
        if want_help:
            _out(_help_text(plugin))
            return 0
        raise errors.UsageError("no verb given")
    name, extra = positional[0], positional[1:]
    if name in ("help", "h"):
        if not extra:
            _out(_help_text(plugin))
            return 0
        name, extra, want_help = extra[0], extra[1:], True
    if extra:
        raise errors.UsageError(f"unexpected argument {extra[0]!r} after the verb (the request goes on stdin)")
    if name == EXPLAIN and not want_help:
        return _explain(plugin, config_flag, as_json, nodes)
    if nodes:
        raise errors.UsageError("--node is an option of explain only")
    if name == DOCTOR and not want_help:
        return _doctor(plugin, config_flag, as_json, verbose)
    if verbose:
        raise errors.UsageError("--verbose is an option of doctor only")
    if as_json:
        raise errors.UsageError("--json is an option of doctor and explain only")
    if name == EXPLAIN:
        _out(_explain_help(plugin))
        return 0
    if name == DOCTOR:
        _out(_doctor_help(plugin))
        return 0
    if name not in _all_verbs(plugin):
        raise errors.UsageError(_unknown_verb(plugin, name))
    if want_help:
        _out(_verb_help(plugin, name))
        return 0
    if name == "name":
        return _write(plugin, name, f'"{plugin.name}"'.encode())
    if name == "verbs":
        from resource_extend import jsonio

        return _write(plugin, name, jsonio.utf8(jsonio.dumps(plugin.advertised())))
    verb = plugin.verb(name)
    assert verb is not None
    return serve(plugin, verb, config_flag)


def _doctor(plugin: Plugin[Any], config_flag: str | None, as_json: bool, verbose: bool) -> int:
    # Imported only here: the store doctor is no part of a verb call.
    from resource_extend import doctor

    return doctor.run(plugin, config_flag, as_json, verbose)


def _explain(plugin: Plugin[Any], config_flag: str | None, as_json: bool, nodes: list[str]) -> int:
    from resource_extend import explain  # as doctor: no part of a verb call

    return explain.run(plugin, config_flag, as_json, nodes, _read_stdin)


def serve(plugin: Plugin[R], verb: Verb[R], config_flag: str | None) -> int:
    """One serving call on this process's stdin and stdout; the exit status."""
    debug = posix.environ.get(LOG_ENV.encode(), b"").lower() == b"debug"
    started = time.perf_counter()
    status, response, error = answer(plugin, verb, config_flag, _read_stdin, debug)
    if status != 0:
        _err(error)
        return status
    status = _write(plugin, verb.name, response)
    if debug and status == 0:
        _err(f"{_prog(plugin)} {verb.name}: ok in {(time.perf_counter() - started) * 1000:.1f} ms")
    return status


def answer(
    plugin: Plugin[R], verb: Verb[R], config_flag: str | None, stdin: Callable[[int], bytes], debug: bool = False
) -> tuple[int, bytes, str]:
    """Config, stdin, request schema, verb, response schema — the first failure ends the call.

    ``stdin(limit)`` gives the request's bytes, at most ``limit`` + 1 of them (more shows the request is past
    ``scheduler.max_stdin_bytes``, and the rest is never read). Returns the exit status, the response as
    UTF-8 bytes (on success) and the one stderr line (on failure). Nothing here touches the process's
    streams, so tests can serve calls in-process.
    """
    try:
        from resource_extend import config, jsonio, validation

        settings = config.load(plugin.name, config_flag)
        bounds = settings.bounds
        data = stdin(bounds.max_stdin_bytes)
        bounds.check_stdin(len(data))
        request = jsonio.loads_request(data)
        bounds.check_request(request)  # before the schema walks a list of a million names
        validation.check(plugin.name, verb.name, "request", request, plugin.schemas)
        result = verb.run(Call(plugin, verb.name, request, settings))
        validation.check(plugin.name, verb.name, "response", result, plugin.schemas)
        return 0, jsonio.utf8(jsonio.dumps(result)), ""
    except PluginError as exc:
        return EXIT_FAILED, b"", _failure(plugin, verb.name, str(exc), debug)
    except Exception as exc:  # a bug: still one line, never a traceback on core's output
        return EXIT_FAILED, b"", _failure(plugin, verb.name, f"internal error: {type(exc).__name__}: {exc}", debug)


def _read_stdin(limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes: one byte past the limit is enough to refuse the request, so a hostile
    stdin costs at most the limit in memory and time, however much is behind it."""
    if sys.stdin is None:  # started with fd 0 closed: no request
        return b""
    try:
        return sys.stdin.buffer.read(limit + 1)
    except OSError as exc:
        raise PluginError(f"decode plugin input: cannot read stdin: {exc.strerror}") from None


def _failure(plugin: Plugin[Any], verb: str, message: str, debug: bool) -> str:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()  # before the line, which goes out unbuffered
    return f"{_prog(plugin)} {verb}: {' '.join(message.split())}"


def _prog(plugin: Plugin[Any]) -> str:
    return f"resource-{plugin.name}"


def _all_verbs(plugin: Plugin[Any]) -> list[str]:
    return ["name", "verbs", *(v.name for v in plugin.verbs)]


def _write(plugin: Plugin[Any], verb: str, data: bytes) -> int:
    """Put ``data`` on stdout; a stdout that cannot take it (full disk, closed, nobody reading) fails the
    call the usual way: one stderr line, exit 128. The response carries no trailing newline, as the
    reference writes it."""
    try:
        _emit(1, data)
    except OSError as exc:
        _err(f"{_prog(plugin)} {verb}: cannot write the response to stdout: {exc.strerror or exc}")
        return EXIT_FAILED
    return 0


def _out(text: str) -> None:
    """Help and version text, newline-terminated; a stdout that cannot take it ends the process (128)."""
    from resource_extend.jsonio import utf8

    try:
        _emit(1, utf8(text if text.endswith("\n") else text + "\n"))
    except OSError as exc:
        _err(f"{sys.argv[0].rpartition('/')[2]}: cannot write to stdout: {exc.strerror or exc}")
        _exit(EXIT_FAILED)


def _err(text: str) -> None:
    from resource_extend.jsonio import utf8

    try:  # noqa: SIM105 - contextlib is one more import on every call
        _emit(2, utf8(" ".join(text.split("\n")) + "\n"))
    except OSError:
        pass  # nowhere left to say anything; the exit status still tells


def _emit(fd: int, data: bytes) -> None:
    # Straight to the descriptor: no Python stream buffer that could fail later, at exit, unreported, and
    # a closed descriptor (sys.stdout is None then) is just another OSError.
    view = memoryview(data)
    while view:
        view = view[posix.write(fd, view) :]


def _version_text() -> str:
    try:
        from resource_extend import _build_info as info  # type: ignore[attr-defined]

        revision, built, precompiled, built_for = info.REVISION, info.BUILT, info.PRECOMPILED, info.BUILT_FOR
    except ImportError:
        revision, built, precompiled, built_for = "HEAD", "now", (), None
    runtime = f"Python {sys.version.split()[0]}"
    return (
        f"{'Version:':<16}{__version__}\n{'Git hash:':<16}{revision}\n{'Built:':<16}{built}\n"
        f"{'Python version:':<16}{runtime}\n{'OS/Arch:':<16}{sys.platform}/{posix.uname().machine}\n"
        f"{'Bytecode:':<16}{_bytecode(precompiled, built_for)}\n{'Transports:':<16}{_transports()}\n"
    )


def _bytecode(precompiled: tuple[str, ...], built_for: tuple[str, str, str] | None) -> str:
    """Which minors the build compiled the code for, and whether this interpreter is one of them."""
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if built_for is not None:  # a --grpc build: its __main__ refuses any other interpreter or platform
        tag, platform, machine = built_for
        return f"a --grpc build for {tag} on {platform}/{machine} only, which this python3 ({minor}) is"
    start = sys.modules.get("_resource_extend_boot")
    if start is None:
        return f"not a built executable: this python3 ({minor}) imports the checkout's modules"
    built = f"precompiled for {', '.join(precompiled)}" if precompiled else "none precompiled"
    if getattr(start, "PRECOMPILED", False):
        return f"{built}; this python3 ({minor}) loads them"
    return f"{built}; this python3 ({minor}) compiles them from the sources (slower; make build with it precompiles)"


def _transports() -> str:
    """What this executable can reach etcd with on this interpreter: grpc only if its modules really load."""
    try:
        import grpc  # noqa: F401  (the --grpc build's compiled extension: it loads only where it was built for)
        import pyetcd  # noqa: F401
    except Exception as exc:  # an extension for another interpreter fails with ImportError or worse
        if isinstance(exc, ModuleNotFoundError) and exc.name in ("grpc", "pyetcd"):
            return "gateway only (built without grpc)"
        return f"gateway only (grpc is bundled but does not load here: {type(exc).__name__}: {exc})"
    return "gateway and grpc (etcd.transport: grpc works)"


def _usage_line(plugin: Plugin[Any]) -> str:
    return f"usage: {_prog(plugin)} [--config PATH] <verb> < request.json   ({_prog(plugin)} --help lists the verbs)"


def _unknown_verb(plugin: Plugin[Any], name: str) -> str:
    import difflib  # the error path only

    close = difflib.get_close_matches(name, [*_all_verbs(plugin), DOCTOR, EXPLAIN], n=1, cutoff=0.6)
    return f"unknown verb {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")


def _help_text(plugin: Plugin[Any]) -> str:
    prog = _prog(plugin)
    width = max(len(v.name) for v in plugin.verbs)
    lines = [
        f"{prog} — eru resource plugin: {plugin.summary}",
        "",
        f"usage: {prog} [--config PATH] <verb> < request.json",
        f"       {prog} <verb> --help      (or: {prog} help <verb>) the verb's request keys and an example",
        f"       {prog} doctor [--json|--verbose]  check every stored record, with each repair; writes nothing",
        f"       {prog} explain [--node NAME]... [--json] < request.json",
        "                                   each node's capacity for a request and what limits it",
        f"       {prog} --help | -h        this text",
        f"       {prog} --version | -v     version, build and transports",
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
    lines += [f"  {v.name:<{width}}  {v.summary}" for v in plugin.verbs]
    return "\n".join(lines) + "\n"


def _doctor_help(plugin: Plugin[Any]) -> str:
    prog = _prog(plugin)
    return (
        f"{prog} doctor — check every record of this plugin in etcd, in one read; writes nothing\n\n"
        f"usage: {prog} [--config PATH] doctor [--json | --verbose]\n\n"
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


def _explain_help(plugin: Plugin[Any]) -> str:
    prog = _prog(plugin)
    return (
        f"{prog} explain — how many workloads of a request each node takes, and the first limit it reaches\n\n"
        f"usage: {prog} [--config PATH] explain [--node NAME]... [--json] < request.json\n\n"
        "stdin: get-nodes-deploy-capacity's request (workload_resource; nodenames and deploy_count optional).\n"
        "Nodes: each --node, else nodenames, else every node under the prefix. For a node that takes fewer than\n"
        "deploy_count (default 1) workloads, the limit the scheduler reached first, with its numbers; a summary\n"
        "line last. --json prints one JSON object instead. Counts come from the scheduler the verbs run.\n"
        "Exit 0 with the report; 128 when the request, config or store fails (one line on stderr). Writes\n"
        "nothing. See docs/explain.md.\n"
    )


def _verb_help(plugin: Plugin[Any], name: str) -> str:
    verb = plugin.verb(name)
    summary = verb.summary if verb else ("print the plugin's name" if name == "name" else "list the verbs")
    from resource_extend import verbhelp

    return verbhelp.describe(_prog(plugin), plugin.name, name, summary)
