"""Shows a `queryloop --output-format stream-json` stream readably (the demo's screen)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..cli.render_text import collapse, short_input

console = Console(highlight=False, soft_wrap=True)

_BANNER = """\
[bold yellow]OFFLINE DEMO[/] — no real model, no network.
The model is a [bold]scripted demo model[/] (queryloop/demo/script.py), served over
local HTTP by queryloop.testing.MessagesServer at {url}.
It follows a fixed plan but decides each step from the real tool results.
Everything else is the real `queryloop` command: query loop, tools, permission
rules, prompt caching and the session transcript.
"""


class StreamView:
    """Renders stream-json records: live text, tool calls, collapsed results."""

    def __init__(self, *, raw: bool = False) -> None:
        self.raw = raw
        self.result: dict[str, Any] | None = None
        self.streamed = False
        self.in_text = False

    def banner(self, url: str) -> None:
        """Say plainly what the model is."""
        console.print(_BANNER.format(url=url))

    def line(self, line: str) -> None:
        """One line of the command's stdout."""
        if self.raw:
            console.print(f"[dim]{escape(line.rstrip())}[/]")
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            self._end_text()
            console.print(escape(line.rstrip()))
            return
        self.record(record)

    def record(self, record: dict[str, Any]) -> None:
        """Render one stream-json record."""
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "init":
            tools = ", ".join(record.get("tools") or []) or "?"
            console.print(f"[dim]session {record.get('session_id')} · model "
                          f"{record.get('model')} · tools: {tools}[/]\n")  # fmt: skip
        elif kind == "stream_event":
            self._stream_event(record.get("event") or {})
        elif kind == "request_start":
            self._end_text()
            console.print(f"[dim]── model request {record.get('turn')} ──[/]")
        elif kind == "assistant":
            self._assistant(record.get("message") or {})
        elif kind == "user":
            self._user(record.get("message") or {})
        elif kind == "result":
            self._end_text()
            self.result = record

    def finish(self, *, violations: int, exit_code: int | None) -> None:
        """After the stream: the request check and the exit status."""
        self._end_text()
        ok = "[green]0 API-rule violations[/]" if violations == 0 else f"[red]{violations}[/]"
        console.print(f"\n[dim]The server checked every request: {ok}[dim]. "
                      f"queryloop exited with status {exit_code}.[/]")  # fmt: skip

    def _stream_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "text_delta":
            self.streamed = self.in_text = True
            console.print(escape(str(event.get("text", ""))), end="")
            console.file.flush()

    def _assistant(self, message: dict[str, Any]) -> None:
        for block in message.get("content") or []:
            if block.get("type") == "text" and not self.streamed and block.get("text"):
                console.print(escape(block["text"]))
            elif block.get("type") == "tool_use":
                self._end_text()
                args = escape(short_input(block.get("name", ""), block.get("input") or {}, 70))
                console.print(f"[bold cyan]⏺ {block.get('name')}[/]({args})")
        self.streamed = False

    def _user(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        if isinstance(content, str):
            if not message.get("is_meta"):
                console.print(f"[bold]> {escape(content)}[/]\n")
            return
        for block in content or []:
            if block.get("type") != "tool_result":
                continue
            text = block.get("content")
            if not isinstance(text, str):
                text = "\n".join(str(p.get("text", "")) for p in text or [])
            shown, hidden = collapse(text, 6)
            style = "red" if block.get("is_error") else "dim"
            for i, row in enumerate(shown):
                console.print(f"{'  ⎿ ' if i == 0 else '    '}[{style}]{escape(row[:160])}[/]")
            if hidden:
                console.print(f"    [dim]… {hidden} more lines[/]")

    def _end_text(self) -> None:
        if self.in_text:
            console.print()
            self.in_text = False
