"""Running one shell command: own process group, bounded capture, timeout, cwd tracking."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...sandbox.launch import Launch, launch_command
from ...tasks.shell import shell_path

if TYPE_CHECKING:
    from ...sandbox import ExecGuard, Sandbox

CAPTURE_BYTES = 512 * 1024
"""Bytes kept from each end of a stream; the middle of a huge output is dropped early."""
PIPE_GRACE_S = 0.5
"""How long to wait for output after the shell exited (a background child may hold the pipe)."""
REAP_TIMEOUT_S = 5.0
EXIT_POLL_S = 0.05


def trace_context_env() -> dict[str, str]:
    """The current span's W3C trace context as environment variables (`TRACEPARENT`,
    `TRACESTATE`, the carrier names of OpenTelemetry's environment-variable propagation), so
    a traced program the command runs joins the tool call's trace; empty when nothing is
    traced. OpenTelemetry is reached through `sys.modules`: a process that never loaded it
    does not load it here."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or not trace.get_current_span().get_span_context().is_valid:
        return {}
    from opentelemetry.propagate import inject

    carrier: dict[str, str] = {}
    inject(carrier)
    return {key.upper(): value for key, value in carrier.items()}


@dataclass(frozen=True, slots=True)
class ShellOutcome:
    """What a finished (or killed) command left behind."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    final_cwd: str | None
    """The shell's working directory when it exited (None if it could not be recorded)."""
    refusals: str = ""
    """What the exec check refused while the command ran, one line each."""


class _Capture:
    """Keeps the first and the last CAPTURE_BYTES of a stream and counts the rest."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = CAPTURE_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * CAPTURE_BYTES:
                del self.tail[: len(self.tail) - CAPTURE_BYTES]

    def text(self) -> str:
        tail = bytes(self.tail[-CAPTURE_BYTES:])
        dropped = self.total - len(self.head) - len(tail)
        middle = f"\n[... {dropped} bytes omitted ...]\n" if dropped > 0 else ""
        return self.head.decode("utf-8", "replace") + middle + tail.decode("utf-8", "replace")


async def _pump(stream: asyncio.StreamReader | None, sink: _Capture) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        sink.feed(chunk)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's whole process group (children and grandchildren too)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _spawn(launch: Launch, cwd: Path) -> asyncio.subprocess.Process:
    """Start the shell (or bwrap running it). The process runs before the pipes are
    connected: if we are cancelled in between, asyncio would kill only the shell, so kill
    its group instead."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=str(cwd),
            env=dict(launch.env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=launch.preexec_fn,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        spawn.add_done_callback(_kill_spawned)
        raise


def _kill_spawned(spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not spawn.cancelled() and spawn.exception() is None:
        _kill_group(spawn.result())


async def run_shell(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    *,
    sandbox: Sandbox | None = None,
    working_dirs: Sequence[Path] = (),
    guard: ExecGuard | None = None,
) -> ShellOutcome:
    """Run `command` in a new session (own process group) and capture its output; in
    `sandbox` when given (`working_dirs` writable there), every program it executes checked
    by `guard` when given.

    On timeout or cancellation the whole group is killed; cancellation still propagates.
    Raises `SandboxUnavailableError` when the sandbox is required and cannot start.
    """
    fd, cwd_file = tempfile.mkstemp(prefix="queryloop-cwd-")
    os.close(fd)
    # The EXIT trap records where the shell ended up, even after an explicit `exit`. In the
    # sandbox the record file is bound in writable (its /tmp is private).
    script = f"trap 'pwd -P >| {shlex.quote(cwd_file)} 2>/dev/null' EXIT\n{command}"
    argv = [shell_path(), "-c", script]
    try:
        async with launch_command(
            sandbox, argv, command=command, cwd=cwd, env=env,
            working_dirs=working_dirs, files=[Path(cwd_file)], guard=guard,
        ) as launch:  # fmt: skip
            proc = await _spawn(launch, cwd)
            out, err = _Capture(), _Capture()
            readers = [
                asyncio.create_task(_pump(proc.stdout, out)),
                asyncio.create_task(_pump(proc.stderr, err)),
            ]
            timed_out = await _wait(proc, readers, timeout_s)
        final = Path(cwd_file).read_text(encoding="utf-8").strip() or None
        refused = launch.refusals.text() if launch.refusals is not None else ""
        return ShellOutcome(out.text(), err.text(), proc.returncode, timed_out, final, refused)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(cwd_file)


async def _exit_code(proc: asyncio.subprocess.Process) -> None:
    """Return once the shell itself has exited.

    On Python 3.11 `Process.wait()` also waits for the output pipes to close, which a
    background child (`server &`) may keep open forever; the return code is set earlier.
    """
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while proc.returncode is None and not waiter.done():
            await asyncio.wait({waiter}, timeout=EXIT_POLL_S)
    finally:
        waiter.cancel()


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    # No public API closes a finished process's pipes that a background child still holds.
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _wait(
    proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]], timeout_s: float
) -> bool:
    """Wait for the shell and its output; True when it had to be killed for the timeout."""
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_exit_code(proc), timeout_s)
        except TimeoutError:
            timed_out = True
            _kill_group(proc)
            await _exit_code(proc)
        _, pending = await asyncio.wait(readers, timeout=PIPE_GRACE_S)
        if pending:
            _close_pipes(proc)
    except BaseException:
        # Cancelled (abort, a failed sibling) or broken: never leave the command running.
        _kill_group(proc)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(_exit_code(proc), REAP_TIMEOUT_S)
        raise
    finally:
        for reader in readers:
            reader.cancel()
    return timed_out
