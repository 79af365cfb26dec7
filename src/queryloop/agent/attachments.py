"""The main thread's attachments: what the attachment providers read at a prompt and between
turns, gathered from the session's parts (`SessionAttachments`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..agents.thread import ToolSet
from ..compact import CompactionPipeline
from ..context import AttachmentContext, RequestBuilder, get_attachment_messages
from ..context.facts import SessionFacts
from ..context.kinds import AttachmentType
from ..context.memory_imports import ImportPolicy
from ..context.queue import PromptQueue
from ..context.user_context import PathRule
from ..hooks import HookEvent, HookRunner
from ..messages.blocks import TextBlock
from ..messages.types import AttachmentMessage, Message
from ..skills.loader import SkillSet
from ..tools.base import ToolContext

if TYPE_CHECKING:
    from ..agents.wiring import SubagentParts
    from ..tools.mcp import McpManager


@dataclass(frozen=True)
class SessionAttachments:
    """Reads the session's parts for the attachment providers; `turn` is the loop's
    `attachments` source (phase 7), and the prompts queued meanwhile reach the model there."""

    builder: RequestBuilder
    compactor: CompactionPipeline
    tool_context: ToolContext
    tools: ToolSet
    skills: SkillSet
    subagents: SubagentParts
    prompt_queue: PromptQueue
    mcp: McpManager | None = None
    hooks: HookRunner | None = None
    """InstructionsLoaded hooks hear of the nested memory files attached (`nested_traversal`;
    `include` for a file one of them imported)."""
    facts: SessionFacts | None = None
    """What the session's prefix was built from (`context.facts`)."""
    current_facts: SessionFacts | None = None
    """The same facts as this process found them: a difference is told by a fact delta."""
    nested_memory: bool = True
    """Whether subfolders' memory files are announced (the project's files are read)."""
    memory_imports: ImportPolicy | None = None
    """Which `@path` imports of nested memory files are followed (the session's policy)."""
    path_rules: tuple[PathRule, ...] = ()
    """Rule files with `paths:`, attached when the agent works with a file they match."""

    async def prompt(
        self, prompt: str, earlier: Sequence[Message], new: Sequence[Message]
    ) -> list[AttachmentMessage]:
        """The attachments of a new prompt (@-mentions first): `new` (the prompt's own
        messages) follows the `earlier` conversation."""
        context = self.context(earlier)
        return await get_attachment_messages(prompt, context, [*earlier, *new])

    async def turn(self, messages: Sequence[Message], _ctx: ToolContext) -> list[AttachmentMessage]:
        """Attachments between turns, with the prompts the user queued meanwhile."""
        context = self.context(messages, queued=self.prompt_queue.drain())
        found = await get_attachment_messages(None, context, messages)
        await self._instructions_loaded(found)
        return found

    async def _instructions_loaded(self, found: Sequence[AttachmentMessage]) -> None:
        if self.hooks is None or not self.hooks.has_hooks(HookEvent.INSTRUCTIONS_LOADED):
            return
        for message in found:
            if message.attachment.type != AttachmentType.NESTED_MEMORY:
                continue
            data = message.attachment.data
            path, parent = str(data.get("path", "")), data.get("parent")
            kind = str(data.get("level", "project")).capitalize()
            if parent is not None:
                extra = {"parent_file_path": str(parent)}
                await self.hooks.instructions_loaded(path, kind, "include", **extra)
            elif "globs" in data:
                globs, trigger = list(data["globs"]), str(data["trigger"])
                await self.hooks.instructions_loaded(
                    path, kind, "path_glob_match", globs=globs, trigger_file_path=trigger
                )
            else:
                await self.hooks.instructions_loaded(path, kind, "nested_traversal")

    def context(
        self, messages: Sequence[Message], *, queued: Sequence[str] = ()
    ) -> AttachmentContext:
        """What the attachment providers read this turn."""
        mcp, tools = self.mcp, self.builder.tool_names
        agents = self.subagents.catalog
        return AttachmentContext(
            agent_types=agents.current.listing if "Agent" in tools else {},
            task_notifications=self.subagents.tasks.drain_notifications(None),
            cwd=self.tool_context.cwd,
            tool_context=self.tool_context,
            tools=tools,
            deferred_tools=[t.name for t in self.tools.deferred],
            mcp_instructions=mcp.instructions() if mcp is not None else {},
            used_tokens=self.compactor.token_count(messages),
            context_window=self.compactor.config.context_window,
            warning_threshold=self.compactor.thresholds.warning,
            mcp_resource_resolver=self._read_resource if mcp is not None else None,
            queued_commands=queued,
            skills=self.skills.listing(),
            session_facts=self.facts,
            current_facts=self.current_facts,
            nested_memory=self.nested_memory,
            memory_imports=self.memory_imports,
            path_rules=self.path_rules,
        )

    async def _read_resource(self, server: str, uri: str) -> str:
        assert self.mcp is not None
        blocks = await self.mcp.read_resource(server, uri)
        return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
