"""Subagents and background tasks of a session: `build_subagents` (called once by `assemble`)
returns them as `SubagentParts`.

It loads the agent definitions (project files only in a trusted folder), makes the
`SubagentHost` subagents inherit from and meters their requests into the session; `assemble`
builds the main thread's tool context with the host and the session's `TaskManager`
(`build_tasks`), makes the loop yield the task events, and `SubagentParts.aclose` stops the
tasks still running when the session closes (saying which).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.discovery import SettingSources
from ..context.system_prompt import build_dynamic_suffix
from ..messages.blocks import ToolResultBlock
from ..messages.constructors import meta_user_message, text_of, tool_uses_of
from ..messages.interruption import Interruption
from ..messages.types import AssistantMessage, Message, UserMessage
from ..session import RequestKind
from ..session.stores import TranscriptRef
from ..tasks import TaskManager
from ..telemetry import Telemetry
from .definitions import AgentCatalog, AgentDefinition, ToolNames
from .host import DEFAULT_MAX_DEPTH, SubagentHost
from .sidechain import find_sidechains

if TYPE_CHECKING:
    from ..hooks import HookRunner
    from ..permissions.checker import AskHandler, PermissionRequest, PermissionResult
    from ..providers.base import ModelProvider
    from ..session import Session
    from ..tools.base import PermissionChecker
    from .thread import ThreadOptions

SUBAGENT_PURPOSE = "subagent"


@dataclass(frozen=True)
class SubagentParts:
    """The session's subagent machinery, built once by `build_subagents`."""

    catalog: AgentCatalog
    """The subagent types (re-read at each prompt)."""
    tasks: TaskManager
    """Background tasks: shells and agents."""
    host: SubagentHost
    """What the Agent tool of the main thread starts subagents from."""
    notify: Callable[[str], None]

    async def aclose(self) -> None:
        """The session ends: stop its background tasks and say which ones were stopped."""
        stopped = await self.tasks.aclose()
        if stopped:
            names = ", ".join(f"{t.id} ({t.description})" for t in stopped)
            self.notify(f"stopped {len(stopped)} background task(s) as the session ended: {names}")


def build_subagents(
    main: ThreadOptions,
    session: Session,
    *,
    provider: ModelProvider,
    permission: PermissionChecker | None,
    hooks: HookRunner,
    tasks: TaskManager,
    transcript: TranscriptRef | None,
    cwd: Path,
    home: Path,
    trusted: bool,
    agents: Sequence[AgentDefinition] = (),
    max_depth: int = DEFAULT_MAX_DEPTH,
    notify: Callable[[str], None],
    telemetry: Telemetry | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> SubagentParts:
    """The session's subagents and background tasks (see the module docstring), inheriting
    from the `main` thread's options, checker and hooks; `provider` is the session's,
    unmetered; the main thread's tool context is then built with `host` and `tasks`."""
    catalog = AgentCatalog(
        cwd,
        user_home=home,
        trusted=trusted,
        extra=agents,
        on_notice=notify,
        sources=sources,
        tools=session_tool_names(main, provider),
    )
    # Every subagent request is metered into the session once, as a side request (it adds to
    # the cost and the billed requests, not to the parent's turns).
    side = session.metered(provider, RequestKind.SIDE, purpose=SUBAGENT_PURPOSE)
    host = SubagentHost(
        provider=side,
        catalog=catalog,
        main=main,
        tools=tuple(main.tools.all),  # a late MCP server's tools: the main thread's only
        permission=permission,
        hooks=hooks,
        dynamic_suffix=build_dynamic_suffix(cwd=cwd, model=main.model),
        session_id=session.session_id,
        sidechains=transcript,
        tasks=tasks,
        max_depth=max_depth,
        deferred_names=frozenset(t.name for t in main.tools.deferred),
        telemetry=telemetry or Telemetry(),
    )
    return SubagentParts(catalog=catalog, tasks=tasks, host=host, notify=notify)


WEB_SEARCH_UNAVAILABLE = (
    "WebSearch needs the Messages API's server-side web search, which an OpenAI-compatible "
    "provider does not have"
)


def session_tool_names(main: ThreadOptions, provider: ModelProvider) -> ToolNames:
    """The names (and older names) of the main thread's tools, which subagents choose from;
    WebSearch is said to be unavailable where the provider has no server-side search."""
    names = {n for t in main.tools.all for n in (t.name, *getattr(t, "aliases", ()))}
    unavailable = {} if provider.name == "anthropic" else {"WebSearch": WEB_SEARCH_UNAVAILABLE}
    return ToolNames(frozenset(names), unavailable)


def build_tasks(session_dir: Path | None) -> TaskManager:
    """The session's background tasks (their output in `<session>/tasks/`)."""
    return TaskManager(session_dir / "tasks" if session_dir else None)


def serialize_asks(ask: AskHandler | None) -> AskHandler | None:
    """One question at a time: parallel subagents (and the parent's parallel calls) share the
    session's ask handler (the REPL prompt), which must not be asked twice at once. Wraps
    the handler a session's checker is built with."""
    if ask is None:
        return None
    inner = ask
    lock = asyncio.Lock()

    async def serialized(request: PermissionRequest) -> PermissionResult | bool:
        async with lock:
            return await inner(request)

    return serialized


RESUME_NOTE_MARK = "interrupted subagent"


def interrupted_subagent_notes(
    transcript: TranscriptRef | None, messages: Sequence[Message]
) -> list[Message]:
    """After a crash (kill -9 during a subagent), the resumed session's Agent calls were
    answered with an interruption by the loader's repair; tell the model which subagents
    they were and how to continue them (their transcripts are kept). Once per call."""
    interrupted = _interrupted_agent_calls(messages)
    history = " ".join(text_of(m) for m in messages if isinstance(m, UserMessage) and m.is_meta)
    notes: list[Message] = []
    for tool_use_id in interrupted:
        if f"({RESUME_NOTE_MARK} of call {tool_use_id})" in history:
            continue
        for side in find_sidechains(transcript, tool_use_id):
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
                    and b.interrupted is Interruption.RESUMED  # the loader's crash repair
                ):
                    found.append(b.tool_use_id)
    return found
