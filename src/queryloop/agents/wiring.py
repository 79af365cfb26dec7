"""Wiring subagents and background tasks into a session (called once by `assemble`).

It loads the agent definitions (project files only in a trusted folder), creates the
session's `TaskManager`, puts a `SubagentHost` and the manager in the tool context, makes the
loop yield task events, meters subagent requests into the session, and stops the tasks that are
still running when the session closes (saying which).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..context.system_prompt import build_dynamic_suffix
from ..messages.blocks import ToolResultBlock
from ..messages.constructors import meta_user_message, text_of, tool_uses_of
from ..messages.types import AssistantMessage, Message, UserMessage
from ..session import INTERRUPTED_TOOL_RESULT, RequestKind
from ..tasks import TASKS_KEY, TaskManager
from .definitions import AgentCatalog, AgentDefinition
from .host import DEFAULT_MAX_DEPTH, HOST_KEY, SubagentHost
from .sidechain import SUBAGENTS_DIR, find_sidechains

if TYPE_CHECKING:
    from ..agent.runtime import Runtime
    from ..permissions.checker import PermissionRequest, PermissionResult

SUBAGENT_PURPOSE = "subagent"


def install_subagents(
    runtime: Runtime,
    *,
    trusted: bool,
    agents: Sequence[AgentDefinition] = (),
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> None:
    """Give the session subagents and background tasks (see the module docstring)."""
    params = runtime.params
    ctx = params.tool_context
    options = runtime.options
    tasks = TaskManager(ctx.session_dir / "tasks" if ctx.session_dir else None)
    catalog = AgentCatalog(
        options.cwd, user_home=runtime.home, trusted=trusted, extra=agents, on_notice=runtime.notify
    )
    ctx.extras[TASKS_KEY] = tasks
    # Every subagent request is metered into the session once, as a side request (it adds to
    # the cost and the billed requests, not to the parent's turns).
    unmetered = getattr(params.provider, "inner", params.provider)
    provider = runtime.session.metered(unmetered, RequestKind.SIDE, purpose=SUBAGENT_PURPOSE)
    ctx.extras[HOST_KEY] = SubagentHost(
        provider=provider,
        model=params.model,
        catalog=catalog,
        tools=tuple(params.tools),
        permission=params.permission,
        hooks=runtime.hooks,
        dynamic_suffix=build_dynamic_suffix(cwd=options.cwd, model=params.model),
        user_context=runtime.builder.user_context,
        session_id=runtime.session_id,
        sidechain_dir=_sidechain_dir(ctx.session_dir),
        tasks=tasks,
        max_depth=max_depth,
        max_output_tokens=params.max_output_tokens,
        max_output_tokens_ceiling=params.max_output_tokens_ceiling,
        thinking=options.thinking,
        schemas=runtime.builder.schemas,
        deferred_names=frozenset(t.name for t in runtime.deferred_tools),
    )
    serialize_asks(params.permission)
    runtime.tasks = tasks
    runtime.agents = catalog
    runtime.params = dataclasses.replace(params, task_events=tasks.drain_events)
    runtime.exit_stack.push_async_callback(stop_tasks_at_exit, runtime, tasks)


def serialize_asks(permission: object) -> None:
    """One question at a time: parallel subagents (and the parent's parallel calls) share the
    session's ask handler (the REPL prompt), which must not be asked twice at once."""
    from ..permissions import PermissionChecker

    if not isinstance(permission, PermissionChecker) or permission.ask_handler is None:
        return
    inner = permission.ask_handler
    lock = asyncio.Lock()

    async def ask(request: PermissionRequest) -> PermissionResult | bool:
        async with lock:
            return await inner(request)

    permission.ask_handler = ask


def _sidechain_dir(session_dir: Path | None) -> Path | None:
    return session_dir / SUBAGENTS_DIR if session_dir is not None else None


async def stop_tasks_at_exit(runtime: Runtime, tasks: TaskManager) -> None:
    """The session ends: stop its background tasks and say which ones were stopped."""
    stopped = await tasks.aclose()
    if stopped:
        names = ", ".join(f"{t.id} ({t.description})" for t in stopped)
        runtime.notify(f"stopped {len(stopped)} background task(s) as the session ended: {names}")


RESUME_NOTE_MARK = "interrupted subagent"


def interrupted_subagent_notes(runtime: Runtime, messages: Sequence[Message]) -> list[Message]:
    """After a crash (kill -9 during a subagent), the resumed session's Agent calls were
    answered with an interruption by the loader's repair; tell the model which subagents
    they were and how to continue them (their transcripts are kept). Once per call."""
    folder = _sidechain_dir(runtime.params.tool_context.session_dir)
    interrupted = _interrupted_agent_calls(messages)
    history = " ".join(text_of(m) for m in messages if isinstance(m, UserMessage) and m.is_meta)
    notes: list[Message] = []
    for tool_use_id in interrupted:
        if f"({RESUME_NOTE_MARK} of call {tool_use_id})" in history:
            continue
        for side in find_sidechains(folder, tool_use_id):
            agent_id = str(side.metadata.get("agent_id") or side.session_id)
            kind = side.metadata.get("agent_type", "general-purpose")
            what = side.metadata.get("description", "")
            notes.append(
                meta_user_message(
                    f"The session stopped while a subagent was running ({RESUME_NOTE_MARK} of "
                    f"call {tool_use_id}): agentId {agent_id} ({kind}, {what!r}) did not "
                    f"finish; {len(side.messages)} of its messages are kept. To finish its "
                    f'work, call Agent with resume: "{agent_id}" and a prompt to continue; '
                    "or start it again."
                )
            )
    return notes


def _interrupted_agent_calls(messages: Sequence[Message]) -> list[str]:
    agent_calls = {
        b.id
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in tool_uses_of(m)
        if b.name in ("Agent", "Task")
    }
    found: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage) and not isinstance(m.content, str):
            for b in m.content:
                if (
                    isinstance(b, ToolResultBlock)
                    and b.tool_use_id in agent_calls
                    and b.content == INTERRUPTED_TOOL_RESULT
                ):
                    found.append(b.tool_use_id)
    return found
