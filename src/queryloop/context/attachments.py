"""Channel three: attachments, the per-turn context, collected in three phases.

    1. main thread only, from the user's input, first and on their own: @-mentioned files
       and folders, MCP resources. Their paths trigger phase two's nested-memory lookup.
    2. thread-safe providers, concurrently (sub-agents get these too): queued commands,
       finished background tasks (task notifications), date change, changed files, nested
       memory, todo reminder, the three delta attachments.
    3. main-thread-only providers, concurrently with phase two: context-usage warning,
       diagnostics.

Every provider runs inside `maybe()`: an exception or a timeout is logged and the provider
contributes nothing, so one broken provider never breaks a turn. Attachments become
`AttachmentMessage`s in the internal array; `normalize_messages_for_api` renders them (see
`queryloop.context.renderers`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..messages.types import Attachment, AttachmentMessage, Message
from ..tools.base import ToolContext
from . import deltas, facts
from .facts import SessionFacts
from .kinds import AttachmentType
from .memory_imports import ImportPolicy
from .providers import files, main_thread, mentions, reminders
from .user_context import PathRule

logger = logging.getLogger(__name__)

DEFAULT_PROVIDER_TIMEOUT = 2.0
DEFAULT_TODO_REMINDER_TURNS = 10

McpResourceResolver = Callable[[str, str], Awaitable[str]]
"""(server, uri) -> the resource's text. Raise to report a failure (it is logged)."""

DiagnosticsSource = Callable[[], Awaitable[Sequence[str]]]
"""New diagnostics (linter or type-checker messages) since the last call, one per line."""


@dataclass(frozen=True, kw_only=True)
class AttachmentContext:
    """What the attachment providers read. Build a fresh one per turn; it is not mutated."""

    cwd: Path
    tool_context: ToolContext | None = None
    """Read-file records (changed-file detection) and todos come from here."""
    tools: Sequence[str] = ()
    """Names of the tools in the request (the todo reminder needs TodoWrite)."""
    deferred_tools: Sequence[str] = ()
    """Names of tools that are loaded through ToolSearch instead of sent up front."""
    mcp_instructions: Mapping[str, str] = field(default_factory=dict)
    """Server name -> instructions of the connected MCP servers that provide some."""
    agent_types: Mapping[str, str] = field(default_factory=dict)
    """Sub-agent type -> one-line description, for the agent-listing delta."""
    skills: Mapping[str, str] = field(default_factory=dict)
    """Skill name -> description, for the skill-listing delta."""
    queued_commands: Sequence[str] = ()
    """Prompts the user typed while the model was working, to show it now."""
    task_notifications: Sequence[Mapping[str, Any]] = ()
    """Background tasks of this thread that finished since the model was last told
    (`queryloop.tasks.BackgroundTask.notification()` dicts)."""
    used_tokens: int | None = None
    """The context size of the next request (last usage + estimate), if known."""
    context_window: int | None = None
    warning_threshold: int | None = None
    """Warn the model about context use once `used_tokens` reaches this many tokens."""
    is_main_thread: bool = True
    """False for sub-agents: phase three (main-thread-only providers) is skipped."""
    nested_memory: bool = True
    """Announce memory files in the subfolders the agent touches (False when the session
    reads no project files, `config.discovery.SettingSources.project`)."""
    memory_imports: ImportPolicy | None = None
    """Which `@path` imports of nested memory files are followed (None: none)."""
    path_rules: Sequence[PathRule] = ()
    """Rule files with `paths:` (Claude Code's `.claude/rules/`), attached as nested memory
    once the agent works with a file they match."""
    mcp_resource_resolver: McpResourceResolver | None = None
    diagnostics: DiagnosticsSource | None = None
    todo_reminder_turns: int = DEFAULT_TODO_REMINDER_TURNS
    initial_date: date | None = None
    """The date the user context announced (default: `session_facts.date`); a date_change
    attachment follows when it moves."""
    session_facts: SessionFacts | None = None
    """What the session's prefix was built from (`context.facts`): the values the model was
    told at the start."""
    current_facts: SessionFacts | None = None
    """The same facts as this process found them; a difference is told by a fact delta
    (memory_change, git_status_change, environment_change)."""
    provider_timeout: float = DEFAULT_PROVIDER_TIMEOUT
    now: Callable[[], datetime] = datetime.now

    def resolve(self, path: str) -> Path:
        """An absolute path; relative ones are taken from `cwd`, `~` is expanded."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.cwd / p


ProviderFn = Callable[[], Awaitable[Sequence[Attachment]]]


async def maybe(name: str, fn: ProviderFn, timeout: float) -> list[Attachment]:
    """Run one provider: its attachments, or none when it raises or exceeds `timeout` seconds.

    Failures are logged (logger `queryloop.context.attachments`) with the provider's name.
    Cancellation of the caller still propagates.
    """
    try:
        return list(await asyncio.wait_for(fn(), timeout))
    except TimeoutError:
        logger.warning("attachment provider %r timed out after %.3gs; skipped", name, timeout)
    except Exception:
        logger.warning("attachment provider %r failed; skipped", name, exc_info=True)
    return []


async def get_attachments(
    input: str | None, ctx: AttachmentContext, messages: Sequence[Message]
) -> list[Attachment]:
    """Every attachment for this turn, in phase order (user input, thread-safe, main-thread)."""
    t = ctx.provider_timeout
    user_input: list[Awaitable[list[Attachment]]] = []
    if input and ctx.is_main_thread:  # phase one is the main thread's (seeds 16.3)
        user_input = [
            maybe("at_mentioned_files", lambda: mentions.at_mentioned_files(input, ctx), t),
            maybe("mcp_resources", lambda: mentions.mcp_resources(input, ctx), t),
        ]
    first = _flatten(await asyncio.gather(*user_input))
    triggers = [str(a.data["path"]) for a in first if a.type in _PATH_TYPES]

    thread_safe = [
        maybe("queued_commands", lambda: reminders.queued_commands(ctx), t),
        maybe("task_notifications", lambda: reminders.task_notifications(ctx), t),
        *[maybe(f.kind.value, _fact_delta(f, ctx, messages), t) for f in facts.FACTS],
        maybe("edited_files", lambda: files.edited_files(ctx, messages), t),
        maybe("nested_memory", lambda: files.nested_memory(ctx, messages, triggers), t),
        maybe("todo_reminder", lambda: reminders.todo_reminder(ctx, messages), t),
        maybe("deferred_tools_delta", lambda: deltas.deferred_tools_delta(ctx, messages), t),
        maybe("mcp_instructions_delta", lambda: deltas.mcp_instructions_delta(ctx, messages), t),
        maybe("agent_listing_delta", lambda: deltas.agent_listing_delta(ctx, messages), t),
        maybe("skill_listing_delta", lambda: deltas.skill_listing_delta(ctx, messages), t),
    ]
    main_only: list[Awaitable[list[Attachment]]] = []
    if ctx.is_main_thread:
        main_only = [
            maybe("context_usage", lambda: main_thread.context_usage(ctx), t),
            maybe("diagnostics", lambda: main_thread.diagnostics(ctx), t),
        ]
    rest = await asyncio.gather(*thread_safe, *main_only)
    return [*first, *_flatten(rest)]


async def get_attachment_messages(
    input: str | None, ctx: AttachmentContext, messages: Sequence[Message]
) -> list[AttachmentMessage]:
    """`get_attachments` wrapped as meta attachment messages, ready to append to the array."""
    return [
        AttachmentMessage(attachment=a, is_meta=True)
        for a in await get_attachments(input, ctx, messages)
    ]


_PATH_TYPES = frozenset({AttachmentType.FILE, AttachmentType.DIRECTORY})


def _fact_delta(
    fact: facts.Fact, ctx: AttachmentContext, messages: Sequence[Message]
) -> ProviderFn:
    return lambda: fact.delta(ctx, messages)


def _flatten(groups: Iterable[list[Attachment]]) -> list[Attachment]:
    return [a for group in groups for a in group]
