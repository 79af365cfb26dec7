"""`launch_command`: how one shell command is started, sandboxed and exec-checked or not.

Kept apart from `service` (bubblewrap, the proxy, the bridge) and from the guard's machinery
(seccomp, the supervisor): a session without a sandbox, or before its first Bash command,
loads neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .guard import ExecGuard
    from .service import Sandbox
    from .supervisor import Refusals, SocketRule


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one command: the argv and environment to spawn, and whether it is
    sandboxed (False: excluded, or the sandbox could not start and it may run without)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    sandboxed: bool
    preexec_fn: Callable[[], None] | None = None
    """Installs the exec check's seccomp filter in the child (None: no check)."""
    refusals: Refusals | None = None
    """What the exec check refused while the command ran (said to the model)."""
    inner: tuple[tuple[str, ...], ...] = ()
    """The programs bwrap starts before the command, each's argv in order (the bridge)."""
    sockets: SocketRule | None = None
    """The unix sockets a sandboxed command may reach (None: not checked)."""


@contextlib.asynccontextmanager
async def launch_command(
    sandbox: Sandbox | None,
    argv: Sequence[str],
    *,
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    working_dirs: Sequence[Path] = (),
    files: Sequence[Path] = (),
    guard: ExecGuard | None = None,
) -> AsyncIterator[Launch]:
    """How to start `argv` (a shell running `command`): in `sandbox` when there is one, and
    with every program it executes checked by `guard` when there is one."""
    async with contextlib.AsyncExitStack() as stack:
        if sandbox is None:
            launch = Launch(tuple(argv), env, sandboxed=False)
        else:
            launch = await stack.enter_async_context(
                sandbox.launch(
                    argv, command=command, cwd=cwd, env=env, working_dirs=working_dirs, files=files
                )
            )
        if guard is not None:
            watch = await stack.enter_async_context(
                guard.watch(
                    policy=guard.policy_for(command, cwd),
                    env=env,
                    launch_argvs=[launch.argv, *launch.inner] if launch.sandboxed else [argv],
                    sockets=launch.sockets,
                )
            )
            if watch is not None:
                launch = replace(launch, preexec_fn=watch.preexec_fn, refusals=watch.refusals)
        yield launch
