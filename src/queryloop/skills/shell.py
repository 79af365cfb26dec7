"""Running a skill's `!` commands as Bash tool calls of the thread that invokes it.

Each command is one call of the thread's own Bash tool through the same path a model's call
takes (`tools.execution.run_tool_call`): PreToolUse hooks, the permission checker (deny and
ask rules, the mode, protected paths; a skill's `allowed-tools` grant when it is active),
the sandbox. A refused command is not run: the skill's text says why, and the refusal is
recorded like any other (`permission_denied`), so print mode's `permission_denials` lists it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from ..messages.types import Message, SystemMessage, SystemSubtype, UserMessage
from ..tools.base import PermissionChecker, Tool, ToolContext, ToolHooks
from ..tools.execution import find_tool, run_tool_call
from .expand import ShellResult

BASH = "Bash"


@dataclass
class ThreadShell:
    """Runs `!` commands with a thread's tools, checker and hooks; keeps the records of the
    commands that were refused (`denials`) for the conversation."""

    tools: Sequence[Tool]
    ctx: ToolContext
    permission: PermissionChecker | None = None
    hooks: ToolHooks | None = None
    denials: list[Message] = field(default_factory=list)

    async def __call__(self, command: str) -> ShellResult:
        bash = find_tool(self.tools, BASH)
        if bash is None:
            return ShellResult(False, "the Bash tool is not available in this session")
        block = ToolUseBlock(
            id=f"toolu_prompt_{uuid.uuid4().hex[:20]}", name=BASH, input={"command": command}
        )
        result: ToolResultBlock | None = None
        denied = False
        async for message in run_tool_call(
            block, [bash], self.ctx, permission=self.permission, hooks=self.hooks
        ):
            if isinstance(message, UserMessage) and result is None:
                result = next(b for b in message.content if isinstance(b, ToolResultBlock))
            elif isinstance(message, SystemMessage):
                denied = denied or message.subtype is SystemSubtype.PERMISSION_DENIED
                if message.subtype is SystemSubtype.PERMISSION_DENIED:
                    self.denials.append(message)
        text = _text(result)
        return ShellResult(not denied, text)


def _text(block: ToolResultBlock | None) -> str:
    if block is None:
        return ""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text for b in block.content if isinstance(b, TextBlock))
