"""A live session: the assembled parts an `Agent` drives, and the few things it asks of them
(persist a message, prepare a prompt, compact, account for tokens and cost)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compact import CompactionPipeline
from ..compact.autocompact import Summarize
from ..compact.tokens import estimate_tokens
from ..context import AttachmentContext, RequestBuilder, get_attachment_messages
from ..hooks import HookRunner
from ..loop.deps import QueryParams
from ..messages.blocks import TextBlock
from ..messages.constructors import meta_user_message, user_message
from ..messages.types import Message
from ..messages.usage import Usage
from ..providers.models import ModelInfo, cost_usd, get_model_info
from ..session import Transcript, new_session_id, session_path
from ..tools.base import Tool
from .options import AgentOptions

if TYPE_CHECKING:
    from ..tools.mcp import McpManager


class HookedSummarizer:
    """Runs PreCompact hooks before an automatic compaction's summary; a manual /compact
    (`manual` set) runs them itself, with its instructions. Hook output extends the
    summary instructions."""

    def __init__(self, inner: Summarize, hooks: HookRunner) -> None:
        self.inner = inner
        self.hooks = hooks
        self.manual = False

    async def __call__(self, messages: Sequence[Message], instruction: str) -> str:
        if not self.manual:
            outcome = await self.hooks.pre_compact("auto")
            if outcome.additional_context:
                instruction = f"{instruction}\n\n{outcome.additional_context}"
        return await self.inner(messages, instruction)


@dataclass
class PreparedPrompt:
    """The messages a prompt adds before the loop runs, or why a hook blocked it."""

    messages: list[Message]
    blocked: str | None = None


@dataclass
class Runtime:
    """A live session, owned by one `Agent`. Built by `assembly.assemble`."""

    options: AgentOptions
    session_id: str
    home: Path
    params: QueryParams
    model_info: ModelInfo
    builder: RequestBuilder
    compactor: CompactionPipeline
    summarizer: HookedSummarizer
    hooks: HookRunner
    transcript: Transcript | None
    mcp: McpManager | None = None
    deferred_tools: Sequence[Tool] = ()
    user_context_text: str = ""
    notices: list[str] = field(default_factory=list)
    exit_stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    _last_uuid: str | None = None
    _session_started: bool = False

    def notify(self, text: str) -> None:
        """Record a notice for the user and pass it to `on_notice`."""
        self.notices.append(text)
        if self.options.on_notice is not None:
            self.options.on_notice(text)

    # ---- the transcript -----------------------------------------------------------------

    def persist(self, message: Message) -> None:
        """Append one message to the transcript, flushed at once (kill -9 safe)."""
        if self.transcript is not None:
            self.transcript.append(message, parent_uuid=self._last_uuid)
        self._last_uuid = message.uuid

    def continue_after(self, last_uuid: str | None) -> None:
        """Chain the next appended message to a resumed transcript's last message."""
        self._last_uuid = last_uuid

    def record_usage(self, usage: Usage, model: str, *, purpose: str = "") -> None:
        """Write a usage record (tokens and cost) for one response (`purpose` names a side
        request such as a tool-use summary; those are not model turns)."""
        if self.transcript is not None:
            cost = self.cost_usd(usage, model)
            self.transcript.append_usage(usage, cost_usd=cost, model=model, purpose=purpose)

    def sync(self) -> None:
        """Make the transcript durable across an OS crash (end of each prompt)."""
        if self.transcript is not None:
            self.transcript.sync()

    def new_session(self) -> str:
        """Switch to a fresh session id and transcript (after /clear)."""
        self.session_id = new_session_id()
        self._last_uuid = None
        if self.transcript is not None:
            self.transcript.close()
            path = session_path(self.session_id, self.options.cwd, self.home)
            self.transcript = Transcript(path, self.session_id, fsync=False)
        return self.session_id

    def cost_usd(self, usage: Usage, model: str) -> float:
        """What a response cost at the model table's prices (0 for models the table does not
        know, such as a local model behind an OpenAI-compatible server)."""
        if not get_model_info(model).known:
            return 0.0
        return cost_usd(usage, model)

    # ---- prompts ------------------------------------------------------------------------

    async def on_session_start(self, messages: list[Message]) -> list[Message]:
        """Run SessionStart hooks once; their context becomes a meta message."""
        if self._session_started:
            return messages
        self._session_started = True
        outcome = await self.hooks.session_start("resume" if messages else "startup")
        if outcome.additional_context:
            note = meta_user_message(outcome.additional_context)
            self.persist(note)
            return [*messages, note]
        return messages

    async def prepare_prompt(self, prompt: str, messages: Sequence[Message]) -> PreparedPrompt:
        """The user's message, its attachments (@-mentions first), UserPromptSubmit hooks."""
        outcome = await self.hooks.user_prompt_submit(prompt)
        if outcome.blocked or outcome.stop_reason:
            return PreparedPrompt([], blocked=outcome.reason or outcome.stop_reason or "blocked")
        new: list[Message] = [user_message(prompt)]
        if outcome.additional_context:
            new.append(meta_user_message(outcome.additional_context))
        context = self.attachment_context(messages)
        new.extend(await get_attachment_messages(prompt, context, [*messages, *new]))
        return PreparedPrompt(new)

    async def turn_attachments(self, messages: Sequence[Message], _ctx: Any) -> list[Message]:
        """Attachments between turns (the loop's phase 7)."""
        return list(
            await get_attachment_messages(None, self.attachment_context(messages), messages)
        )

    def attachment_context(self, messages: Sequence[Message]) -> AttachmentContext:
        """What the attachment providers read this turn."""
        mcp = self.mcp
        return AttachmentContext(
            cwd=self.params.tool_context.cwd,
            tool_context=self.params.tool_context,
            tools=self.builder.tool_names,
            deferred_tools=[t.name for t in self.deferred_tools],
            mcp_instructions=mcp.instructions() if mcp is not None else {},
            used_tokens=self.compactor.token_count(messages),
            context_window=self.compactor.config.context_window,
            warning_threshold=self.compactor.thresholds.warning,
            mcp_resource_resolver=self._read_resource if mcp is not None else None,
        )

    async def _read_resource(self, server: str, uri: str) -> str:
        assert self.mcp is not None
        blocks = await self.mcp.read_resource(server, uri)
        return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))

    # ---- compaction and accounting ------------------------------------------------------

    async def compact(
        self, messages: Sequence[Message], instructions: str | None
    ) -> list[Message] | None:
        """Manual compaction (the CLI's /compact); None when there is nothing to compact."""
        if not any(m.type == "assistant" for m in messages):
            return None
        outcome = await self.hooks.pre_compact("manual", instructions or "")
        if outcome.blocked:
            return None
        extra = outcome.additional_context
        text = "\n\n".join(t for t in (instructions, extra) if t) or None
        self.summarizer.manual = True
        try:
            result = await self.compactor.compact(messages, text)
        finally:
            self.summarizer.manual = False
        return list(result.messages)

    def context_usage(self, messages: Sequence[Message]) -> dict[str, int]:
        """Token use by category for /context and the status line."""
        window = self.compactor.config.context_window
        system = _tokens_of_json(list(self.builder.build([], max_tokens=1).system))
        tools = _tokens_of_json(self.builder.build([], max_tokens=1).tools)
        memory = _tokens_of_text(self.user_context_text)
        total = self.compactor.token_count(messages) if messages else 0
        conversation = (
            max(0, total - system - tools - memory) if total else estimate_tokens(messages)
        )
        used = system + tools + memory + conversation
        return {
            "system": system,
            "tools": tools,
            "memory": memory,
            "messages": conversation,
            "free": max(0, window - used),
            "window": window,
        }

    async def aclose(self) -> None:
        """Stop MCP servers and close the transcript."""
        await self.exit_stack.aclose()
        if self.transcript is not None:
            self.transcript.close()


def _tokens_of_json(value: Any) -> int:
    return _tokens_of_text(json.dumps(value, ensure_ascii=False))


def _tokens_of_text(text: str) -> int:
    return (len(text) + 3) // 4
