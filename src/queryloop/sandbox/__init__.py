"""queryloop.sandbox: an OS sandbox for Bash commands (Linux, bubblewrap).

`SandboxPolicy` says what a sandboxed command may touch; `Sandbox` is a session's sandbox
(the availability probe, the warn-once, the network proxy) and turns a shell command line
into the one to spawn (`Sandbox.launch`); `ExecGuard` checks every program a command
executes against an `ExecPolicy` (the deny rules), sandboxed or not. See docs/sandbox.md.

Each name loads its module on first use: a session builds its `ExecGuard` at start, but
bubblewrap's mounts, the proxy, the seccomp filter (ctypes, libseccomp) and the supervisor
are needed only when the first Bash command runs, so start-up does not pay for them.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bwrap import bwrap_argv, plan_mounts
    from .domains import DomainFilter, DomainPattern
    from .exec_policy import ExecCall, ExecPolicy
    from .guard import ExecGuard
    from .launch import Launch, launch_command
    from .policy import ReadOnlyPath, SandboxPolicy, SandboxUnavailableError, StandIn
    from .service import Sandbox

_LAZY = {
    "DomainFilter": ".domains",
    "DomainPattern": ".domains",
    "ExecCall": ".exec_policy",
    "ExecGuard": ".guard",
    "ExecPolicy": ".exec_policy",
    "Launch": ".launch",
    "ReadOnlyPath": ".policy",
    "Sandbox": ".service",
    "SandboxPolicy": ".policy",
    "SandboxUnavailableError": ".policy",
    "StandIn": ".policy",
    "bwrap_argv": ".bwrap",
    "launch_command": ".launch",
    "plan_mounts": ".bwrap",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DomainFilter",
    "DomainPattern",
    "ExecCall",
    "ExecGuard",
    "ExecPolicy",
    "Launch",
    "ReadOnlyPath",
    "Sandbox",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "StandIn",
    "bwrap_argv",
    "launch_command",
    "plan_mounts",
]
