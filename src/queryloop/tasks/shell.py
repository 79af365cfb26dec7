"""A background shell command: own process group, output straight to a file."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Mapping
from pathlib import Path

STOP_GRACE_S = 2.0


def shell_path() -> str:
    """bash when available (what models expect), else sh."""
    return shutil.which("bash") or "/bin/sh"


class BackgroundShell:
    """One running command. stdout and stderr go to `output_path` (no pipe to fill up)."""

    def __init__(self, proc: asyncio.subprocess.Process, output_path: Path) -> None:
        self.proc = proc
        self.output_path = output_path

    @classmethod
    async def spawn(
        cls, command: str, cwd: Path, env: Mapping[str, str], output_path: Path
    ) -> BackgroundShell:
        """Start `command` with bash (else sh) in a new session."""
        output_path.parent.mkdir(parents=True, exist_ok=True)
        with output_path.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                shell_path(),
                "-c",
                command,
                cwd=str(cwd),
                env=dict(env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(proc, output_path)

    async def wait(self) -> int:
        """The exit code once the shell exits (negative: killed by that signal)."""
        return await self.proc.wait()

    async def stop(self) -> None:
        """SIGTERM the whole process group, SIGKILL it if it is still there after a grace."""
        self._signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), STOP_GRACE_S)
        except TimeoutError:
            self._signal(signal.SIGKILL)
            await self.proc.wait()
        # Children that ignored SIGTERM and outlived the shell go too.
        self._signal(signal.SIGKILL)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)
