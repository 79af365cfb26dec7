"""What the exec check asks of the permission rules: `ExecPolicy`, and the `ExecCall` it is
asked about. The sandbox knows no rule syntax: `permissions.exec_rules` implements the
policy from the session's deny and ask rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ExecCall:
    """One program a command is about to execute, as the kernel was asked to run it."""

    path: str
    """The file as the process named it (relative to its working folder, or absolute)."""
    names: tuple[str, ...]
    """Every name this program goes by: the file's own name, the name it was called by
    (`argv[0]`), the names of the watched programs it is (the same file under another name,
    or a copy with the same content) and, for a script, those of its interpreter."""
    argv: tuple[str, ...]
    """Its arguments, `argv[0]` first."""
    parent: Callable[[], tuple[str, ...]] = field(default=tuple, compare=False)
    """The arguments of the process that runs it (git, for a transport git starts), read
    from /proc when asked for."""
    truncated: bool = False
    """The arguments were too many to read whole (only a prefix is in `argv`)."""


class ExecPolicy(Protocol):
    """The rules a command's programs meet when they are executed."""

    def programs(self) -> frozenset[str]:
        """Names of the programs the rules name (`rm`, `curl`, `git`): their files are
        recognised under any other name, and copies of them by their content."""
        ...

    def refusal(self, call: ExecCall) -> str | None:
        """Why `call` may not run (names the rule), or None when it may."""
        ...
