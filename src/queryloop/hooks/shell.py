"""Running one command hook with the event JSON on stdin.

Shell form (`command` alone) runs through `sh -c`; exec form (`command` + `args`) spawns
`command` directly with `args` as its argument vector, no shell, `${CLAUDE_PROJECT_DIR}` and
the other path placeholders substituted as plain strings (Claude Code's rule). It produces a
`HookRun`: what happened, never an exception. A command gets its own process group so a
timeout kills it together with everything it started; a program that cannot start is a run
with an error (a non-blocking error, anthropics/claude-code#80697), never a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    try:
        out, err, code = await asyncio.wait_for(_communicate(proc, data), timeout)
    except TimeoutError:
        await _kill_group(proc)
        return HookRun(hook.label, None, error=f"timed out after {timeout:g}s and was killed")
    except BaseException:
        await _kill_group(proc)
        raise
    return HookRun(hook.label, code, _decode(out), _decode(err))


async def _communicate(proc: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bytes, int]:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    proc.stdin.close()
    out, err = await asyncio.gather(_read_capped(proc.stdout), _read_capped(proc.stderr))
    return out, err, await proc.wait()


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65536):
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
