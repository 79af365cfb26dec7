"""queryloop's loop events as `session/update`s, the prompt's content as text, the end of a
prompt as a stop reason. No I/O: `UpdateMapper.updates(event)` returns the updates one
event makes, and the session sends them.

The same mapper replays a stored conversation for `session/load` (`replay`): there are no
stream deltas then, so each message's text comes whole from the message itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from ..loop.events import LoopEvent, MessageEvent, RequestStart, StreamDelta, TerminalEvent
from ..loop.reasons import Terminal
from ..messages.blocks import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from ..messages.types import AssistantMessage, Message, UserMessage
from ..providers.base import BlockComplete, TextDelta, ThinkingDelta
from .tool_calls import plan_entries, raw, result_content, tool_info

Update: TypeAlias = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
)
PromptBlock: TypeAlias = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


@dataclass
class UpdateMapper:
    """Turns one session's loop events into updates; remembers the calls it announced."""

    cwd: Path
    echo_user: bool = False
    """Send the user's own messages too (a replay; live, the editor shows what it sent)."""
    _calls: dict[str, ToolUseBlock] = field(default_factory=dict)
    _streamed: bool = False
    """Text or thinking of the current response arrived as deltas."""

    def updates(self, event: LoopEvent) -> list[Update]:
        """The updates `event` makes (most events make none)."""
        if isinstance(event, RequestStart):
            self._streamed = False
            return []
        if isinstance(event, StreamDelta):
            return self._delta(event)
        if isinstance(event, MessageEvent):
            return self.message(event.message)
        return []

    def replay(self, messages: Iterable[Message]) -> list[Update]:
        """A stored conversation as the updates that would have shown it."""
        out: list[Update] = []
        for message in messages:
            self._streamed = False
            out.extend(self.message(message))
        return out

    def message(self, message: Message) -> list[Update]:
        """The updates a whole message makes."""
        if message.parent_tool_use_id is not None:
            return []  # a subagent's: its call shows in the parent's Agent/Task call
        if isinstance(message, AssistantMessage):
            return self._assistant(message)
        if isinstance(message, UserMessage):
            return self._user(message)
        return []

    def _delta(self, event: StreamDelta) -> list[Update]:
        inner = event.event
        if isinstance(inner, TextDelta) and inner.text:
            self._streamed = True
            return [
                AgentMessageChunk(session_update="agent_message_chunk", content=_text(inner.text))
            ]
        if isinstance(inner, ThinkingDelta) and inner.thinking:
            self._streamed = True
            return [
                AgentThoughtChunk(
                    session_update="agent_thought_chunk", content=_text(inner.thinking)
                )
            ]
        if isinstance(inner, BlockComplete) and isinstance(inner.block, ToolUseBlock):
            return self._call(inner.block)
        return []

    def _assistant(self, message: AssistantMessage) -> list[Update]:
        out: list[Update] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                out.extend(self._call(block))
            elif self._streamed:
                continue  # its text already arrived as deltas
            elif isinstance(block, TextBlock) and block.text:
                out.append(
                    AgentMessageChunk(
                        session_update="agent_message_chunk", content=_text(block.text)
                    )
                )
            elif isinstance(block, ThinkingBlock) and block.thinking:
                out.append(
                    AgentThoughtChunk(
                        session_update="agent_thought_chunk", content=_text(block.thinking)
                    )
                )
        return out

    def _call(self, block: ToolUseBlock) -> list[Update]:
        """A tool call's first appearance (later ones of the same id say nothing)."""
        if block.id in self._calls:
            return []
        self._calls[block.id] = block
        info = tool_info(block.name, block.input, self.cwd)
        start = ToolCallStart(
            session_update="tool_call",
            tool_call_id=block.id,
            title=info.title,
            kind=info.kind,
            status="pending",
            content=info.content or None,
            locations=info.locations or None,
            raw_input=raw(dict(block.input)),
        )
        return [start]

    def _user(self, message: UserMessage) -> list[Update]:
        if isinstance(message.content, str):
            return self._echo(message, message.content)
        out: list[Update] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                out.extend(self._result(block))
            elif isinstance(block, TextBlock):
                out.extend(self._echo(message, block.text))
        return out

    def _echo(self, message: UserMessage, text: str) -> list[Update]:
        if not self.echo_user or message.is_meta or message.is_compact_summary or not text:
            return []
        return [UserMessageChunk(session_update="user_message_chunk", content=_text(text))]

    def _result(self, block: ToolResultBlock) -> list[Update]:
        call = self._calls.get(block.tool_use_id)
        if call is None:
            return []
        output = result_text(block)
        failed = block.is_error or block.interrupted is not None
        done = ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=block.tool_use_id,
            status="failed" if failed else "completed",
            content=result_content(call.name, output, is_error=failed),
            raw_output=output,
        )
        out: list[Update] = [done]
        entries = plan_entries(call.input) if call.name == "TodoWrite" and not failed else None
        if entries is not None:
            out.append(AgentPlanUpdate(session_update="plan", entries=entries))
        return out


def result_text(block: ToolResultBlock) -> str:
    """A tool result's text (images and documents are named, not shown)."""
    if isinstance(block.content, str):
        return block.content
    parts = [b.text if isinstance(b, TextBlock) else f"[{b.type}]" for b in block.content]
    return "\n".join(parts)


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The prompt's content blocks as one text prompt: text as it is, a linked resource as
    `@path` (a file of the project) or its URI, an embedded text resource as a `<context>`
    block, as Zed's Claude Code adapter sends them."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_mention(block.uri))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<context ref="{resource.uri}">\n{resource.text}\n</context>')
            else:
                parts.append(_mention(resource.uri))
    return "\n".join(part for part in parts if part)


def _mention(uri: str) -> str:
    return f"@{uri.removeprefix('file://')}" if uri.startswith("file://") else uri


def stop_reason(terminal: TerminalEvent | None, messages: Sequence[Any]) -> StopReason | None:
    """The protocol's stop reason for how a prompt ended; None for an error (the caller
    answers the request with a JSON-RPC error saying what went wrong)."""
    if terminal is None:
        return "cancelled"
    reason = terminal.reason
    if reason in (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS):
        return "cancelled"
    if reason == Terminal.MAX_TURNS:
        return "max_turn_requests"
    if reason in (Terminal.PROMPT_TOO_LONG, Terminal.BLOCKING_LIMIT):
        return "max_tokens"
    if reason in (Terminal.MODEL_ERROR, Terminal.IMAGE_ERROR):
        return None
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is not None and last.stop_reason == "refusal":
        return "refusal"
    if last is not None and last.stop_reason == "max_tokens":
        return "max_tokens"
    return "end_turn"
