"""The `statusLine` setting's command, run for the REPL's status line as Claude Code runs it.

Claude Code passes the command JSON about the session on stdin (`session_id`,
`transcript_path`, `cwd`, `model {id, display_name}`, `workspace {current_dir, project_dir}`,
`version`, `cost {...}`) and shows the first line of its stdout; it runs when the
conversation changes, at most every 300 ms (code.claude.com/docs/en/statusline). Here:
`StatusLineCommand.update(payload)` is called whenever the status may have changed (each time
the prompt is drawn, after /model...); runs are debounced (`DEBOUNCE_S`), skipped when the
payload is the one last shown, bounded by `TIMEOUT_S`, and the line is kept until the next
run succeeds. A command that fails or prints nothing leaves the built-in status line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

DEBOUNCE_S = 0.3
"""Claude Code's: "updates run at most every 300ms"."""
TIMEOUT_S = 5.0
"""A status line that takes longer is dropped for this run (the prompt never waits on it)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class StatusLineCommand:
    """Runs one `statusLine` command; `text` is its last first line ("" before any)."""

    def __init__(self, command: str, cwd: Path, on_change: Callable[[], None]) -> None:
        self.command = command
        self.cwd = cwd
        self.text = ""
        self._on_change = on_change
        self._wanted: Mapping[str, Any] | None = None
        self._shown: Mapping[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None

    def update(self, payload: Mapping[str, Any]) -> None:
        """Ask for a run with `payload` (the latest one wins within `DEBOUNCE_S`)."""
        if payload == self._shown:
            return
        self._wanted = payload
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run_soon())

    async def _run_soon(self) -> None:
        await asyncio.sleep(DEBOUNCE_S)
        payload, self._wanted = self._wanted, None
        if payload is None:
            return
        line = await run_command(self.command, self.cwd, payload)
        self._shown = payload
        if line is not None and line != self.text:
            self.text = line
            self._on_change()

    async def aclose(self) -> None:
        """Stop a run that is pending or under way."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def run_command(command: str, cwd: Path, payload: Mapping[str, Any]) -> str | None:
    """The first line `command` prints with `payload` as JSON on stdin (ANSI colour codes
    dropped, other control characters too); None when it fails, times out or prints
    nothing."""
    process = await asyncio.create_subprocess_exec(
        "bash", "-c", command,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(
            process.communicate(json.dumps(payload).encode()), TIMEOUT_S
        )
    except TimeoutError:
        return None
    finally:
        if process.returncode is None:  # timed out, or the run was cancelled
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0:
        return None
    lines = out.decode(errors="replace").splitlines()
    first = _CONTROL.sub("", re.sub(r"\x1b\[[0-9;]*m", "", lines[0])).strip() if lines else ""
    return first or None


def status_payload(
    *,
    session_id: str,
    transcript_path: str,
    cwd: Path,
    model: str,
    version: str,
    cost_usd: float,
    duration_ms: int,
    context: Mapping[str, int],
) -> dict[str, Any]:
    """The JSON Claude Code gives its status line command, with what queryloop knows."""
    return {
        "hook_event_name": "Status",
        "session_id": session_id,
        "transcript_path": transcript_path,
        "cwd": str(cwd),
        "model": {"id": model, "display_name": model},
        "workspace": {"current_dir": str(cwd), "project_dir": str(cwd)},
        "version": version,
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": round(cost_usd, 6), "total_duration_ms": duration_ms},
        "context_window": {
            "context_window_size": context.get("window", 0),
            "total_input_tokens": context.get("window", 0) - context.get("free", 0)
            if context.get("window")
            else 0,
        },
    }
