"""The facts of one tool call, found once, that every step of `permissions.pipeline` reads.

`Target` is what the call acts on (its parsed input, its subject, how rules match it); `Call`
adds what the analysis finds: whether it is read-only, the fail-closed doubt, the protected
path it writes, the tool's own verdict and what the PreToolUse hooks answered. The costly
facts (the command's doubt and writes) are found when a step first reads them, once: a call a
deny rule refuses is not analysed further.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..tools.base import DenialSource, PermissionDecision, PreToolUseOutcome, Tool, ToolContext
from . import guard, paths
from .context import PermissionContext
from .modes import EDIT_TOOLS, FILE_TOOLS
from .rules import MatchContext, PermissionRule

if TYPE_CHECKING:
    from .shell.write_guard import ProtectedWrite


@dataclass(frozen=True, slots=True)
class Target:
    """What a call acts on: its parsed input, its subject (a command, or a path resolved
    against the working folder) and how rules match it. Cheap; no analysis of the command."""

    parsed: Any
    subject: str | None
    path: Path | None
    mc: MatchContext

    @classmethod
    def of(cls, tool: Tool, input: Mapping[str, Any], ctx: ToolContext, home: Path) -> Target:
        """The target of `tool` called with `input` in `ctx`."""
        parsed = _parse_input(tool, input)
        subject = _subject(tool, parsed, input, ctx)
        path = ctx.resolve(subject) if tool.name in FILE_TOOLS and subject else None
        subject = str(path) if path is not None else subject
        return cls(parsed, subject, path, MatchContext(ctx.cwd, home))

    def describe(self, name: str) -> str:
        """The call as the messages name it: `Bash with command '…'`, `Edit on /p/a.py`."""
        if name == "Bash" and self.subject:
            return f"Bash with command {self.subject!r}"
        if self.path is not None:
            return f"{name} on {self.path}"
        return name


@dataclass(frozen=True)
class Call:
    """Every fact the steps read, each found once per call (no slots: the costly facts are
    `cached_property`s, found when a step first reads them)."""

    tool: Tool
    input: Mapping[str, Any]
    ctx: ToolContext
    context: PermissionContext
    target: Target
    own: PermissionDecision
    """The tool's own `check_permissions` verdict."""
    hook: PreToolUseOutcome | None
    """What the PreToolUse hooks answered (None: no hook ran)."""

    @property
    def name(self) -> str:
        """The tool's name, as rules name it."""
        return self.tool.name

    @property
    def subject(self) -> str | None:
        """The command, or the resolved path, the rules match."""
        return self.target.subject

    @cached_property
    def read_only(self) -> bool:
        """The tool's own claim that this call changes nothing (False when it fails)."""
        return _safe_bool(lambda: self.tool.is_read_only(self.target.parsed))

    @cached_property
    def doubt(self) -> guard.Doubt | None:
        """Why a Bash deny or ask rule may apply although the parse cannot tell, or None."""
        if self.name != "Bash" or not self.subject:
            return None
        return guard.bash_doubt(self.context.rules, self.subject, self.ctx, self.target.mc)

    @cached_property
    def writes(self) -> ProtectedWrite | Unanalysable | None:
        """The protected path the call writes, why its writes could not be found, or None."""
        try:
            return protected_write(self.tool, self.target, self.ctx, self.context)
        except (ValueError, OSError) as exc:  # fail closed: a step asks about it
            return Unanalysable(f"what it writes could not be analysed ({exc})")

    def stage(self, command: str) -> Call:
        """The same call with `command` alone as its input: one stage of a compound Bash
        line, judged as if it had been called by itself (no hook answered for it)."""
        stage_input = {**self.input, "command": command}
        target = Target.of(self.tool, stage_input, self.ctx, self.context.home)
        return Call(self.tool, stage_input, self.ctx, self.context, target, self.own, None)

    @property
    def protected(self) -> ProtectedWrite | None:
        """The protected path the call writes, or None."""
        return None if isinstance(self.writes, Unanalysable) else self.writes


@dataclass(frozen=True, slots=True)
class Unanalysable:
    """The analysis of a call failed: it is asked about, never allowed unasked."""

    reason: str


async def build_call(
    tool: Tool,
    input: Mapping[str, Any],
    ctx: ToolContext,
    context: PermissionContext,
    hook: PreToolUseOutcome | None = None,
) -> Call:
    """The facts of one call; the costly ones are found when a step first needs them."""
    target = Target.of(tool, input, ctx, context.home)
    own = await _tool_check(tool, target.parsed, ctx)
    return Call(tool, input, ctx, context, target, own, hook)


def protected_write(
    tool: Tool, target: Target, ctx: ToolContext, context: PermissionContext
) -> ProtectedWrite | None:
    """The protected path this call writes (a file tool's file, a Bash write target, or a
    path an opaque program names), or None; see `permissions.protected`."""
    from .shell import write_guard

    protected = context.protected_for(ctx.working_dirs)
    if tool.name in EDIT_TOOLS and target.path is not None:
        return write_guard.file_tool_write(protected, target.path)
    if tool.name == "Bash" and target.subject:
        return write_guard.bash_write(
            protected, target.subject, cwd=ctx.cwd, home=context.home, env=tool_env(ctx)
        )
    return None


def blocked(
    tool: Tool, target: Target, ctx: ToolContext, context: PermissionContext
) -> PermissionDecision | None:
    """The denial of a write outside the working folders under
    `blockWritesOutsideWorkingDirectories`, or None."""
    if not context.block_writes_outside:
        return None
    outside: str | None = None
    if tool.name in EDIT_TOOLS and target.path is not None:
        if not paths.is_within(target.path, ctx.working_dirs):
            outside = str(target.path)
    elif tool.name == "Bash" and target.subject:
        from .shell import write_guard

        outside = write_guard.bash_outside(
            target.subject, ctx.working_dirs, cwd=ctx.cwd, home=context.home, env=tool_env(ctx)
        )
    if outside is None:
        return None
    folders = ", ".join(str(d) for d in ctx.working_dirs)
    return PermissionDecision(
        "deny",
        f"{target.describe(tool.name)} was blocked: it writes {outside}, outside the working "
        f"folders ({folders}), and permissions.blockWritesOutsideWorkingDirectories is on. "
        "Write inside the working folders, or ask the user to add the folder "
        "(permissions.additionalDirectories).",
        source=DenialSource.RULE,
    )


def denied_by_rule(
    context: PermissionContext, name: str, target: Target
) -> PermissionDecision | None:
    """The denial by the first deny rule that matches the call, or None."""
    rule = context.rules.find("deny", name, target.subject, target.mc)
    return None if rule is None else _deny_by_rule(name, target, rule)


def _deny_by_rule(name: str, target: Target, rule: PermissionRule) -> PermissionDecision:
    return PermissionDecision(
        "deny",
        f"Permission to use {target.describe(name)} was denied by the rule {rule} "
        f"(from {rule.source}).",
        rule=str(rule),
        source=DenialSource.RULE,
    )


def protected_reason(write: ProtectedWrite) -> str:
    """Why a protected write asks."""
    return (
        f"it writes {write.path}, a protected path ({write.entry.why}) that only an allow "
        "rule naming it or bypassPermissions lets through"
    )


def tool_env(ctx: ToolContext) -> dict[str, str]:
    """The environment the Bash tool runs a command with (`$TMPDIR` in a write target)."""
    return {**os.environ, **ctx.env}


def _parse_input(tool: Tool, input: Mapping[str, Any]) -> Any:
    """The tool's own input model when it validates (what its methods expect), else the dict."""
    model = getattr(tool, "input_model", BaseModel)
    if model is BaseModel:
        return dict(input)
    try:
        return model.model_validate(dict(input))
    except Exception:
        return dict(input)


def _subject(tool: Tool, parsed: Any, input: Mapping[str, Any], ctx: ToolContext) -> str | None:
    try:
        subject = tool.permission_subject(parsed)
    except Exception:
        subject = None
    if subject is not None:
        return str(subject)
    for key in ("command", "file_path", "notebook_path", "path", "url"):
        value = input.get(key)
        if isinstance(value, str) and value:
            return value
    return str(ctx.cwd) if tool.name in FILE_TOOLS else None


async def _tool_check(tool: Tool, parsed: Any, ctx: ToolContext) -> PermissionDecision:
    try:
        return await tool.check_permissions(parsed, ctx)
    except Exception as exc:
        return PermissionDecision("ask", f"{tool.name}'s permission check failed ({exc})")


def _safe_bool(fn: Callable[[], bool]) -> bool:
    try:
        return bool(fn())
    except Exception:
        return False
