"""The REPL's permission question: the Agent's `can_use_tool` for the calls its rules leave
open. It shows the call whole (who asks, what the analysis found, an edit as a coloured diff)
and reads y (once) / n (deny) / a (always: the rule joins this session and the project's local
settings, and it says so). Ctrl-C at the question denies the call and stops the turn.

It gets what it uses from the REPL as explicit values (`QuestionHost`), never the REPL.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .host import LineReader
from .markup import escape_markup

if TYPE_CHECKING:
    from ..permissions import PermissionRequest
    from .render import Renderer

NOTIFY_AFTER_S = 6.0
"""A permission question waits this long before Notification hooks run (Claude Code's)."""


@dataclass(frozen=True)
class QuestionHost:
    """What the permission question uses of the REPL."""

    console: Any
    renderer: Renderer
    cwd: Path
    read_line: LineReader
    """Reads the answer."""
    paused: Callable[[], contextlib.AbstractContextManager[None]]
    """Stops the type-ahead reading stdin while the answer is read."""
    interrupt_work: Callable[[], None]
    """Stops the turn (Ctrl-C at the question)."""
    notify: Callable[[str], Awaitable[None]]
    """Runs the Notification hooks with a message (of the agent of the moment)."""
    notify_after_s: float = NOTIFY_AFTER_S
    """How long a question waits before the Notification hooks run."""


class PermissionQuestion:
    """`ask` is the Agent's `can_use_tool` (see the module docstring)."""

    def __init__(self, host: QuestionHost) -> None:
        self.host = host
        self._lock = asyncio.Lock()

    async def ask(self, tool: str, input: Mapping[str, Any], request: PermissionRequest) -> Any:
        """Ask about one call; True (once), False (deny) or `PermissionAllow(remember=True)`."""
        # One question at a time: parallel calls and subagents share this prompt.
        async with self._lock:
            return await self._ask(tool, input, request)

    async def _ask(self, tool: str, input: Mapping[str, Any], request: Any) -> Any:
        """Show the question and read the answer. While it waits nothing else is drawn: the
        spinner stops and what arrives meanwhile (the stream, other calls, subagents'
        progress) is drawn after it (`Renderer.hold`)."""
        from ..permissions import PermissionAllow
        from .always import always_offer

        offer = always_offer(request)
        renderer = self.host.renderer
        renderer.hold()
        try:
            self._show(tool, input, request, offer.why_not if offer.rule is None else "")
            waiting = self._notify_later(f"queryloop needs your permission to use {tool}")
            try:
                with self.host.paused():
                    answer = await self._answer(always=offer.rule is not None)
            finally:
                waiting.cancel()
            if answer == "always" and offer.rule is not None:
                self._remember(offer.rule)
                return PermissionAllow(remember=True)
            return answer is True
        finally:
            renderer.release()

    def _show(self, tool: str, input: Mapping[str, Any], request: Any, no_always: str) -> None:
        """The call whole, who asks (a subagent), what the analysis found, an edit's diff."""
        from .diffs import proposed_diff
        from .question import question_lines

        console, renderer = self.host.console, self.host.renderer
        agent_id = getattr(request, "agent_id", None)
        asker = renderer.subagents.of(str(agent_id)) if agent_id else ""
        reason = str(getattr(request, "reason", "") or "")
        for line in question_lines(tool, input, reason=reason, asker=asker):
            console.print(line, highlight=False)
        diff = proposed_diff(tool, input, Path(getattr(request, "cwd", self.host.cwd)))
        if diff:
            renderer.show_diff(diff)
        if no_always:
            console.print(f"[dim]No \\[a]lways for this call: {escape_markup(no_always)}.[/]")

    def _notify_later(self, message: str) -> asyncio.Task[None]:
        """Notification hooks once a question has waited `notify_after_s` seconds (Claude
        Code waits about six); cancelled when it is answered first."""

        async def later() -> None:
            await asyncio.sleep(self.host.notify_after_s)
            try:
                await self.host.notify(message)
            except Exception:  # a notification must never break the question
                pass

        return asyncio.create_task(later(), name="queryloop-notify")

    def _remember(self, rule: str) -> None:
        from ..config.trust import is_trusted
        from .always import save_local_rule

        console, cwd = self.host.console, self.host.cwd
        try:
            path = save_local_rule(cwd, rule)
        except (OSError, ValueError) as exc:
            console.print(
                f"[yellow]Allowed {escape_markup(rule)} for this session; could not save it: "
                f"{escape_markup(str(exc))}[/]"
            )
            return
        later = "" if is_trusted(cwd) else (
            " · later sessions use it once this folder is trusted (queryloop trust)"
        )  # fmt: skip
        console.print(
            f"[green]Added allow rule {escape_markup(rule)}[/] [dim]to this session and to "
            f"{escape_markup(str(path))}{later}[/]"
        )

    async def _answer(self, *, always: bool = True) -> bool | str:
        question = "[y]es / [n]o / [a]lways > " if always else "[y]es / [n]o > "
        while True:
            try:
                answer = (await self.host.read_line(question)).strip().lower()
            except EOFError:
                return False
            except KeyboardInterrupt:
                # Ctrl-C at the prompt: deny this call and stop the turn.
                self.host.interrupt_work()
                return False
            if answer in ("y", "yes"):
                return True
            if always and answer in ("a", "always"):
                return "always"
            if answer in ("n", "no", ""):
                return False
