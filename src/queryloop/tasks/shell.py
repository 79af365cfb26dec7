"""A background shell command: own process group, output straight to a file; and the shell
every command of ours runs in (`shell_path`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from ..sandbox.launch import launch_command

if TYPE_CHECKING:
    from ..sandbox import ExecGuard, Sandbox
    from ..sandbox.supervisor import Refusals

STOP_GRACE_S = 2.0


def shell_path() -> str:
    """bash when available (what models expect), else sh."""
    return shutil.which("bash") or "/bin/sh"


class BackgroundShell:
    """One running command. stdout and stderr go to `output_path` (no pipe to fill up)."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        output_path: Path,
        stack: AsyncExitStack,
        refusals: Refusals | None = None,
    ) -> None:
        self.proc = proc
        self.output_path = output_path
        self._stack = stack
        self._refusals = refusals

    @classmethod
    async def spawn(
        cls,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        output_path: Path,
        *,
        sandbox: Sandbox | None = None,
        working_dirs: Sequence[Path] = (),
        guard: ExecGuard | None = None,
    ) -> BackgroundShell:
        """Start `command` with bash (else sh) in a new session, in `sandbox` when given
        (`working_dirs` writable there); raises `SandboxUnavailableError` when the sandbox
        is required and cannot start."""
        output_path.parent.mkdir(parents=True, exist_ok=True)
        stack = AsyncExitStack()
        try:
            launch = await stack.enter_async_context(
                launch_command(
                    sandbox,
                    [shell_path(), "-c", command],
                    command=command,
                    cwd=cwd,
                    env=env,
                    working_dirs=working_dirs,
                    guard=guard,
                )
            )
            with output_path.open("wb") as out:
                proc = await asyncio.create_subprocess_exec(
                    *launch.argv,
                    cwd=str(cwd),
                    env=dict(launch.env),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=out,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=launch.preexec_fn,
                )
        except BaseException:
            await stack.aclose()
            raise
        return cls(proc, output_path, stack, launch.refusals)

    async def wait(self) -> int:
        """The exit code once the shell exits (negative: killed by that signal)."""
        try:
            return await self.proc.wait()
        finally:
            await self._stack.aclose()
            self._report_refusals()

    def _report_refusals(self) -> None:
        """What the exec check refused goes at the end of the output the model reads."""
        text = self._refusals.text() if self._refusals is not None else ""
        if text:
            with self.output_path.open("a", encoding="utf-8") as out:
                out.write(f"\n{text}\n")

    async def stop(self) -> None:
        """SIGTERM the whole process group, SIGKILL it if it is still there after a grace.
        (In the sandbox the group is bwrap's: when it goes, the kernel ends the sandbox.)"""
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
