"""Running one command hook with the event JSON on stdin.

Shell form (`command` alone) runs through `sh -c`; exec form (`command` + `args`) spawns
`command` directly with `args` as its argument vector, no shell, `${CLAUDE_PROJECT_DIR}` and
the other path placeholders substituted as plain strings (Claude Code's rule). It produces a
`HookRun`: what happened, never an exception. A command gets its own process group so a
timeout kills it together with everything it started; a program that cannot start is a run
with an error (a non-blocking error, anthropics/claude-code#80697), never a crash.

A hook whose first stdout line is Claude Code's async answer (`hooks.background`) is answered
at once with a run that decided nothing and carries a `Detached`: its `finish()` waits for the
rest of the process, bounded by the `asyncTimeout` it asked for (then its group is killed).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import signal
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .background import async_answer
from .config import CommandHook

MAX_OUTPUT_BYTES = 1_000_000
"""Output kept per stream; a hook that prints more is truncated (and still drained)."""


@dataclass(frozen=True, slots=True)
class HookRun:
    """The raw result of one hook execution."""

    label: str
    exit_code: int | None = 0
    stdout: str = ""
    stderr: str = ""
    output: Mapping[str, Any] | None = None
    """A callable's returned dict (commands: parsed later from stdout)."""
    error: str | None = None
    """Why the hook did not run to completion (spawn failure, timeout, exception)."""
    detached: Detached | None = None
    """Set when the hook answered `{"async": true}`: it goes on in the background."""


@dataclass(frozen=True, slots=True)
class Detached:
    """A hook that went on in the background after its async answer."""

    timeout: float
    """Seconds it may still run (its `asyncTimeout`)."""
    finish: Callable[[], Awaitable[HookRun]]
    """Waits for it to end (killing it at `timeout`, or when the waiter is cancelled) and
    returns its whole run."""
    stop: Callable[[], Awaitable[None]]
    """Kills it now (the session ends before anyone awaited `finish`); idempotent."""


PLACEHOLDERS = (
    "CLAUDE_PROJECT_DIR",
    "QUERYLOOP_PROJECT_DIR",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
)
_PLACEHOLDER = re.compile(r"\$\{(" + "|".join(PLACEHOLDERS) + r")\}")


def substitute(text: str, env: Mapping[str, str]) -> str:
    """`${CLAUDE_PROJECT_DIR}` (and the plugin placeholders) replaced by their values."""
    return _PLACEHOLDER.sub(lambda m: env.get(m.group(1), m.group(0)), text)


async def run_command_hook(
    hook: CommandHook,
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
) -> HookRun:
    """Run the hook (shell or exec form) with `payload` as JSON on stdin."""
    data = json.dumps(payload, default=str).encode()
    pipes: dict[str, Any] = {
        "stdin": asyncio.subprocess.PIPE,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE,
        "cwd": cwd,
        "env": dict(env),
        "start_new_session": True,
    }
    try:
        if hook.args is None:
            proc = await asyncio.create_subprocess_shell(hook.command, **pipes)
        else:
            argv = [substitute(a, env) for a in (hook.command, *hook.args)]
            proc = await asyncio.create_subprocess_exec(*argv, **pipes)
    except OSError as exc:
        return HookRun(hook.label, None, error=f"could not start: {exc}")
    watch = _FirstLine()
    io = asyncio.ensure_future(_communicate(proc, data, watch))
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        detach_after = await asyncio.wait_for(asyncio.shield(watch.answer), timeout)
        if detach_after is not None:
            finish = _finisher(hook.label, proc, io, detach_after)
            stop = functools.partial(_stop, proc, io)
            return HookRun(hook.label, 0, detached=Detached(detach_after, finish, stop))
        left = max(0.0, deadline - asyncio.get_running_loop().time())
        out, err, code = await asyncio.wait_for(asyncio.shield(io), left)
    except TimeoutError:
        await _stop(proc, io)
        return HookRun(hook.label, None, error=f"timed out after {timeout:g}s and was killed")
    except BaseException:
        await _stop(proc, io)
        raise
    return HookRun(hook.label, code, _decode(out), _decode(err))


def _finisher(
    label: str, proc: asyncio.subprocess.Process, io: asyncio.Future[_Output], limit: float
) -> Callable[[], Awaitable[HookRun]]:
    async def finish() -> HookRun:
        try:
            out, err, code = await asyncio.wait_for(asyncio.shield(io), limit)
        except TimeoutError:
            await _stop(proc, io)
            ms = round(limit * 1000)
            return HookRun(
                label, None, error=f"exceeded its asyncTimeout of {ms} ms and was killed"
            )
        except BaseException:  # the session ends: Claude Code kills it too
            await _stop(proc, io)
            raise
        return HookRun(label, code, _decode(out), _decode(err))

    return finish


class _FirstLine:
    """Watches stdout's first line for the async answer, as Claude Code does: once the first
    line holds a `}`, it is parsed once; `answer` is then its timeout or None (also at EOF)."""

    def __init__(self) -> None:
        self.answer: asyncio.Future[float | None] = asyncio.get_running_loop().create_future()
        self._head = bytearray()

    def feed(self, chunk: bytes) -> None:
        if self.answer.done():
            return
        self._head.extend(chunk)
        line, newline, _ = bytes(self._head).partition(b"\n")
        if b"}" in line:
            self.answer.set_result(async_answer(line.decode("utf-8", errors="replace")))
        elif newline or len(self._head) > MAX_OUTPUT_BYTES:
            self.answer.set_result(None)

    def close(self) -> None:
        if not self.answer.done():
            self.answer.set_result(None)


_Output = tuple[bytes, bytes, int]


async def _stop(proc: asyncio.subprocess.Process, io: asyncio.Future[_Output]) -> None:
    """Stop reading, then kill the group and drain what is left."""
    io.cancel()
    await asyncio.gather(io, return_exceptions=True)
    await _kill_group(proc)


async def _communicate(proc: asyncio.subprocess.Process, data: bytes, watch: _FirstLine) -> _Output:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(data)
            await proc.stdin.drain()
        proc.stdin.close()
        out, err = await asyncio.gather(
            _read_capped(proc.stdout, watch.feed), _read_capped(proc.stderr)
        )
        return out, err, await proc.wait()
    finally:
        watch.close()


async def _read_capped(
    stream: asyncio.StreamReader, seen: Callable[[bytes], None] | None = None
) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if seen is not None:
            seen(chunk)
        if len(kept) < MAX_OUTPUT_BYTES:
            kept.extend(chunk[: MAX_OUTPUT_BYTES - len(kept)])
    return bytes(kept)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the hook's whole process group and reap it (no zombies, no open pipes)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):  # bounded: an escaped grandchild may hold it
                await asyncio.wait_for(stream.read(), 2.0)
    if proc.stdin is not None:
        proc.stdin.close()


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
