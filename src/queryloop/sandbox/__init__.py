"""queryloop.sandbox: an OS sandbox for Bash commands (Linux, bubblewrap).

`SandboxPolicy` says what a sandboxed command may touch; `Sandbox` is a session's sandbox
(the availability probe, the warn-once, the network proxy) and turns a shell command line
into the one to spawn (`Sandbox.launch`); `ExecGuard` checks every program a command
executes against an `ExecPolicy` (the deny rules), sandboxed or not. See docs/sandbox.md.
"""

from .bwrap import bwrap_argv, plan_mounts
from .domains import DomainFilter, DomainPattern
from .exec_policy import ExecCall, ExecPolicy
from .guard import ExecGuard
from .policy import ReadOnlyPath, SandboxPolicy, SandboxUnavailableError, StandIn
from .service import Launch, Sandbox, launch_command

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
