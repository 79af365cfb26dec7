"""Agent (formerly Task): delegate a task to a subagent with its own context.

Claude Code's current name and fields (`Agent {description, prompt, subagent_type, model,
run_in_background, resume}`; renamed from `Task` in Claude Code 2.1.63, which stays an alias).
The description is static: the available agent types reach the model as an
`agent_listing_delta` attachment, so adding an agent file never changes the tools array and
never breaks the prompt cache (seeds 16.4).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, Field

from ..tools.base import (
    CURRENT_TOOL_USE_ID,
    BaseTool,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResult,
)
from ..tools.builtin._common import StrictInput
from .host import AGENT_TOOL_NAME, SubagentHost
from .launch import launch

DESCRIPTION = """Launch a new agent to handle a complex, multi-step task autonomously.

The agent types you can use are listed in a system reminder ("Available agent types");
subagent_type picks one (default: general-purpose).

- The agent starts with a fresh context: put everything it needs in prompt (what to do,
  where to look, what to report back), and say whether it should write code or only research.
- It returns one final message, which is all you see; relay what matters to the user.
- To run several agents at once, call Agent several times in one response: they run in
  parallel. Use run_in_background for work you do not need to wait for; you are notified
  when it finishes (and can read it with TaskOutput).
- resume continues an earlier agent (its agentId) with a new prompt, keeping its context.
- description: 3-5 words saying what the agent will do."""


class AgentInput(StrictInput):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the agent to perform")
    subagent_type: str | None = Field(
        default=None, description="The type of specialized agent to use for this task"
    )
    model: str | None = Field(
        default=None,
        description="Optional model for this agent (sonnet, opus, haiku or a model id); by "
        "default the agent definition's, else inherited from the parent",
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Set to true to run this agent in the background; you are notified when "
        "it completes",
    )
    resume: str | None = Field(
        default=None, description="Optional agent ID to resume, continuing its transcript"
    )


def subagent_host(ctx: ToolContext) -> SubagentHost:
    """The thread's SubagentHost, or a ToolError when subagents are not available."""
    host = ctx.subagents
    if not isinstance(host, SubagentHost):
        raise ToolError("Subagents are not available in this session.")
    return host


class AgentTool(BaseTool[AgentInput]):
    """The Agent tool (alias Task). Concurrency-safe: several calls run in parallel.

    Read-only for scheduling and plan mode: it changes nothing itself; every tool call the
    subagent makes goes through the same permission checks and hooks as the parent's.
    """

    name = AGENT_TOOL_NAME
    aliases = ("Task",)
    description = DESCRIPTION
    input_model: type[BaseModel] = AgentInput
    read_only = True
    concurrency_safe = True
    max_result_chars = 50_000

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        if not input.prompt.strip():
            return "InputValidationError: Agent failed: `prompt` is empty"
        host = ctx.subagents
        if isinstance(host, SubagentHost) and input.resume is None:
            name = input.subagent_type or "general-purpose"
            if host.agents.get(name) is None:
                known = ", ".join(d.name for d in host.agents.definitions) or "none"
                return f"Agent type {name!r} not found. Available agents: {known}"
        return None

    def permission_subject(self, input: Any) -> str | None:
        value = getattr(input, "subagent_type", None)
        return str(value or "general-purpose")

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        async for item in launch(subagent_host(ctx), input, ctx, CURRENT_TOOL_USE_ID.get()):
            yield item
