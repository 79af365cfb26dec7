"""TodoWrite: the agent's task list for the session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..base import ALLOW, BaseTool, PermissionDecision, ToolContext, ToolProgress, ToolResult
from ._common import StrictInput

DESCRIPTION = """Creates and updates a structured task list for the current session.

Use it for multi-step tasks (three or more steps) and when the user gives several tasks:
- Send the whole list every time; it replaces the previous one.
- status is "pending", "in_progress" or "completed". Keep exactly one task in_progress while
  working, and mark tasks completed as soon as they are done (not in batches).
- content says what to do ("Run the tests"); activeForm says it while doing it ("Running the
  tests").
Skip it for a single trivial task."""


class TodoItem(StrictInput):
    content: str = Field(min_length=1, description="What to do, imperative")
    status: Literal["pending", "in_progress", "completed"]
    active_form: str | None = Field(
        default=None, alias="activeForm", description="The task in present continuous form"
    )
    id: str | None = Field(default=None, description="A stable id for the task")


class TodoWriteInput(StrictInput):
    todos: list[TodoItem] = Field(description="The updated todo list")


class TodoWriteTool(BaseTool[TodoWriteInput]):
    """The TodoWrite tool: stores the list in ctx.todos (no file system access)."""

    name = "TodoWrite"
    description = DESCRIPTION
    input_model: type[BaseModel] = TodoWriteInput
    read_only = True  # it changes only the session's task list (plan mode allows it)

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return ALLOW

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        ctx.todos = [t.model_dump(by_alias=True, exclude_none=True) for t in input.todos]
        counts = {
            s: sum(t.status == s for t in input.todos)
            for s in ("pending", "in_progress", "completed")
        }
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        yield ToolResult(
            content="Todos have been modified successfully. Keep using the todo list to track "
            f"your progress, and proceed with the current task if there is one. ({summary})",
            data={"todos": ctx.todos},
        )
