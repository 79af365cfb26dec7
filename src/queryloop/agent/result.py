"""What `Agent.run()` returns, and the recorder that builds it from the loop's events."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from ..loop.events import LoopEvent, MessageEvent, TerminalEvent
from ..loop.reasons import Terminal
from ..messages.constructors import final_text
from ..messages.deferral import PendingCall, pending_calls
from ..messages.types import AssistantMessage, Message, SystemMessage, SystemSubtype
from ..messages.usage import Usage
from ..session import Session, SessionTotals
from ..tools.base import DenialSource


@dataclass(frozen=True, slots=True)
class PermissionDenial:
    """One tool call that was refused and never ran (Claude Code's `permission_denials`
    entries, plus who refused it and why)."""

    tool_name: str
    tool_use_id: str
    tool_input: Mapping[str, Any]
    source: DenialSource
    """Who refused: a rule, the mode, the tool, a hook, the user (or `can_use_tool`), or
    nobody being there to approve it."""
    message: str
    """The is_error text the model read."""
    rule: str | None = None
    """The rule that decided, when one did (`Bash(rm:*)`)."""

    @classmethod
    def from_message(cls, message: Message) -> PermissionDenial | None:
        """The denial a `permission_denied` system message records, else None."""
        if not (
            isinstance(message, SystemMessage)
            and message.subtype is SystemSubtype.PERMISSION_DENIED
        ):
            return None
        data = message.metadata
        try:
            source = DenialSource(str(data.get("source")))
        except ValueError:
            source = DenialSource.TOOL
        return cls(
            tool_name=str(data.get("tool_name", "")),
            tool_use_id=str(data.get("tool_use_id", "")),
            tool_input=dict(data.get("tool_input") or {}),
            source=source,
            message=message.content,
            rule=data.get("rule"),
        )


OutputT = TypeVar("OutputT", default=None)
"""What a prompt returns besides its text: the Agent's `output_type` (None without one)."""


@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutputT]):
    """The outcome of one prompt: why it ended, the final text, and what it cost.

    `turns` counts the prompt's turns (docs/loop.md, "Turns"), the same figure `--max-turns`
    limits and `queryloop sessions` sums. `usage` and `cost_usd` cover every billed request
    the run made, compaction summaries included; `messages` is the session's array after it.
    `denials` lists the tool calls that were refused: a run can be `completed` although
    every tool it tried was refused, and a script can tell (`all_tools_denied`).
    """

    terminal: Terminal
    text: str
    messages: tuple[Message, ...]
    usage: Usage
    cost_usd: float
    turns: int
    session_id: str
    duration_s: float
    output: OutputT
    """The structured output (`Agent(output_type=X)`): an instance of X, the dict for a JSON
    Schema; None without an output type, and when the run ended without a valid one
    (`terminal` says why, e.g. `max_structured_output_retries`)."""
    detail: str = ""
    requests: int = 0
    """Billed requests of this run (model turns, compaction summaries, side calls, attempts
    that were cut off): each is in `usage` and `cost_usd` exactly once."""
    denials: tuple[PermissionDenial, ...] = ()
    """The tool calls refused during this run, in order."""
    tool_calls: int = 0
    """Tool calls the model made during this run (refused ones included)."""
    deferred: tuple[PendingCall, ...] = ()
    """The tool calls that wait for a decision (terminal `deferred`): id, tool, input and
    who deferred them. Continue with `Agent.resume(session_id, decisions=...)`."""

    @property
    def is_error(self) -> bool:
        """True unless the loop completed normally, or stopped to wait for a decision on a
        deferred tool call (waiting is not a failure)."""
        return self.terminal not in (Terminal.COMPLETED, Terminal.DEFERRED)

    @property
    def all_tools_denied(self) -> bool:
        """True when the model called tools and every call was refused."""
        return self.tool_calls > 0 and len(self.denials) >= self.tool_calls


@dataclass
class RunRecorder:
    """Watches one prompt's events and builds its `RunResult` (the Agent's only way to)."""

    session: Session
    started: float = field(default_factory=time.monotonic)
    before: SessionTotals | None = None
    terminal: TerminalEvent | None = None
    denials: list[PermissionDenial] = field(default_factory=list)
    tool_calls: int = 0

    def __post_init__(self) -> None:
        if self.before is None:
            self.before = self.session.totals()

    def observe(self, event: LoopEvent) -> None:
        """Take what the result needs from one event (after the session applied it)."""
        if isinstance(event, TerminalEvent):
            self.terminal = event
        elif isinstance(event, MessageEvent):
            message = event.message
            if isinstance(message, AssistantMessage):
                self.tool_calls += sum(1 for b in message.content if b.type == "tool_use")
            denial = PermissionDenial.from_message(message)
            if denial is not None:
                self.denials.append(denial)

    def result(self) -> RunResult[Any]:
        """The run's result; an interrupted stream without a terminal counts as aborted."""
        assert self.before is not None
        spent = self.session.totals() - self.before
        terminal = self.terminal
        return RunResult(
            terminal=terminal.reason if terminal else Terminal.ABORTED_STREAMING,
            text=final_text(self.session.messages),
            messages=self.session.messages,
            usage=spent.usage,
            cost_usd=spent.cost_usd,
            turns=terminal.turn if terminal else 0,
            session_id=self.session.session_id,
            duration_s=time.monotonic() - self.started,
            output=terminal.output if terminal else None,
            detail=terminal.detail if terminal else "cancelled",
            requests=spent.requests,
            denials=tuple(self.denials),
            tool_calls=self.tool_calls,
            deferred=pending_calls(self.session.messages),
        )
