"""TaskOutput and TaskStop: read a background task's output, stop a background task.

Claude Code's current names and fields (TaskOutput `{task_id, block, timeout}`, TaskStop
`{task_id}`); the older names BashOutput `{bash_id, filter}` and KillShell `{shell_id}` are
accepted as aliases, so models and hooks that know them keep working.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...tasks.manager import BackgroundTask, TaskManager
from ..base import (
    ALLOW,
    CURRENT_TOOL_USE_ID,
    BaseTool,
    PermissionDecision,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResult,
)
from ._common import StrictInput

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000

OUTPUT_DESCRIPTION = """- Retrieves output from a running or completed background task (a background
  shell started with Bash run_in_background, or a background agent)
- Takes a task_id parameter identifying the task
- Returns the task output along with status information
- Use block=true (default) to wait for the task to finish, at most timeout milliseconds
- Use block=false for a non-blocking check of the current status
- Task IDs are in the result of the call that started the task, and in /tasks"""

STOP_DESCRIPTION = """- Stops a running background task by its ID (its process group, or its agent)
- Takes a task_id parameter identifying the task
- Returns a success or failure status
- Use this tool when you need to terminate a long-running task"""


def task_manager(ctx: ToolContext) -> TaskManager:
    """The session's TaskManager, or a ToolError the model can read."""
    manager = ctx.tasks
    if manager is None:
        raise ToolError("Background tasks are not available in this session.")
    return manager


def find_task(ctx: ToolContext, task_id: str | None) -> BackgroundTask:
    """The task `task_id` names, or a ToolError listing the known ids."""
    manager = task_manager(ctx)
    if not task_id:
        raise ToolError("task_id is required")
    try:
        return manager.require(task_id)
    except KeyError as exc:
        raise ToolError(str(exc.args[0])) from exc


def sandbox_writable(ctx: ToolContext) -> list[Path]:
    """The folders a sandboxed command of this thread may write besides the policy's own
    (`allowWrite`, `additionalDirectories`): the folder the session started in. Not every
    working folder: the session folder and the skills' folders are for reading."""
    return [ctx.original_cwd or ctx.cwd]


async def start_in_background(
    command: str, description: str | None, ctx: ToolContext, env: Mapping[str, str], note: str
) -> ToolResult:
    """Bash with run_in_background: start the command as a task (in the session's sandbox,
    when it has one) and say how to follow it."""
    manager = task_manager(ctx)
    task = await manager.start_shell(
        command,
        cwd=ctx.cwd,
        env=env,
        description=description or command,
        owner=ctx.agent_id,
        tool_use_id=CURRENT_TOOL_USE_ID.get(),
        sandbox=ctx.sandbox,
        working_dirs=sandbox_writable(ctx),
        guard=ctx.exec_guard,
    )
    text = (
        f"Command running in background with ID: {task.id}. Output is being written to: "
        f"{task.output_path}. Read it with TaskOutput; you will be notified when it finishes."
    )
    return ToolResult(
        content=f"{text}\n{note}" if note else text,
        data={"backgroundTaskId": task.id, "output_file": str(task.output_path)},
    )


class TaskOutputInput(StrictInput):
    task_id: str | None = Field(default=None, description="The task ID to get output from")
    block: bool = Field(default=True, description="Whether to wait for completion")
    timeout: int = Field(
        default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS, description="Max wait time in ms"
    )
    bash_id: str | None = Field(default=None, description="Deprecated: use task_id")
    filter: str | None = Field(
        default=None, description="Optional regular expression: only output lines matching it"
    )


class TaskOutputTool(BaseTool[TaskOutputInput]):
    """TaskOutput (alias BashOutput)."""

    name = "TaskOutput"
    aliases = ("BashOutput",)
    description = OUTPUT_DESCRIPTION
    input_model: type[BaseModel] = TaskOutputInput
    read_only = True
    concurrency_safe = True

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return ALLOW

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        task = find_task(ctx, input.task_id or input.bash_id)
        waited = False
        if input.block and task.running:
            await task_manager(ctx).wait(task.id, input.timeout / 1000)
            waited = True
        retrieval = "success" if not task.running else ("timeout" if waited else "not_ready")
        if not task.running:
            task.notified = True  # the model has the result: no notification later
        output = task.output()
        if input.filter:
            try:
                pattern = re.compile(input.filter)
            except re.error as exc:
                raise ToolError(f"filter is not a valid regular expression: {exc}") from exc
            output = "\n".join(line for line in output.splitlines() if pattern.search(line))
        yield ToolResult(content=_render(task, retrieval, output), data=_data(task, retrieval))


def _render(task: BackgroundTask, retrieval: str, output: str) -> str:
    parts = [
        f"<retrieval_status>{retrieval}</retrieval_status>",
        f"<task_id>{task.id}</task_id>",
        f"<task_type>{task.type.value}</task_type>",
        f"<status>{task.status.value}</status>",
    ]
    if task.exit_code is not None:
        parts.append(f"<exit_code>{task.exit_code}</exit_code>")
    body = task.result if task.result and not output.strip() else output
    parts.append(f"<output>\n{body.rstrip()}\n</output>" if body.strip() else "<output></output>")
    return "\n".join(parts)


def _data(task: BackgroundTask, retrieval: str) -> dict[str, Any]:
    return {
        "retrieval_status": retrieval,
        "task_id": task.id,
        "task_type": task.type.value,
        "status": task.status.value,
        "exit_code": task.exit_code,
    }


class TaskStopInput(StrictInput):
    task_id: str | None = Field(default=None, description="The ID of the background task to stop")
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id instead")


class TaskStopTool(BaseTool[TaskStopInput]):
    """TaskStop (alias KillShell)."""

    name = "TaskStop"
    aliases = ("KillShell",)
    description = STOP_DESCRIPTION
    input_model: type[BaseModel] = TaskStopInput

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return ALLOW  # it only ever stops what this session started

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        task = find_task(ctx, input.task_id or input.shell_id)
        if not task.running:
            raise ToolError(f"Task {task.id} is not running (status: {task.status.value})")
        await task_manager(ctx).stop(task.id)
        yield ToolResult(
            content=f"Successfully stopped task: {task.id} ({task.description})",
            data={"message": "stopped", "task_id": task.id, "task_type": task.type.value},
        )
