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

from resource_extend import errors
from resource_extend.command import executable
from resource_extend.command.nodeverbs import verb_table
from resource_extend.command.prefetch import BULK_PREFETCHING, PREFETCHING, send
from resource_extend.command.verb import DOCTOR, EXPLAIN, LOG_ENV, Call, Verb
from resource_extend.errors import PluginError
from resource_extend.plugin import prog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn, TypeVar

    from resource_extend.config import Config
    from resource_extend.plugin import Plugin
    from resource_extend.store.etcd.protocol import KV
    from resource_extend.store.record import Record

    R = TypeVar("R", bound=Record)
    # What a call parsed before its manifest was imported: the configuration, the request and the etcd
    # client its first read went out on (``parsed``), or what that raised.
    Parsed = tuple[Config, Any, KV | None]
    Early = Parsed | Exception

EXIT_FAILED = 128
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C ended


def serve_named(name: str, plugin: Callable[[str], Plugin[Any]]) -> NoReturn:
    """What an executable runs: ``main`` over the plugin's manifest, which ``plugin`` (the registry's lookup,
    handed down by the entry module: the command tree never imports the registry) imports. A call as core makes
    it (the verb alone) of a verb that reads its node first (``PREFETCHING``), or its nodes in bulk
    (``BULK_PREFETCHING``), parses its request and sends that first read before the manifest is imported
    (``parsed``): the manifest's modules and the verb's then load while etcd answers."""
    args = sys.argv[1:]
    early: Early | None = None
    # With stdout closed the first read is never sent: serve() fails the call before the store is touched.
    if len(args) == 1 and (args[0] in PREFETCHING or args[0] in BULK_PREFETCHING) and sys.stdout is not None:
        try:
            early = parsed(name, args[0], None, _read_stdin)
        except Exception as exc:  # raised by answer() where it would have been, with the same handling
            early = exc
        except KeyboardInterrupt:  # Ctrl-C at the terminal's prompt (_read_stdin): one line, no traceback
            _err(f"resource-{name} {args[0]}: interrupted")
            _exit(EXIT_INTERRUPTED)
    try:
        manifest = plugin(name)
    except Exception as exc:  # as the start words a plugin that cannot load (boot/start.py main)
        _not_loaded(args, exc)
    main(manifest, args, early)


def _not_loaded(args: list[str], exc: Exception) -> NoReturn:
    """The one line of a call whose plugin's code does not load (a damaged archive, say), and its status."""
    where = executable.verb_of(args)
    program = sys.argv[0].rpartition("/")[2]
    _err(f"{program}{where}: internal error while loading the plugin: {type(exc).__name__}: {exc}")
    _exit(EXIT_FAILED)


def main(plugin: Plugin[Any], argv: list[str] | None = None, early: Early | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    try:
        status = _dispatch(plugin, args, early)
    except KeyboardInterrupt:  # Ctrl-C by hand: one line, as every failure, never a traceback
        _err(f"{prog(plugin)}{executable.verb_of(args)}: interrupted")
        status = EXIT_INTERRUPTED
    except errors.UsageError as exc:
        _err(f"{prog(plugin)}: {exc}")
        from resource_extend.command import helptext  # help, version and usage texts: never a verb call's

        _err(helptext.usage_line(plugin))
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


def _dispatch(plugin: Plugin[Any], args: list[str], early: Early | None = None) -> int:
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
            from resource_extend.command import helptext

            _out(helptext.version_text(plugin))
            return 0
        elif arg.startswith("-") and arg != "-":
            from resource_extend.command import helptext

            raise errors.UsageError(helptext.unknown_option(arg))
        else:
            positional.append(arg)
        i += 1

    if not positional:
        if want_help:
            from resource_extend.command import helptext

            _out(helptext.help_text(plugin))
            return 0
        raise errors.UsageError("no verb given")
    name, extra = positional[0], positional[1:]
    if name in ("help", "h"):
        if not extra:
            from resource_extend.command import helptext

            _out(helptext.help_text(plugin))
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
        from resource_extend.command import helptext

        _out(helptext.explain_help(plugin))
        return 0
    if name == DOCTOR:
        from resource_extend.command import helptext

        _out(helptext.doctor_help(plugin))
        return 0
    table = verb_table(plugin)
    if name not in table.names():
        from resource_extend.command import helptext

        raise errors.UsageError(helptext.unknown_verb(plugin, name))
    if want_help:
        from resource_extend.command import helptext

        _out(helptext.verb_help(plugin, name))
        return 0
    if name == "name":
        return _write(plugin, name, f'"{plugin.name}"'.encode())
    if name == "verbs":
        from resource_extend.formats import jsonio

        return _write(plugin, name, jsonio.utf8(jsonio.dumps(table.advertised())))
    verb = table.verb(name)
    assert verb is not None
    return serve(plugin, verb, config_flag, early)


def _doctor(plugin: Plugin[Any], config_flag: str | None, as_json: bool, verbose: bool) -> int:
    # Imported only here: the store doctor is no part of a verb call.
    from resource_extend.tools import doctor

    return doctor.run(plugin, config_flag, as_json, verbose)


def _explain(plugin: Plugin[Any], config_flag: str | None, as_json: bool, nodes: list[str]) -> int:
    from resource_extend.tools import explain  # as doctor: no part of a verb call

    return explain.run(plugin, config_flag, as_json, nodes, _read_stdin)


def serve(plugin: Plugin[R], verb: Verb[R], config_flag: str | None, early: Early | None = None) -> int:
    """One serving call on this process's stdin and stdout; the exit status."""
    if sys.stdout is None:
        # The interpreter found fd 1 closed when it started (a check it made anyway: no system call here).
        # The answer could never go out, so the call fails before it reads or writes the store: a write
        # made and then not answered is one core would make again. fd 1 may since hold a file the start
        # opened (the archive), so only this, not the descriptor, says stdout is gone.
        _err(f"{prog(plugin)} {verb.name}: cannot write the response to stdout: Bad file descriptor")
        return EXIT_FAILED
    debug = posix.environ.get(LOG_ENV.encode(), b"").lower() == b"debug"
    started = time.perf_counter()
    status, response, error = answer(plugin, verb, config_flag, _read_stdin, debug, early)
    if status != 0:
        _err(error)
        return status
    status = _write(plugin, verb.name, response)
    if debug and status == 0:
        _err(f"{prog(plugin)} {verb.name}: ok in {(time.perf_counter() - started) * 1000:.1f} ms")
    return status


def answer(
    plugin: Plugin[R],
    verb: Verb[R],
    config_flag: str | None,
    stdin: Callable[[int], bytes],
    debug: bool = False,
    early: Early | None = None,
) -> tuple[int, bytes, str]:
    """Config, stdin, request schema, verb, response schema — the first failure ends the call.

    ``stdin(limit)`` gives the request's bytes, at most ``limit`` + 1 of them (more shows the request is past
    ``scheduler.max_stdin_bytes``, and the rest is never read). ``early``: what ``parsed`` gave (or raised)
    before the manifest was imported (``serve_named``). Returns the exit status, the response as UTF-8
    bytes (on success) and the one stderr line (on failure). Nothing here touches the process's streams, so
    tests can serve calls in-process.
    """
    kv = None
    try:
        from resource_extend.formats import jsonio, validation

        if isinstance(early, Exception):
            raise early
        settings, request, kv = early or parsed(plugin.name, verb.name, config_flag, stdin)
        _load_verb(verb.name)  # while etcd answers the verb's first read, if it went out
        validation.check(plugin.name, verb.name, "request", request, plugin.schemas)
        result = verb.run(Call(plugin, verb.name, request, settings, kv))
        validation.check(plugin.name, verb.name, "response", result, plugin.schemas)
        return 0, jsonio.utf8(jsonio.dumps(result)), ""
    except PluginError as exc:
        return EXIT_FAILED, b"", _failure(plugin, verb.name, str(exc), debug)
    except Exception as exc:  # a bug: still one line, never a traceback on core's output
        return EXIT_FAILED, b"", _failure(plugin, verb.name, f"internal error: {type(exc).__name__}: {exc}", debug)
    finally:
        if kv is not None:  # the first read's client: a prefetched transaction nobody took is answered first
            kv.close()


def parsed(plugin: str, verb: str, config_flag: str | None, stdin: Callable[[int], bytes]) -> Parsed:
    """The call's configuration and request (read and bounded, not yet checked by the schema), and the etcd
    client that the verb's first read went out on, when it reads the request's node first (verb.prefetch:
    a read, sent now so that etcd answers while the code loads; its failures are silent)."""
    from resource_extend import config
    from resource_extend.formats import jsonio

    settings = config.load(plugin, config_flag)
    bounds = settings.bounds
    data = stdin(bounds.max_stdin_bytes)
    bounds.check_stdin(len(data))
    try:
        request = jsonio.loads_request(data)
    except PluginError as exc:
        if str(exc) != jsonio.EMPTY_INPUT:
            raise
        # Run by hand without the pipe: say what goes on stdin, as explain does, not a bare "EOF".
        raise PluginError(
            f"{exc}: stdin is empty; {verb} reads its request there, one JSON object: echo '{{...}}' |"
            f" resource-{plugin} {verb} (resource-{plugin} {verb} --help shows its keys and an example)"
        ) from None
    bounds.check_request(request)  # before the schema walks a list of a million names
    return settings, request, send(settings, plugin, verb, request)


def _load_verb(name: str) -> None:
    """The verb's own modules, loaded the start's way (boot/start.py ``load_verb``) when the executable runs."""
    try:
        executable.load_verb(name)
    except Exception as exc:  # worded as the start words the rest of the plugin's code not loading
        raise PluginError(f"internal error while loading the plugin: {type(exc).__name__}: {exc}") from None


def _read_stdin(limit: int) -> bytes:
    """Up to ``limit`` + 1 bytes: one byte past the limit is enough to refuse the request, so a hostile
    stdin costs at most the limit in memory and time, however much is behind it."""
    if sys.stdin is None:  # started with fd 0 closed: no request
        return b""
    if posix.isatty(0):  # a person at a terminal, never core: say what the silence waits for
        command = sys.argv[0].rpartition("/")[2] + executable.verb_of(sys.argv[1:])
        _err(
            f"{command}: reading the request from the terminal: type one JSON object, then Ctrl-D on a line of"
            f" its own (Ctrl-C gives up); or pipe it in: echo '{{...}}' | {command}"
        )
    try:
        return sys.stdin.buffer.read(limit + 1)
    except OSError as exc:
        raise PluginError(f"decode plugin input: cannot read stdin: {exc.strerror}") from None


def _failure(plugin: Plugin[Any], verb: str, message: str, debug: bool) -> str:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()  # before the line, which goes out unbuffered
    return f"{prog(plugin)} {verb}: {' '.join(message.split())}"


def _write(plugin: Plugin[Any], verb: str, data: bytes) -> int:
    """Put ``data`` on stdout; a stdout that cannot take it (full disk, closed, nobody reading) fails the
    call the usual way: one stderr line, exit 128. The response carries no trailing newline, as the
    reference writes it."""
    try:
        _emit(1, data)
    except OSError as exc:
        _err(f"{prog(plugin)} {verb}: cannot write the response to stdout: {exc.strerror or exc}")
        return EXIT_FAILED
    return 0


def _out(text: str) -> None:
    """Help and version text, newline-terminated; a stdout that cannot take it ends the process (128)."""
    from resource_extend.formats.jsonio import utf8

    try:
        _emit(1, utf8(text if text.endswith("\n") else text + "\n"))
    except OSError as exc:
        _err(f"{sys.argv[0].rpartition('/')[2]}: cannot write to stdout: {exc.strerror or exc}")
        _exit(EXIT_FAILED)


def _err(text: str) -> None:
    from resource_extend.formats.jsonio import utf8

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
