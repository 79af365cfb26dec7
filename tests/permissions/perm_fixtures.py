"""Stand-in tools with Claude Code's names, so checker tests do not depend on the built-ins;
PreToolUse hooks that answer a decision, and a Bash call run through the real executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from pydantic import BaseModel

from queryloop.hooks import CommandHook, HookMatcher, HookRunner, HooksConfig
from queryloop.messages.blocks import ToolResultBlock, ToolUseBlock
from queryloop.messages.types import UserMessage
from queryloop.permissions import PermissionChecker
from queryloop.tools.base import BaseTool, Tool, ToolContext
from queryloop.tools.builtin import BashTool
from queryloop.tools.execution import run_tool_call


class Rules(TypedDict, total=False):
    """Rule strings by behaviour, as `RuleSet.from_strings` takes them."""

    allow: list[str]
    ask: list[str]
    deny: list[str]


SCRIPTS = Path(__file__).parent.parent / "hooks" / "scripts"


class BashInput(BaseModel):
    command: str


class PathInput(BaseModel):
    file_path: str
    content: str = ""


class SearchInput(BaseModel):
    pattern: str = "x"
    path: str | None = None


class FakeBash(BaseTool[BashInput]):
    name = "Bash"
    input_model: type[BaseModel] = BashInput

    def permission_subject(self, input: Any) -> str | None:
        return str(input.command)


class _FileTool(BaseTool[PathInput]):
    input_model: type[BaseModel] = PathInput

    def permission_subject(self, input: Any) -> str | None:
        return str(input.file_path)


class FakeRead(_FileTool):
    name = "Read"
    read_only = True


class FakeEdit(_FileTool):
    name = "Edit"


class FakeWrite(_FileTool):
    name = "Write"


class FakeGrep(BaseTool[SearchInput]):
    name = "Grep"
    input_model: type[BaseModel] = SearchInput
    read_only = True

    def permission_subject(self, input: Any) -> str | None:
        path: str | None = input.path
        return path


class FakeMcp(BaseTool[BaseModel]):
    name = "mcp__github__create_issue"


class FakeReadOnlyBash(FakeBash):
    """Bash whose command was judged read-only (as the built-in does for `cat`, `ls`, …)."""

    read_only = True


def decision_hook(decision: str) -> HookRunner:
    """A Python PreToolUse hook answering `decision` (Claude Code's hookSpecificOutput)."""

    def hook(event: dict[str, object]) -> dict[str, object]:
        output = {"permissionDecision": decision, "permissionDecisionReason": "hook says so"}
        return {"hookSpecificOutput": output}

    return HookRunner(HooksConfig.of(PreToolUse=[hook]), cwd=Path.cwd(), session_id="s")


def command_allow_hook(cwd: Path) -> HookRunner:
    """A real command hook (tests/hooks/scripts/allow.sh) that answers `allow` to every call."""
    matcher = HookMatcher("*", [CommandHook(str(SCRIPTS / "allow.sh"))])
    return HookRunner(HooksConfig.of(PreToolUse=[matcher]), cwd=cwd, session_id="s")


async def run_tool(
    block: ToolUseBlock,
    tool: Tool,
    ctx: ToolContext,
    checker: PermissionChecker,
    hooks: HookRunner | None = None,
) -> ToolResultBlock:
    """Run one call through the real executor (hooks, then the checker, then the tool if
    allowed) and return its one tool_result."""
    messages = [m async for m in run_tool_call(block, [tool], ctx, permission=checker, hooks=hooks)]
    results = [
        b
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert len(results) == 1
    return results[0]


async def run_bash(
    cwd: Path, command: str, checker: PermissionChecker, hooks: HookRunner | None = None
) -> ToolResultBlock:
    """Run `command` with the built-in Bash tool through the real executor: hooks, then the
    checker, then (if allowed) the command itself; the one tool_result."""
    block = ToolUseBlock(id="toolu_1", name="Bash", input={"command": command})
    return await run_tool(block, BashTool(), ToolContext(cwd=cwd), checker, hooks)
