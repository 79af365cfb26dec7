"""The `queryloop` command: `main(argv) -> int` and the console-script `entrypoint()`.

Nothing heavy is imported at module level (no SDKs, no prompt_toolkit, no rich), so
`queryloop --help` and `--version` start fast; the Agent and the UI load only when used.
"""

from __future__ import annotations

import io
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO, cast

from ..errors import ConfigError
from .agent_factory import make_agent
from .args import CliOptions, UsageError, parse_args
from .exit_codes import ExitCode
from .heap import pause_collections, settle


def entrypoint() -> None:
    """The console script: `sys.exit(main())`, with the collector paused during start-up
    (`heap`) and a quick interpreter exit."""
    pause_collections()
    code = main()
    quick_exit_teardown()
    sys.exit(code)


def quick_exit_teardown() -> None:
    """Make the interpreter's own teardown cheap: called once the command's work is done.

    At exit Python clears every module and collects their cycles; with the SDKs loaded that
    walks hundreds of thousands of objects (thousands of pydantic classes) and took 0.3-0.5 s
    after the last answer. `gc.freeze()` moves everything alive into the permanent
    generation, which those final collections skip. Nothing is lost: files, the transcript
    and MCP servers are closed explicitly before this; stdout and stderr are still flushed
    and atexit handlers still run, as in any exit."""
    import gc

    gc.freeze()


def main(
    argv: Sequence[str] | None = None, *, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Run the command with `argv` (default `sys.argv[1:]`) and return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    verbose = "--verbose" in args
    try:
        options = parse_args(args)
        if options is None:
            from .. import __version__

            stdout.write(f"queryloop {__version__}\n")
            return ExitCode.OK
        return _dispatch(options, stdin, stdout)
    except KeyboardInterrupt:
        sys.stderr.write("\nqueryloop: interrupted\n")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `queryloop -p ... | head`: the reader is gone. Quietly, as a command killed by
        # SIGPIPE would; the transcript is already on disk.
        _discard_stdout(stdout)
        return ExitCode.OUTPUT_CLOSED
    except BaseException as exc:  # one line on stderr, never a traceback unless --verbose
        if isinstance(exc, SystemExit):
            raise
        return report_error(exc, verbose=verbose)


def _dispatch(options: CliOptions, stdin: TextIO, stdout: TextIO) -> int:
    if options.command is not None:
        settle()  # no session starts: the collector as usual (`batch` may run for hours)
    if options.command == "sessions":
        from .commands import print_sessions

        return print_sessions(options.cwd, stdout)
    if options.command == "rewind":
        from .rewind import print_rewind

        return print_rewind(options.command_args, stdout)
    if options.command in ("report", "batch", "mcp"):
        from .ops import run_subcommand

        return run_subcommand(options.command, options.command_args, stdout)
    if options.command == "trust":
        from .commands import show_trust, trust_folder

        show = "--show" in options.command_args
        paths = [a for a in options.command_args if a != "--show"]
        target = Path(paths[0]) if paths else options.cwd
        return show_trust(target, stdout) if show else trust_folder(target, stdout)
    if options.command == "acp":
        from .editor import run_acp

        return run_acp(options)
    if options.trust:
        # --trust records the trust, as `queryloop trust` does, then runs trusted.
        from ..config.trust import trust_folder as record_trust

        record_trust(options.cwd)
    shutdown_tracing = start_tracing()
    try:
        return _run_agent(options, stdin, stdout)
    finally:
        if shutdown_tracing is not None:
            shutdown_tracing()  # the spans still buffered are exported before the exit


def start_tracing() -> Callable[[], None] | None:
    """Traces per the `OTEL_*` variables (docs/telemetry.md): a tracer provider registered
    for the session, the trace a parent process passed in `TRACEPARENT` continued. Returns
    the provider's shutdown; None (and nothing imported) when `OTEL_TRACES_EXPORTER` is
    unset."""
    import os

    if not os.environ.get("OTEL_TRACES_EXPORTER"):
        return None
    from ..telemetry.setup import continue_parent_trace, setup_from_env

    shutdown = setup_from_env(os.environ)
    if shutdown is not None:
        continue_parent_trace(os.environ)
    return shutdown


def _run_agent(options: CliOptions, stdin: TextIO, stdout: TextIO) -> int:
    prompt = options.prompt
    piped = not _isatty(stdin)
    # Without a terminal there is no REPL: a piped or redirected stdin means print mode.
    # stdin is read only when no prompt was given, so a prompt never waits on an open pipe.
    if options.print_mode or piped:
        from .preload import start_preload, startup_notices

        # The SDK loads in the background while settings, session and MCP servers are
        # prepared. (The REPL starts it once its prompt is drawn: `loading`.)
        start_preload(options.model)
        decides = bool(options.approve or options.deny)
        if not prompt and piped and not decides:
            prompt = stdin.read().strip()
        resumes = bool(options.resume or options.continue_latest)
        if not prompt and not resumes:
            raise UsageError("no prompt: pass -p PROMPT, or pipe the prompt on stdin")
        import asyncio

        for notice in startup_notices(options.model):
            _print_notice(notice)
        return asyncio.run(_print(options, prompt or None, stdout))
    from .repl import run_repl

    return run_repl(options)


async def _print(options: CliOptions, prompt: str | None, stdout: TextIO) -> int:
    """Print mode; without a prompt a resumed session continues where it stopped (its
    deferred calls decided by --approve / --deny, or asked about again)."""
    from .print_mode import run_print

    agent = make_agent(options, on_notice=_print_notice)
    out = PipeGuard(stdout)
    try:
        await agent.start()
        settle()  # what start-up built stays: the collector skips it from now on (`heap`)
        code = await run_print(
            agent,
            prompt,
            output_format=options.output_format,
            include_partial=options.include_partial_messages,
            out=cast(TextIO, out),  # write/flush/isatty: all run_print uses
        )
    finally:
        await agent.aclose()
    if out.closed_by_reader or reader_left_unread(stdout):
        raise BrokenPipeError("stdout was closed by its reader")
    return int(code)


class PipeGuard(io.TextIOBase):
    """stdout for print mode. When its reader goes away (`| head`), later writes are dropped
    and the run goes on to its end: the transcript keeps the whole answer (`--continue`
    reads it), and `main` then exits quietly with 141."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self.out = out
        self.closed_by_reader = False

    def write(self, text: str) -> int:
        """Write through, unless the reader is gone."""
        if not self.closed_by_reader:
            try:
                self.out.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        """Flush through, unless the reader is gone."""
        if not self.closed_by_reader:
            try:
                self.out.flush()
            except BrokenPipeError:
                self._reader_gone()

    def isatty(self) -> bool:
        """Whether the real stdout is a terminal."""
        return _isatty(self.out)

    def _reader_gone(self) -> None:
        self.closed_by_reader = True


READER_WAIT_S = 2.0
"""How long print mode waits at its end for a pipe's reader to take what is still unread."""


def reader_left_unread(stream: TextIO, wait_s: float = READER_WAIT_S) -> bool:
    """Whether `stream` is a pipe whose reader went away with output still unread.

    Output that fits the pipe's buffer is written without an error even when the reader
    reads only part of it (`| head -1` takes one line and exits), so a failed write cannot
    tell. Here the pipe is watched until it is drained (False), its reader closes with bytes
    left in it (True: the 141 a command killed by SIGPIPE would give), or `wait_s` passes
    (False: a reader that is alive but slow, such as a pager, may still read it)."""
    import os
    import select
    import stat
    import time

    try:
        stream.flush()
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
    except (OSError, ValueError, AttributeError):
        return False
    poller = select.poll()
    poller.register(fd, 0)  # errors only: POLLERR once the last reader has closed
    deadline = time.monotonic() + wait_s
    while _unread(fd) > 0:
        if poller.poll(50):
            return _unread(fd) > 0
        if time.monotonic() > deadline:
            return False
    return False


def _unread(fd: int) -> int:
    """Bytes written to the pipe `fd` and not read yet (FIONREAD works on either end)."""
    import fcntl
    import struct
    import termios

    try:
        raw = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return 0
    count: int = struct.unpack("i", raw)[0]
    return count


def _print_notice(text: str) -> None:
    sys.stderr.write(f"queryloop: notice: {text}\n")


def report_error(exc: BaseException, *, verbose: bool) -> int:
    """Print `exc` as one actionable line (plus the traceback with --verbose); its exit code."""
    if verbose:
        traceback.print_exception(exc)
    if _is_instance(exc, "queryloop.providers.errors", "ProviderError"):
        code, kind = ExitCode.MODEL_ERROR, "model error"
    elif isinstance(exc, ConfigError) or _is_instance(exc, "queryloop.session", "SessionError"):
        code, kind = ExitCode.USAGE, "error"
    else:
        code, kind = ExitCode.ERROR, f"internal error ({type(exc).__name__})"
    hint = "" if verbose or code != ExitCode.ERROR else " (run with --verbose for details)"
    message = " ".join(str(exc).split()) or type(exc).__name__
    sys.stderr.write(f"queryloop: {kind}: {message}{hint}\n")
    return int(code)


def _is_instance(exc: BaseException, module: str, name: str) -> bool:
    """isinstance without importing `module`: if it was never imported (the providers package
    pulls in both SDKs, ~1 s), nothing can have raised its exceptions."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None)
    return isinstance(cls, type) and isinstance(exc, cls)


def _discard_stdout(stdout: TextIO) -> None:
    """Point stdout's descriptor at /dev/null, so the interpreter's final flush of the
    buffered rest cannot fail again ("Exception ignored ... BrokenPipeError")."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (tests pass StringIO): nothing will flush it at exit


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


if __name__ == "__main__":
    entrypoint()
