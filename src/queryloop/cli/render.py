"""Rendering a session for people: streamed text, tool calls, collapsed results, bars.

The pure helpers (`short_input`, `collapse`, `cache_hit_share`, `context_bar_parts`,
`status_text`) take plain data and are unit-tested; `Renderer` wires them to a rich Console.
In a dumb terminal (or a pipe) nothing is animated: text streams as plain text and tool
calls are single lines, so the output stays readable anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..loop.events import LoopEvent, MessageEvent, StreamDelta, TerminalEvent, TransitionEvent
from ..loop.reasons import Terminal
from ..messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from ..messages.types import (
    AssistantMessage,
    AttachmentMessage,
    ProgressMessage,
    SystemMessage,
    SystemSubtype,
    ToolUseSummaryMessage,
    UserMessage,
)
from ..messages.usage import Usage
from ..providers.base import BlockComplete, BlockStart, TextDelta
from ..tasks.events import TaskEvent, TaskEventKind

RESULT_LINES = 4
_INPUT_KEYS = ("command", "file_path", "pattern", "path", "url", "query", "description")
CATEGORIES = ("system", "tools", "memory", "messages", "free")
COLORS = {"system": "magenta", "tools": "cyan", "memory": "yellow", "messages": "green",
           "free": "grey37"}  # fmt: skip


def short_input(name: str, input: Mapping[str, Any], width: int = 60) -> str:
    """A one-line form of a tool input: its main field, else compact JSON, cut to `width`."""
    text = next((str(input[k]) for k in _INPUT_KEYS if input.get(k)), "")
    if name == "TodoWrite" and isinstance(input.get("todos"), list):
        text = f"{len(input['todos'])} todos"
    if not text:
        text = json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def result_text(block: ToolResultBlock) -> str:
    """The text of a tool_result (images and documents as placeholders)."""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if isinstance(b, TextBlock) else f"[{b.type}]" for b in block.content)


def collapse(text: str, max_lines: int = RESULT_LINES) -> tuple[list[str], int]:
    """The first `max_lines` non-empty-trimmed lines of `text` and how many more there are."""
    lines = text.strip("\n").splitlines() or ["(no output)"]
    return lines[:max_lines], max(0, len(lines) - max_lines)


def cache_hit_share(usage: Usage) -> float:
    """Cache reads as a share of all prompt tokens (0.0 when nothing was sent)."""
    total = usage.total_input_tokens
    return usage.cache_read_input_tokens / total if total else 0.0


def context_share(context: Mapping[str, int]) -> float | None:
    """Used share of the window from `Agent.context_usage()`, None when unknown."""
    window = context.get("window") or 0
    if window <= 0:
        return None
    used = window - context.get("free", window)
    return max(0.0, min(1.0, used / window))


def context_bar_parts(context: Mapping[str, int], width: int = 50) -> list[tuple[str, int, int]]:
    """(category, tokens, cells) for the /context bar; cells add up to `width`."""
    window = context.get("window") or sum(context.get(c, 0) for c in CATEGORIES) or 1
    parts: list[tuple[str, int, int]] = []
    used_cells = 0
    for category in CATEGORIES:
        tokens = max(0, context.get(category, 0))
        cells = round(tokens / window * width)
        if tokens and not cells:
            cells = 1  # a category that exists is always visible
        parts.append((category, tokens, cells))
        used_cells += cells
    # Rounding error goes to (or comes from) the free part so the bar has a fixed width.
    name, tokens, cells = parts[-1]
    parts[-1] = (name, tokens, max(0, cells + width - used_cells))
    return parts


def status_text(model: str, context: Mapping[str, int], usage: Usage, cost_usd: float) -> str:
    """The bottom status line: model · context used · cache hits · cost."""
    share = context_share(context)
    ctx = f"{share:.0%} context" if share is not None else "context n/a"
    return f"{model} · {ctx} · {cache_hit_share(usage):.0%} cache hits · ${cost_usd:.4f}"


class Renderer:
    """Draws loop events on a rich Console: live text, tool lines, spinners, results."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.animated = bool(console.is_terminal) and not console.is_dumb_terminal
        self.tool_names: dict[str, str] = {}
        self._text = ""
        self._live: Any = None
        self._status: Any = None
        self._streamed = False
        self._pending_tools: set[str] = set()

    # ---- events ------------------------------------------------------------------------

    def handle(self, event: LoopEvent) -> None:
        """Render one loop event."""
        if isinstance(event, StreamDelta):
            self._delta(event.event)
        elif isinstance(event, MessageEvent):
            self._message(event.message)
        elif isinstance(event, TransitionEvent):
            self.end_text()
        elif isinstance(event, TaskEvent):
            self.task_event(event)
        elif isinstance(event, TerminalEvent):
            self.pause()
            self._terminal(event)

    def _delta(self, inner: Any) -> None:
        if isinstance(inner, TextDelta):
            self._stop_status()
            self._streamed = True
            self._text += inner.text
            if self._live is not None:
                self._live.update(self._markdown(self._text))
            elif self.animated:
                self._start_live()
            else:
                self.console.print(inner.text, end="", markup=False, highlight=False)
                self.console.file.flush()
        elif isinstance(inner, BlockStart) and inner.block_type != "text":
            self.end_text()
        elif isinstance(inner, BlockComplete) and isinstance(inner.block, ToolUseBlock):
            # Tools start (and may ask permission) as soon as their block completes, before
            # the whole assistant message arrives: show the call now.
            self.tool_call(inner.block)

    def _message(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            if not self._streamed:
                for block in message.content:
                    if isinstance(block, TextBlock) and block.text.strip():
                        self._text = block.text
                        self.end_text(force=True)
            self.end_text()
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    self.tool_call(block)
        elif isinstance(message, UserMessage) and not isinstance(message.content, str):
            for part in message.content:
                if isinstance(part, ToolResultBlock):
                    self.tool_result(part)
        elif isinstance(message, SystemMessage):
            self._system(message)
        elif isinstance(message, ToolUseSummaryMessage):
            self.tool_summary(message)
        elif isinstance(message, AttachmentMessage) and message.attachment.type == "queued_command":
            prompt = str(message.attachment.data.get("prompt", ""))
            self.notice(f"↳ queued prompt sent to the model: {prompt}")
        elif isinstance(message, ProgressMessage) and message.data.get("type") == "agent_progress":
            self.agent_progress(message.data)

    def _system(self, message: SystemMessage) -> None:
        if message.subtype == SystemSubtype.COMPACT_BOUNDARY:
            self.notice("Conversation compacted")
        elif message.subtype in (SystemSubtype.API_ERROR, SystemSubtype.MODEL_FALLBACK):
            self.notice(message.content, style="yellow")

    def _terminal(self, event: TerminalEvent) -> None:
        if event.reason is Terminal.COMPLETED:
            return
        if event.reason in (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS):
            self.notice("Interrupted · what should I do instead?", style="yellow")
            return
        detail = f": {event.detail}" if event.detail else ""
        self.notice(f"Stopped ({event.reason.value}){detail}", style="red")

    # ---- pieces ------------------------------------------------------------------------

    def tool_call(self, block: ToolUseBlock) -> None:
        """`⏺ Name(short input)` and a spinner until its result arrives."""
        if block.id in self.tool_names:
            return
        self.tool_names[block.id] = block.name
        self._pending_tools.add(block.id)
        self._stop_status()
        self.console.print(
            f"[bold cyan]⏺ {block.name}[/]([dim]{_escape(short_input(block.name, block.input))}[/])"
        )
        self.resume_spinner()

    def resume_spinner(self) -> None:
        """Show the spinner again while tool calls are still running (after a prompt)."""
        if self.animated and self._pending_tools and self._status is None:
            names = sorted({self.tool_names[t] for t in self._pending_tools})
            self._status = self.console.status(f"Running {', '.join(names)}…", spinner="dots")
            self._status.start()

    def tool_result(self, block: ToolResultBlock) -> None:
        """The first lines of a result and `… N more lines`."""
        self._pending_tools.discard(block.tool_use_id)
        if not self._pending_tools:
            self._stop_status()
        shown, hidden = collapse(result_text(block))
        style = "red" if block.is_error else "dim"
        for i, line in enumerate(shown):
            prefix = "  ⎿ " if i == 0 else "    "
            self.console.print(f"{prefix}[{style}]{_escape(line[:200])}[/]", highlight=False)
        if hidden:
            self.console.print(f"    [dim]… {hidden} more lines[/]")

    def tool_summary(self, message: ToolUseSummaryMessage) -> None:
        """The one-line label of a finished tool run (see `loop.summaries`)."""
        names = sorted({self.tool_names.get(i, "?") for i in message.tool_use_ids})
        calls = len(message.tool_use_ids)
        what = f"{calls} tool call{'s' if calls != 1 else ''}: {', '.join(names)}"
        self.pause()
        self.console.print(f"[green]✻[/] {_escape(message.summary)} [dim]({what})[/]")

    def agent_progress(self, data: Mapping[str, Any]) -> None:
        """A subagent's step, live under its Agent call: `  ⎿ type: text` / `⏺ Tool(input)`."""
        self.pause()
        who = _escape(str(data.get("agent_type", "agent")))
        text = " ".join(str(data.get("text") or "").split())
        if text:
            self.console.print(f"    [dim]⎿ {who}: {_escape(text[:160])}[/]", highlight=False)
        for call in data.get("tool_uses") or []:
            name = str(call.get("name", ""))
            shown = _escape(short_input(name, call.get("input") or {}, 50))
            self.console.print(f"    [dim]⎿ {who} ⏺ {_escape(name)}({shown})[/]", highlight=False)
        self.resume_spinner()

    def task_event(self, event: TaskEvent) -> None:
        """A background task started or finished (progress is not printed)."""
        if event.kind is TaskEventKind.PROGRESS:
            return
        what = f"{event.task_id} ({_escape(event.description[:60])})"
        if event.kind is TaskEventKind.STARTED:
            self.notice(f"Background task {what} started · /tasks lists them")
        else:
            style = "green" if event.status.value == "completed" else "yellow"
            self.notice(f"Background task {what} {event.detail or event.status.value}", style)

    def notice(self, text: str, style: str = "dim") -> None:
        """A short line of information."""
        self.pause()
        self.console.print(f"[{style}]{_escape(text)}[/]")

    def end_text(self, *, force: bool = False) -> None:
        """Finish the text block being streamed (re-rendered as markdown when animated)."""
        if self._live is not None:
            self._live.update(self._markdown(self._text))
            self._live.stop()
            self._live = None
        elif force and self._text:
            self.console.print(self._markdown(self._text) if self.animated else self._text)
        elif self._text and not self.animated:
            self.console.print()
        self._text = ""

    def pause(self) -> None:
        """Stop every animation (before asking the user something, or at the end)."""
        self.end_text()
        self._stop_status()
        self._streamed = False

    def start_turn(self) -> None:
        """Reset per-turn state."""
        self._streamed = False
        self._pending_tools.clear()

    def _start_live(self) -> None:
        from rich.live import Live

        self._live = Live(
            self._markdown(self._text),
            console=self.console,
            refresh_per_second=12,
            vertical_overflow="visible",
        )
        self._live.start()

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _markdown(self, text: str) -> Any:
        from rich.markdown import Markdown

        return Markdown(text)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
