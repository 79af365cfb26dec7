"""`ExecGuard`: a session's exec check, as the Bash tool and background tasks use it.

Every program a Bash command executes — whatever name it is called by, whatever ran it (a
shell, `make`, `xargs`, an interpreter's `system()`) — meets the session's deny rules (and
its ask rules: nobody can answer in the middle of a command, so there they refuse) when the
kernel is asked to execute it. The guard holds what a session learns once: whether seccomp
user notification works here (probed once, said once when it does not: the parse of the
command line then decides alone), and the index of the watched programs' files.

`watch` supervises one command (`supervisor.Supervisor`); it is entered around the spawn,
whose `preexec_fn` installs the filter in the child. The filter (ctypes, libseccomp), the
supervisor and the program index load with the first command watched, not when a session
builds its guard.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .exec_policy import ExecPolicy

if TYPE_CHECKING:
    from .programs import ProgramIndex
    from .supervisor import Refusals, SocketRule

PROBE_TIMEOUT_S = 10.0
UNAVAILABLE_HINT = (
    "deny rules are then checked on the command line only, not where programs are executed"
)

PolicyFor = Callable[[str, Path], "ExecPolicy | None"]
"""The exec policy for one command line run in a folder; None when nothing is to check."""


@dataclass(frozen=True, slots=True)
class Watch:
    """One supervised command: pass `preexec_fn` to the spawn; `refusals` fills while it
    runs."""

    preexec_fn: Callable[[], None]
    refusals: Refusals


class ExecGuard:
    """One session's exec check (see the module docstring). `warn` hears, once, that it
    cannot run here."""

    def __init__(self, policy_for: PolicyFor, *, warn: Callable[[str], None] | None = None) -> None:
        self.policy_for = policy_for
        self._warn = warn
        self._lock = threading.Lock()
        self._probed = False
        self._unavailable: str | None = None
        self._warned = False
        self._indexes: dict[tuple[frozenset[str], str], ProgramIndex] = {}

    def unavailable(self) -> str | None:
        """Why exec checks cannot run here, or None when they can (probed once)."""
        with self._lock:
            if not self._probed:
                self._unavailable = _probe()
                self._probed = True
        return self._unavailable

    @contextlib.asynccontextmanager
    async def watch(
        self,
        *,
        policy: ExecPolicy | None,
        env: Mapping[str, str],
        launch_argvs: Sequence[Sequence[str]],
        sockets: SocketRule | None = None,
    ) -> AsyncIterator[Watch | None]:
        """Supervise one command (None when there is nothing to check, or it cannot be
        checked here: then the command runs as it would without the guard)."""
        if policy is None and sockets is None:
            yield None
            return
        if await self._available() is not None:
            yield None
            return
        from .programs import ProgramIndex
        from .seccomp import FilterSpec, child_installer, compile_filter
        from .supervisor import Supervisor

        compiled = compile_filter(FilterSpec(sockets=sockets is not None))
        index = self._index(policy, env) if policy is not None else ProgramIndex()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        supervisor = Supervisor(
            parent,
            compiled.numbers,
            policy=policy,
            index=index,
            launch_argvs=launch_argvs,
            sockets=sockets,
        )
        supervisor.start()
        try:
            yield Watch(child_installer(compiled, child), supervisor.refusals)
        finally:
            child.close()
            await asyncio.to_thread(supervisor.stop)

    async def _available(self) -> str | None:
        reason = self.unavailable() if self._probed else await asyncio.to_thread(self.unavailable)
        if reason is not None and not self._warned and self._warn is not None:
            self._warned = True
            self._warn(f"the exec check cannot run here: {reason}; {UNAVAILABLE_HINT}")
        return reason

    def _index(self, policy: ExecPolicy, env: Mapping[str, str]) -> ProgramIndex:
        from .programs import ProgramIndex, search_path

        key = (policy.programs(), search_path(env))
        with self._lock:
            found = self._indexes.get(key)
        if found is None:
            found = ProgramIndex.build(*key)
            with self._lock:
                self._indexes[key] = found
        return found


def _probe() -> str | None:
    """Why a filter with a listener cannot be loaded and answered here, or None: runs
    `true` under it, supervised, as a command would run."""
    from .programs import ProgramIndex
    from .seccomp import FilterSpec, SeccompUnavailableError, child_installer, compile_filter
    from .supervisor import Supervisor

    try:
        compiled = compile_filter(FilterSpec(sockets=True))
    except SeccompUnavailableError as exc:
        return str(exc)
    except OSError as exc:
        return f"libseccomp cannot build the filter ({exc})"
    parent, child = socket.socketpair()
    supervisor = Supervisor(parent, compiled.numbers, policy=None, index=ProgramIndex())
    supervisor.start()
    try:
        done = subprocess.run(
            ["true"],
            preexec_fn=child_installer(compiled, child),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the kernel refused a seccomp filter with a user-notification listener ({exc})"
    finally:
        child.close()
        supervisor.stop()
    if done.returncode != 0:
        return f"a program under the seccomp filter failed (exit code {done.returncode})"
    return None
