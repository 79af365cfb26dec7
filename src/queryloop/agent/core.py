"""`Agent`: the SDK front. It owns one conversation and drives `query()` for each prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import ConfigError, QueryloopError
from ..loop.events import LoopEvent, MessageEvent, SideUsage, StreamDelta, TerminalEvent
from ..loop.query import query
from ..loop.reasons import Terminal
from ..messages.constructors import text_of, tool_result_message, tool_uses_of
from ..messages.types import AssistantMessage, Message, UserMessage
from ..messages.usage import Usage
from ..providers.base import MessageComplete
from ..session import LoadedSession
from .assembly import assemble
from .options import AgentOptions
from .result import RunResult
from .runtime import Runtime

INTERRUPTED_RESULT = "Tool call was interrupted before it finished."
_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(AgentOptions)) - {"model"}


class Agent:
    """A coding agent you can embed.

        agent = Agent(model="claude-sonnet-5-5", tools=[my_tool], cwd="~/project")
        result = await agent.run("Fix the failing test")
        print(result.terminal, result.text, result.cost_usd)

    Several prompts in a row continue the same conversation; every message is appended to
    the session transcript as it is created, so `Agent.resume(session_id)` picks it up.
    """

    def __init__(self, model: str | None = None, **options: Any) -> None:
        """`model` and any field of `AgentOptions` as keywords (tools, system_prompt,
        max_turns, fallback_model, hooks, permission_mode, can_use_tool, cwd, ...)."""
        unknown = sorted(set(options) - _OPTION_NAMES)
        if unknown:
            raise ConfigError(
                f"unknown Agent option(s) {', '.join(unknown)}; "
                f"valid options: {', '.join(sorted(_OPTION_NAMES))}"
            )
        cwd = Path(options.pop("cwd", None) or Path.cwd()).expanduser().resolve()
        self.options = AgentOptions(model=model, cwd=cwd, **options)
        self._messages: list[Message] = list(self.options.history)
        self._runtime: Runtime | None = None
        self._setup_lock = asyncio.Lock()
        self.usage = Usage()
        self.cost_usd = 0.0
        self.turns = 0
        self.last_terminal: TerminalEvent | None = None
        self._session_id = self.options.session_id
        self._resume: LoadedSession | None = None
        self._running = False

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def resume(cls, session: str | Path, model: str | None = None, **options: Any) -> Agent:
        """Continue a stored session (an id, an id prefix, or a transcript path)."""
        from ..session import find_session, load_transcript

        cwd = Path(options.get("cwd") or Path.cwd()).expanduser().resolve()
        path = Path(session)
        if not path.is_file():
            path = find_session(str(session), cwd, options.get("home"))
        loaded = load_transcript(path)
        agent = cls(model, session_id=loaded.session_id, **options)
        agent._messages = list(loaded.messages)
        agent.usage = loaded.usage
        agent.cost_usd = loaded.cost_usd
        agent.turns = loaded.responses
        agent._resume = loaded
        return agent

    @classmethod
    def continue_latest(cls, model: str | None = None, **options: Any) -> Agent:
        """Continue the most recent session of this project (a new one if there is none)."""
        from ..session import latest_session

        cwd = Path(options.get("cwd") or Path.cwd()).expanduser().resolve()
        latest = latest_session(cwd, options.get("home"))
        if latest is None:
            return cls(model, **options)
        return cls.resume(latest, model, **options)

    async def _ensure_runtime(self) -> Runtime:
        async with self._setup_lock:
            if self._runtime is None:
                self._runtime = await assemble(self.options, self._session_id, resumed=self._resume)
                self._session_id = self._runtime.session_id
                self._messages = await self._runtime.on_session_start(self._messages)
            return self._runtime

    # ---- properties ---------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session id (known once the first prompt ran or `start()` was awaited)."""
        return self._session_id or ""

    @property
    def messages(self) -> list[Message]:
        """A copy of the conversation's internal message array."""
        return list(self._messages)

    @property
    def notices(self) -> list[str]:
        """Notices for the user so far (see `AgentOptions.on_notice`)."""
        return list(self._runtime.notices) if self._runtime is not None else []

    @property
    def model(self) -> str:
        """The main model."""
        if self._runtime is not None:
            return self._runtime.params.model
        return self.options.model or ""

    async def start(self) -> Agent:
        """Set up now (providers, MCP servers, session) instead of on the first prompt."""
        await self._ensure_runtime()
        return self

    # ---- running ------------------------------------------------------------------------

    async def run(self, prompt: str) -> RunResult:
        """Run one prompt to its end and return the result."""
        started = time.monotonic()
        usage_before, cost_before, turns_before = self.usage, self.cost_usd, self.turns
        terminal: TerminalEvent | None = None
        async for event in self.stream(prompt):
            if isinstance(event, TerminalEvent):
                terminal = event
        assert terminal is not None
        return RunResult(
            terminal=terminal.reason,
            text=self._final_text(terminal),
            messages=tuple(self._messages),
            usage=_usage_delta(self.usage, usage_before),
            cost_usd=self.cost_usd - cost_before,
            turns=self.turns - turns_before,
            session_id=self.session_id,
            duration_s=time.monotonic() - started,
            detail=terminal.detail,
        )

    async def stream(self, prompt: str) -> AsyncIterator[LoopEvent]:
        """Run one prompt, yielding every loop event; the last is a `TerminalEvent`.

        One prompt at a time: a second call while one runs raises `QueryloopError` (use
        separate Agents, or `queryloop.batch`, for parallel sessions)."""
        if self._running:
            raise QueryloopError(
                "this Agent is already running a prompt; await it first, or use one Agent "
                "per concurrent session"
            )
        self._running = True
        try:
            async for event in self._stream(prompt):
                yield event
        finally:
            self._running = False

    async def _stream(self, prompt: str) -> AsyncIterator[LoopEvent]:
        runtime = await self._ensure_runtime()
        runtime.params.tool_context.abort.reset()
        prepared = await runtime.prepare_prompt(prompt, self._messages)
        for message in prepared.messages:
            self._record(message)
            yield MessageEvent(message)
        if prepared.blocked is not None:
            terminal = TerminalEvent(
                reason=Terminal.HOOK_STOPPED,
                turn=0,
                detail=prepared.blocked,
                messages=tuple(self._messages),
            )
            self.last_terminal = terminal
            yield terminal
            return
        try:
            async for event in query(runtime.params, list(self._messages)):
                self._observe(event)
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            self._repair_after_cancel()
            raise

    def abort(self) -> None:
        """Stop the current turn as soon as it safely can (the REPL's Ctrl-C)."""
        if self._runtime is not None:
            self._runtime.params.tool_context.abort.abort("user")

    async def compact(self, instructions: str | None = None) -> None:
        """Summarise the conversation now (the CLI's /compact)."""
        runtime = await self._ensure_runtime()
        compacted = await runtime.compact(self._messages, instructions)
        if compacted is None:
            return
        for message in compacted:
            if message not in self._messages:
                runtime.persist(message)
        self._messages = list(compacted)

    def context_usage(self) -> dict[str, int]:
        """Tokens by category: system, tools, memory, messages, free, window."""
        if self._runtime is None:
            return {}
        return self._runtime.context_usage(self._messages)

    def clear(self) -> None:
        """Start a fresh conversation in a new session (the CLI's /clear)."""
        self._messages = []
        if self._runtime is not None:
            self._session_id = self._runtime.new_session()

    async def aclose(self) -> None:
        """Stop MCP servers and close the transcript."""
        if self._runtime is not None:
            await self._runtime.aclose()
            self._runtime = None

    async def __aenter__(self) -> Agent:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ---- bookkeeping --------------------------------------------------------------------

    def _record(self, message: Message) -> None:
        self._messages.append(message)
        if self._runtime is not None:
            self._runtime.persist(message)

    def _observe(self, event: LoopEvent) -> None:
        runtime = self._runtime
        assert runtime is not None
        if isinstance(event, MessageEvent):
            self._record(event.message)
        elif isinstance(event, StreamDelta) and isinstance(event.event, MessageComplete):
            response = event.event.response
            self.usage = self.usage + response.usage
            self.cost_usd += runtime.cost_usd(response.usage, response.model)
            self.turns += 1
            runtime.record_usage(response.usage, response.model)
        elif isinstance(event, SideUsage):
            self.usage = self.usage + event.usage
            self.cost_usd += runtime.cost_usd(event.usage, event.model)
            runtime.record_usage(event.usage, event.model, purpose=event.purpose)
        elif isinstance(event, TerminalEvent):
            self._messages = list(event.messages)
            self.last_terminal = event
            runtime.sync()

    def _repair_after_cancel(self) -> None:
        """Cancelled mid-turn: answer every unanswered tool_use so the array stays valid."""
        answered = {
            b.tool_use_id
            for m in self._messages
            if isinstance(m, UserMessage) and not isinstance(m.content, str)
            for b in m.content
            if b.type == "tool_result"
        }
        for message in list(self._messages):
            if isinstance(message, AssistantMessage):
                for block in tool_uses_of(message):
                    if block.id not in answered:
                        self._record(
                            tool_result_message(block.id, INTERRUPTED_RESULT, is_error=True)
                        )
                        answered.add(block.id)

    def _final_text(self, terminal: TerminalEvent) -> str:
        for message in reversed(terminal.messages or tuple(self._messages)):
            if isinstance(message, AssistantMessage):
                return text_of(message)
            if isinstance(message, UserMessage) and not message.is_meta:
                break
        return ""


def _usage_delta(after: Usage, before: Usage) -> Usage:
    fields = [f.name for f in dataclasses.fields(Usage)]
    return Usage(**{name: getattr(after, name) - getattr(before, name) for name in fields})
