"""What the Agent tool does with a call: run a subagent in the foreground (progress, then
its answer) or start it as a background task (an id now, a notification later)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..errors import QueryloopError
from ..tasks import BackgroundTask, TaskOutcome, TaskStatus, TaskType
from ..tools.base import ToolContext, ToolError, ToolProgress, ToolResult
from .definitions import GENERAL_PURPOSE
from .host import SubagentHost
from .runner import SubagentOutcome, SubagentRun
from .sidechain import load_sidechain


async def launch(
    host: SubagentHost, input: Any, ctx: ToolContext, tool_use_id: str
) -> AsyncIterator[ToolProgress | ToolResult]:
    """Run the Agent call `input` (an `AgentInput`) from the thread of `host`."""
    run = prepare(host, input, ctx, tool_use_id)
    if input.run_in_background or run.definition.background:
        yield start_in_background(host, run)
        return
    async for item in run.run():
        yield ToolProgress(item)
    outcome = run.outcome
    assert outcome is not None
    yield ToolResult(
        content=outcome.tool_result_text(),
        is_error=outcome.is_error,
        data=_data(outcome),
        new_messages=outcome.denials,  # the parent's record of what was refused
    )


def prepare(host: SubagentHost, input: Any, ctx: ToolContext, tool_use_id: str) -> SubagentRun:
    """The `SubagentRun` for a call: a new agent, or one resumed from its transcript."""
    resumed = None
    agent_id = None
    name = input.subagent_type or GENERAL_PURPOSE
    if input.resume:
        try:
            resumed = load_sidechain(host.sidechains, input.resume)
        except QueryloopError as exc:
            raise ToolError(str(exc)) from exc
        agent_id = input.resume
        name = str(resumed.metadata.get("agent_type") or name)
    definition = host.agents.get(name)
    if definition is None:
        raise ToolError(f"Agent type {name!r} not found")
    return SubagentRun(
        host,
        definition,
        input.prompt,
        parent_ctx=ctx,
        description=input.description,
        tool_use_id=tool_use_id,
        model=input.model,
        agent_id=agent_id,
        resumed=resumed,
        link_abort=not (input.run_in_background or definition.background),
    )


def start_in_background(host: SubagentHost, run: SubagentRun) -> ToolResult:
    """Start the run as a background task; the result says how to follow it."""
    tasks = host.tasks
    if tasks is None:
        raise ToolError("Background agents are not available in this session.")

    async def job(task: BackgroundTask) -> TaskOutcome:
        with task.output_path.open("a", encoding="utf-8") as out:
            async for item in run.run():
                line = _progress_line(item)
                if line:
                    out.write(line + "\n")
                    out.flush()
                    tasks.progress(task, line)
            outcome = run.outcome
            assert outcome is not None
            out.write("\n" + outcome.tool_result_text() + "\n")
        status = TaskStatus.FAILED if outcome.is_error else TaskStatus.COMPLETED
        summary = "completed" if not outcome.is_error else f"failed: {outcome.detail}"
        return TaskOutcome(status, summary, result=outcome.text)

    task = tasks.start(
        TaskType.AGENT,
        run.description or run.definition.name,
        job,
        task_id=run.agent_id,
        owner=host.agent_id,
        tool_use_id=run.tool_use_id,
    )
    return ToolResult(
        content=(
            f"Async agent launched successfully.\nagentId: {run.agent_id} (it runs in the "
            "background; you will be notified when it finishes, or read its output with "
            f"TaskOutput task_id {task.id!r})\noutput_file: {task.output_path}"
        ),
        data={"agent_id": run.agent_id, "status": "async_launched"},
    )


def _progress_line(item: dict[str, Any]) -> str:
    if item.get("kind") == "assistant":
        calls = ", ".join(str(c.get("name")) for c in item.get("tool_uses") or [])
        text = " ".join(str(item.get("text") or "").split())
        return " · ".join(p for p in (text[:200], calls and f"tools: {calls}") if p)
    return ""


def _data(outcome: SubagentOutcome) -> dict[str, Any]:
    return {
        "agent_id": outcome.agent_id,
        "agent_type": outcome.agent_type,
        "status": "completed" if not outcome.is_error else "failed",
        "terminal": outcome.terminal.value if outcome.terminal else None,
        "total_tokens": outcome.usage.total_input_tokens + outcome.usage.output_tokens,
        "cost_usd": outcome.cost_usd,
        "tool_uses": outcome.tool_uses,
        "transcript_path": str(outcome.transcript_path) if outcome.transcript_path else None,
    }
