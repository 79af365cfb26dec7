"""Permission modes and the tool families that rules and modes treat alike."""

from __future__ import annotations

from enum import StrEnum

from ..errors import ConfigError


class PermissionMode(StrEnum):
    """How calls that no rule decides are treated (Claude Code's names).

    - `default`: read-only tools run inside the working folders; everything else asks.
    - `acceptEdits`: file edits inside the working folders run without asking too.
    - `plan`: only read-only tools may run; anything else is denied (allow rules do not widen it).
    - `bypassPermissions`: everything runs without asking, except what a deny rule forbids and
      what an explicit ask rule asks about.
    """

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"

    def stricter(self, other: PermissionMode) -> PermissionMode:
        """The one of the two that allows less (plan < default < acceptEdits < bypass): a
        subagent runs in the stricter of its parent's mode and the one it asks for."""
        return min(self, other, key=_STRICTNESS.index)


_STRICTNESS = (
    PermissionMode.PLAN,
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.BYPASS,
)
"""From the mode that allows least to the one that allows most."""


EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools an `Edit(...)` rule applies to (Claude Code: Edit rules cover every file-editing tool)."""

READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools a `Read(...)` rule applies to (best effort, as Claude Code does)."""

FILE_TOOLS = EDIT_TOOLS | READ_TOOLS
"""Tools whose subject is a path: working-folder checks and path patterns apply."""


def parse_mode(value: str) -> PermissionMode:
    """The mode named `value`; raises ConfigError listing the valid names."""
    for mode in PermissionMode:
        if mode.value == value or mode.name.lower() == value.lower():
            return mode
    valid = ", ".join(m.value for m in PermissionMode)
    raise ConfigError(f"unknown permission mode {value!r}; use one of: {valid}")
