"""`!command` at the REPL prompt: bash mode, as Claude Code has it.

Claude Code's bash mode "sends the line you type straight to the persistent shell session"
(anthropics/claude-code#2358): the command runs at once, as the user — no permission rule
is asked, since the user typed it — its output is shown, and both are added to the
conversation for the model to read with the next prompt, as Claude Code records them
(`<bash-input>…</bash-input>`, `<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>`).
Here the command runs in `bash -c` in the working folder (no shell state carries over from
one `!` line to the next), and the record goes before the next prompt's text.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path

CONTEXT_LIMIT = 30_000
"""Characters of a command's output kept for the model (each stream; the screen shows all)."""


@dataclass(frozen=True)
class BashRun:
    """One `!` command and what it printed."""

    command: str
    stdout: str
    stderr: str
    status: int

    def context(self) -> str:
        """The record the next prompt carries (Claude Code's tags)."""
        return (
            f"<bash-input>{self.command}</bash-input>\n"
            f"<bash-stdout>{_capped(self.stdout)}</bash-stdout>"
            f"<bash-stderr>{_capped(self.stderr)}</bash-stderr>"
        )


async def run_bash(command: str, cwd: Path) -> BashRun:
    """Run `command` with bash in `cwd`; its output and exit status (a cancel kills it)."""
    process = await asyncio.create_subprocess_exec(
        "bash", "-c", command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = await process.communicate()
    finally:
        if process.returncode is None:  # Ctrl-C: the command goes too
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return BashRun(
        command,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
        process.returncode if process.returncode is not None else -1,
    )


def _capped(text: str) -> str:
    if len(text) <= CONTEXT_LIMIT:
        return text
    return text[:CONTEXT_LIMIT] + f"\n… ({len(text) - CONTEXT_LIMIT} more characters)"
