"""Rendering a session for people: streamed text, tool calls, collapsed results, bars.

The pure helpers (`short_input`, `collapse`, `cache_hit_share`, `context_bar_parts`,
`status_text`) take plain data and are unit-tested; `Renderer` wires them to a rich Console.
In a dumb terminal (or a pipe) nothing is animated: text streams as plain text and tool
calls are single lines, so the output stays readable anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..loop.events import (
    ApiRetry,
    LoopEvent,
    MessageEvent,
    RequestStart,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
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
from ..providers.base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    TextDelta,
    ThinkingDelta,
)
from ..tasks.events import TaskEvent, TaskEventKind
from .diffs import applied_diff, diff_stats
from .markup import escape_markup, is_animated
from .render_text import (
    RESULT_LINES,
    collapse,
    diff_markup,
    recent_exchanges,
    result_text,
    retry_text,
    short_input,
    waiting_text,
)
from .subagents import SubagentLabels


class _Waiting:
    """The spinner line's text, recomputed at every refresh (so the seconds move)."""

    def __init__(self, renderer: Renderer, label: str) -> None:
        self.renderer = renderer
        self.label = label

    def __rich__(self) -> Any:
        from rich.text import Text

        r = self.renderer
        return Text(waiting_text(self.label, r.elapsed(), r.tokens_so_far()), style="dim")


class _Streaming:
    """What the live area shows while text streams: the text so far, then the spinner line."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.spinner import Spinner

        r = self.renderer
        return Group(r._markdown(r._text), Spinner("dots", text=_Waiting(r, "Writing")))


class Renderer:
    """Draws loop events on a rich Console: live text, tool lines, spinners, results.

    While the model works a spinner line says what it does, for how long, and how many
    tokens have arrived (`Thinking… 4s · ↓ 120 tokens`); edits are shown as coloured diffs.
    """

    def __init__(
        self, console: Any, *, cwd: Path | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.console = console
        self.cwd = cwd or Path.cwd()
        self.clock = clock
        self.animated = is_animated(console)
        self.tool_names: dict[str, str] = {}
        self.tool_inputs: dict[str, Mapping[str, Any]] = {}
        self._started = clock()
        self._tokens_done = 0
        self._chars = 0
        self._text = ""
        self._live: Any = None
        self._status: Any = None
        self._streamed = False
        self._pending_tools: set[str] = set()
        self._error_shown = ""
        """The text of the API error just drawn, so the end of the turn does not repeat it."""
        self.subagents = SubagentLabels()
        self._held: list[LoopEvent] | None = None
        """Events that arrived while a question waits (`hold`), drawn after it."""

    # ---- events ------------------------------------------------------------------------

    def hold(self) -> None:
        """A question is on the screen: stop every animation and keep what arrives (the
        stream, other calls' results, subagents' progress) for after it, so nothing draws
        over the question or spins under it."""
        self.pause()
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """The question was answered: draw what arrived meanwhile, in order, and show the
        spinner again if calls still run."""
        held, self._held = self._held or [], None
        for event in held:
            self.handle(event)
        self.resume_spinner()

    @property
    def holding(self) -> bool:
        """True while a question waits."""
        return self._held is not None

    def handle(self, event: LoopEvent) -> None:
        """Render one loop event (kept for later while a question waits)."""
        if self._held is not None:
            self._held.append(event)
        elif isinstance(event, StreamDelta):
            self._delta(event.event)
        elif isinstance(event, MessageEvent):
            self._message(event.message)
        elif isinstance(event, TransitionEvent):
            self.end_text()
        elif isinstance(event, TaskEvent):
            self.task_event(event)
        elif isinstance(event, RequestStart):
            self.waiting()
        elif isinstance(event, ApiRetry):
            self.notice(retry_text(event), style="yellow")
            if self.animated:
                self._show_status(f"Retrying (attempt {event.attempt}/{event.max_retries})")
        elif isinstance(event, TerminalEvent):
            self.pause()
            self._terminal(event)

    def _delta(self, inner: Any) -> None:
        if isinstance(inner, TextDelta | ThinkingDelta | InputJsonDelta):
            self._chars += len(getattr(inner, "text", "") or getattr(inner, "thinking", "") or
                               getattr(inner, "partial_json", ""))  # fmt: skip
        elif isinstance(inner, MessageComplete):
            self._tokens_done += inner.response.usage.output_tokens
            self._chars = 0
        if isinstance(inner, TextDelta):
            self._stop_status()
            self._streamed = True
            self._text += inner.text
            if self._live is not None:
                pass  # the live area redraws itself 12 times a second
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
        elif message.subtype == SystemSubtype.API_ERROR:
            self.notice(message.content, style="red")
            self._error_shown = message.content
        elif message.subtype == SystemSubtype.MODEL_FALLBACK:
            self.notice(message.content, style="yellow")

    def _terminal(self, event: TerminalEvent) -> None:
        shown, self._error_shown = self._error_shown, ""
        if event.reason is Terminal.COMPLETED:
            return
        if event.reason in (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS):
            self.notice("Interrupted · what should I do instead?", style="yellow")
            return
        # The error's own line just said why (its system message): not twice.
        detail = f": {event.detail}" if event.detail and event.detail != shown else ""
        self.notice(f"Stopped ({event.reason.value}){detail}", style="red")

    # ---- pieces ------------------------------------------------------------------------

    def tool_call(self, block: ToolUseBlock) -> None:
        """`⏺ Name(short input)` and a spinner until its result arrives."""
        if block.id in self.tool_names:
            return
        self.tool_names[block.id] = block.name
        self.tool_inputs[block.id] = block.input
        self._pending_tools.add(block.id)
        self._stop_status()
        shown = escape_markup(short_input(block.name, block.input))
        self.console.print(f"[bold cyan]⏺ {block.name}[/]([dim]{shown}[/])")
        self.resume_spinner()

    def resume_spinner(self) -> None:
        """Show the spinner again while tool calls are still running (after a prompt)."""
        if self.animated and self._pending_tools and self._status is None and not self.holding:
            names = sorted({self.tool_names[t] for t in self._pending_tools})
            self._show_status(f"Running {', '.join(names)}")

    def waiting(self) -> None:
        """The spinner while the model is asked (`Thinking… 3s`), unless tools still run."""
        if self._pending_tools:
            self.resume_spinner()
        elif self.animated and self._status is None and self._live is None and not self.holding:
            self._show_status("Thinking")

    def elapsed(self) -> float:
        """Seconds since the turn started."""
        return self.clock() - self._started

    def tokens_so_far(self) -> int:
        """Output tokens of this turn: counted ones of finished responses, plus an estimate
        (4 characters a token) of the one streaming now."""
        return self._tokens_done + self._chars // 4

    def hook_status(self, status: Any) -> None:
        """A hook's `statusMessage` as the spinner's text while it runs (`HookStatus`)."""
        if not self.animated or self._live is not None or self.holding:
            return
        self._stop_status()
        if status.running:
            self._show_status(str(status.message))
        else:
            self.waiting()

    def _show_status(self, label: str) -> None:
        self._status = self.console.status(_Waiting(self, label), spinner="dots")
        self._status.start()

    def tool_result(self, block: ToolResultBlock) -> None:
        """The first lines of a result and `… N more lines`."""
        self._pending_tools.discard(block.tool_use_id)
        if not self._pending_tools:
            self._stop_status()
        name = self.tool_names.get(block.tool_use_id, "")
        diff = None if block.is_error else self._applied(name, block.tool_use_id)
        if diff:
            added, removed = diff_stats(diff)
            self.console.print(f"  ⎿ [dim]{added} added, {removed} removed[/]", highlight=False)
            self.show_diff(diff)
            self.waiting()
            return
        shown, hidden = collapse(result_text(block))
        style = "red" if block.is_error else "dim"
        for i, line in enumerate(shown):
            prefix = "  ⎿ " if i == 0 else "    "
            self.console.print(f"{prefix}[{style}]{escape_markup(line[:200])}[/]", highlight=False)
        if hidden:
            self.console.print(f"    [dim]… {hidden} more lines[/]")
        self.waiting()

    def show_recent(self, messages: list[Any], count: int = 3) -> None:
        """The last exchanges of a resumed conversation, so you know where you are."""
        pairs = recent_exchanges(messages, count)
        if not pairs:
            return
        self.console.print(f"[dim]── last {len(pairs)} exchange(s) of this session ──[/]")
        for prompt, answer in pairs:
            shown, hidden = collapse(prompt, 3)
            for i, line in enumerate(shown):
                self.console.print(f"[bold]{'>' if i == 0 else ' '}[/] {escape_markup(line[:200])}")
            if hidden:
                self.console.print(f"  [dim]… {hidden} more lines[/]")
            shown, hidden = collapse(answer or "(no answer)", RESULT_LINES)
            for line in shown:
                self.console.print(f"  [dim]{escape_markup(line[:200])}[/]")
            if hidden:
                self.console.print(f"  [dim]… {hidden} more lines[/]")
        self.console.print("[dim]──[/]")

    def show_diff(self, lines: list[str]) -> None:
        """A unified diff, coloured (plain in a dumb terminal), indented under the call."""
        for line in diff_markup(lines):
            self.console.print(f"    {line}", highlight=False)

    def _applied(self, name: str, tool_use_id: str) -> list[str] | None:
        tool_input = self.tool_inputs.get(tool_use_id)
        if tool_input is None:
            return None
        try:
            return applied_diff(name, tool_input, self.cwd)
        except Exception:  # a diff is a nicety; the result line is shown instead
            return None

    def tool_summary(self, message: ToolUseSummaryMessage) -> None:
        """The one-line label of a finished tool run (see `loop.summaries`)."""
        names = sorted({self.tool_names.get(i, "?") for i in message.tool_use_ids})
        calls = len(message.tool_use_ids)
        what = f"{calls} tool call{'s' if calls != 1 else ''}: {', '.join(names)}"
        self.pause()
        self.console.print(f"[green]✻[/] {escape_markup(message.summary)} [dim]({what})[/]")

    def agent_progress(self, data: Mapping[str, Any]) -> None:
        """A subagent's step, live under its Agent call: `  ⎿ label: text` / `⏺ Tool(input)`,
        the label naming which subagent (`SubagentLabels`)."""
        who = escape_markup(self.subagents.learn(data))
        if data.get("kind") == "started":
            return  # named now, before it can ask anything; its Agent call is on screen
        self.pause()
        text = " ".join(str(data.get("text") or "").split())
        if text:
            self.console.print(f"    [dim]⎿ {who}: {escape_markup(text[:160])}[/]", highlight=False)
        for call in data.get("tool_uses") or []:
            name = str(call.get("name", ""))
            shown = escape_markup(short_input(name, call.get("input") or {}, 50))
            self.console.print(
                f"    [dim]⎿ {who} ⏺ {escape_markup(name)}({shown})[/]", highlight=False
            )
        self.resume_spinner()

    def task_event(self, event: TaskEvent) -> None:
        """A background task started or finished (progress is not printed)."""
        if event.kind is TaskEventKind.PROGRESS:
            return
        what = f"{event.task_id} ({escape_markup(event.description[:60])})"
        if event.kind is TaskEventKind.STARTED:
            self.notice(f"Background task {what} started · /tasks lists them")
        else:
            style = "green" if event.status.value == "completed" else "yellow"
            self.notice(f"Background task {what} {event.detail or event.status.value}", style)

    def notice(self, text: str, style: str = "dim") -> None:
        """A short line of information."""
        self.pause()
        self.console.print(f"[{style}]{escape_markup(text)}[/]")

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
        """Reset per-turn state and show the spinner until the first token."""
        self._streamed = False
        self._pending_tools.clear()
        self._started = self.clock()
        self._tokens_done = 0
        self._chars = 0
        self.waiting()

    def _start_live(self) -> None:
        from rich.live import Live

        self._live = Live(
            _Streaming(self),
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
