"""`Sandbox`: the session's sandbox as the Bash tool and background tasks use it.

It holds the policy and what is learned while the session runs: whether bwrap can start
here (probed once), whether the user was told it cannot (once), the proxy (started on the
first command that may use the network, closed with the session) and the placeholders
bwrap made for read-only paths that did not exist (removed when no sandboxed command runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

from .bridge import BridgeKind, bridge_argv, bridge_execs, find_socat, proxy_env
from .bwrap import bwrap_argv, plan_mounts, probe_argv, write_stand_ins
from .domains import DomainFilter
from .launch import Launch
from .policy import INSTALL_HINT, SandboxPolicy, SandboxUnavailableError
from .proxy import DomainProxy
from .supervisor import SocketRule

PROBE_TIMEOUT_S = 10.0


class Sandbox:
    """One session's sandbox (see the module docstring). `warn` hears, once, that the
    sandbox cannot start and commands run unsandboxed. `bridge` chooses the in-sandbox
    bridge to the proxy (`sandbox.bridge`); by default socat when it is installed."""

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        warn: Callable[[str], None] | None = None,
        bwrap: str | None = None,
        bridge: BridgeKind | None = None,
    ) -> None:
        self.policy = policy
        self._warn = warn
        self._bwrap = bwrap
        self._socat = None if bridge == "python" else find_socat()
        self._unavailable: str | None = None
        self._probed = False
        self._warned = False
        self._lock = threading.Lock()
        self._proxy = (
            DomainProxy(DomainFilter.of(policy.allowed_domains, policy.denied_domains))
            if policy.network
            else None
        )
        self._running = 0
        self._placeholders: set[Path] = set()
        self._stand_ins: Path | None = None

    def covers(self, command: str) -> bool:
        """True when `command` will run sandboxed: not excluded, and the sandbox works here
        (probed on first use; what `autoAllowBashIfSandboxed` asks before the call runs)."""
        return not self.policy.excludes(command) and self.unavailable() is None

    def unavailable(self) -> str | None:
        """Why the sandbox cannot start here, or None when it can (probed once)."""
        with self._lock:
            if not self._probed:
                self._unavailable = _probe(self._find_bwrap())
                self._probed = True
        return self._unavailable

    @contextlib.asynccontextmanager
    async def launch(
        self,
        argv: Sequence[str],
        *,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        working_dirs: Sequence[Path],
        files: Sequence[Path] = (),
    ) -> AsyncIterator[Launch]:
        """The way to start `argv` (a shell running `command`) in `cwd`; `working_dirs` and
        `files` are writable inside. Held open while the command runs. Raises
        `SandboxUnavailableError` when the sandbox is required and cannot start."""
        if self.policy.excludes(command):
            yield Launch(tuple(argv), env, sandboxed=False)
            return
        bwrap = await self._available()
        if bwrap is None:
            yield Launch(tuple(argv), env, sandboxed=False)
            return
        inner, inner_env, binds = list(argv), dict(env), []
        chain: list[tuple[str, ...]] = []
        sockets = list(self.policy.allow_unix_sockets)
        if self._proxy is not None:
            await self._proxy.start()
            inner = bridge_argv(self._proxy.socket_path, inner, socat=self._socat)
            chain += bridge_execs(inner, self._proxy.socket_path, socat=self._socat)
            inner_env.update(proxy_env())
            binds.append(self._proxy.folder)
            sockets.append(str(self._proxy.socket_path))
        stand_ins = self._stand_in_folder()
        binds.append(stand_ins)  # read-only even under a writable /tmp: git trusts them
        plan = plan_mounts(self.policy, working_dirs, files, binds, stand_ins=stand_ins)
        self._running += 1
        self._placeholders.update(plan.placeholders)
        rule = None if self.policy.allow_all_unix_sockets else SocketRule(_real_all(sockets))
        try:
            yield Launch(
                tuple(bwrap_argv(bwrap, plan, inner, cwd=cwd)),
                inner_env,
                sandboxed=True,
                inner=(*chain, tuple(argv)),
                sockets=rule,
            )
        finally:
            self._running -= 1
            if self._running == 0:
                self._remove_placeholders()

    async def aclose(self) -> None:
        """Close the proxy and remove the stand-in files (the session ends)."""
        if self._proxy is not None:
            await self._proxy.aclose()
        if self._stand_ins is not None:
            shutil.rmtree(self._stand_ins, ignore_errors=True)
            self._stand_ins = None

    def _stand_in_folder(self) -> Path:
        """The session's folder of file stand-ins (`bwrap.STAND_IN_FILES`), made once."""
        if self._stand_ins is None:
            folder = Path(tempfile.mkdtemp(prefix="queryloop-sandbox-"))
            write_stand_ins(folder)
            self._stand_ins = folder
        return self._stand_ins

    async def _available(self) -> str | None:
        """bwrap's path when it works here; None (said once) or an error when it does not."""
        reason = self.unavailable() if self._probed else await asyncio.to_thread(self.unavailable)
        if reason is None:
            return self._find_bwrap()
        if self.policy.fail_if_unavailable:
            raise SandboxUnavailableError(
                f"The Bash sandbox cannot start: {self._unavailable}. sandbox.failIfUnavailable "
                f"is set, so the command did not run. To fix it, {INSTALL_HINT} and make sure "
                "it can create namespaces (`bwrap --ro-bind / / true` must succeed), or set "
                "sandbox.failIfUnavailable to false to let commands run unsandboxed."
            )
        if not self._warned and self._warn is not None:
            self._warned = True
            self._warn(
                f"the Bash sandbox (sandbox.enabled) cannot start: {self._unavailable}; Bash "
                f"commands run UNSANDBOXED this session. To fix it, {INSTALL_HINT}; set "
                "sandbox.failIfUnavailable to stop commands instead."
            )
        return None

    def _find_bwrap(self) -> str | None:
        return self._bwrap or shutil.which("bwrap")

    def _remove_placeholders(self) -> None:
        """The empty folders and files bwrap made as mount points for missing read-only
        paths (only while still empty: someone outside may have written one since)."""
        for path in sorted(self._placeholders, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                elif path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
                    path.unlink()
        self._placeholders.clear()


def _probe(bwrap: str | None) -> str | None:
    """Why `bwrap` cannot make our namespaces here, or None when it can."""
    if bwrap is None:
        return "bwrap (bubblewrap) is not on PATH"
    try:
        done = subprocess.run(
            probe_argv(bwrap),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not be run ({exc})"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        return f"{bwrap} cannot create its namespaces here ({reason})"
    return None


def _real_all(paths: Sequence[str]) -> tuple[str, ...]:
    """Each socket path as given and with its links resolved (a connect names either)."""
    found: list[str] = []
    for path in paths:
        for form in (path, os.path.realpath(path)):
            if form not in found:
                found.append(form)
    return tuple(found)
