"""The machinery under `HookRunner`: select, run and interpret the hooks of one event.

Handlers follow Claude Code's protocol (`hooks.verdict`): the event JSON on stdin (command),
as the POST body (http) or in the prompt (prompt); exit 0 = fine (stdout may be a JSON object
with a decision), exit 2 = block where the event can be blocked (stderr is the message), any
other exit code = a non-blocking error reported to the user. Hooks matching one event run
concurrently; their verdicts merge in configuration order (deny > ask > allow; the last
`updatedInput` wins). A hook that crashes, hangs, cannot start or prints garbage becomes a
`HookWarning`, never an exception. The per-event methods: `hooks.tool_events`, `hooks.runner`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..messages.types import Message
from .background import late_answer, late_context
from .callables import run_callable_hook
from .config import (
    CallableHook,
    CommandHook,
    Hook,
    HooksConfig,
    HttpHook,
    PromptHook,
    timeout_of,
)
from .events import TOOL_EVENTS, HookEvent
from .http import run_http_hook
from .prompt import PromptModel, run_prompt_hook
from .shell import Detached, HookRun, run_command_hook
from .types import HookStatus, HookWarning
from .verdict import Merged, Verdict, interpret

log = logging.getLogger(__name__)

StatusCallback = Callable[[HookStatus], None]
SidechainPath = Callable[[str, Sequence[Message]], Path]
"""(agent id, the subagent's messages) -> its transcript in Claude Code's format."""


class HookObserver(Protocol):
    """Told when a hook handler starts (in the task that runs it) and, through what
    `hook_started` returns, how its run ended: the trace's hook spans."""

    def hook_started(self, event: HookEvent, hook: Hook) -> Callable[[HookRun], None]: ...


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The call a tool event is about, for handlers' `if` (relative paths: against `cwd`)."""

    name: str
    input: Mapping[str, Any]
    cwd: Path | None = None


class HookMachinery:
    """Selects, runs and interprets the hooks of one event (the base of `HookRunner`).

    `on_warning` receives each `HookWarning` as it happens (the CLI prints it); they are also
    kept in `warnings` and logged. `on_status` receives a `HookStatus` when a hook with a
    `statusMessage` starts and when it ends (the CLI shows it as its spinner's text).
    `ask_model` answers prompt hooks; `session_id`, `transcript_path` and `permission_mode`
    may be callables (/clear starts a new session; the REPL may switch modes); a callable
    `transcript_path` is called each time a hook is about to run (`hooks.claude_transcript`
    brings the file up to date then), and `sidechain_path` gives a subagent's. `observer`
    hears each handler's start and end (the session's trace, `queryloop.telemetry`).
    """

    def __init__(
        self,
        config: HooksConfig,
        *,
        cwd: Path,
        session_id: str | Callable[[], str],
        transcript_path: Path | str | Callable[[], Path | str | None] | None = None,
        env: Mapping[str, str] | None = None,
        permission_mode: str | Callable[[], str] = "default",
        on_warning: Callable[[HookWarning], None] | None = None,
        on_status: StatusCallback | None = None,
        ask_model: PromptModel | None = None,
        observer: HookObserver | None = None,
        sidechain_path: SidechainPath | None = None,
    ) -> None:
        self.config = config
        self.observer = observer
        self.cwd = cwd
        self._session_id = session_id
        self._transcript_path = transcript_path
        self._sidechain_path = sidechain_path
        self._mode = permission_mode
        self.on_warning = on_warning
        self.on_status = on_status
        self.ask_model = ask_model
        self.warnings: list[HookWarning] = []
        self._fired_once: set[int] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._detached: set[Detached] = set()
        """Hooks gone on in the background after their async answer, not finished yet."""
        self._async_context: list[str] = []
        project = str(cwd)
        self._env = {
            **os.environ,
            **(env or {}),
            "QUERYLOOP_PROJECT_DIR": project,
            "CLAUDE_PROJECT_DIR": project,
        }

    @property
    def session_id(self) -> str:
        """The session hooks are told of (a callable follows /clear's new session)."""
        return self._session_id() if callable(self._session_id) else self._session_id

    @property
    def transcript_path(self) -> str:
        """The session's transcript path ("" when not persisted)."""
        path = self._transcript_path() if callable(self._transcript_path) else self._transcript_path
        return str(path or "")

    def sidechain_transcript(self, agent_id: str, messages: Sequence[Message]) -> str | None:
        """A subagent's transcript for its hooks (SubagentStop's `agent_transcript_path`),
        brought up to date with its `messages`; None when there is none to give."""
        if self._sidechain_path is None:
            return None
        return str(self._sidechain_path(agent_id, messages))

    @property
    def permission_mode(self) -> str:
        """The permission mode hooks are told (`permission_mode` in their input)."""
        return self._mode() if callable(self._mode) else self._mode

    def has_hooks(self, event: HookEvent) -> bool:
        """True when any hook is configured for `event` (callers skip work otherwise)."""
        return bool(self.config.events.get(event))

    def payload(self, event: HookEvent, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object a hook reads (Claude Code's field names)."""
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event.value,
            "permission_mode": self.permission_mode,
            **fields,
        }

    async def run_event(
        self,
        event: HookEvent,
        target: str | None,
        fields: Mapping[str, Any],
        *,
        tool: ToolCall | None = None,
        timeout: float | None = None,
    ) -> Merged:
        """Run the hooks `target` selects (a tool call filters their `if`); `timeout`
        caps every hook (SessionEnd's budget)."""
        hooks = [h for h in self.config.hooks_for(event, target) if self._selected(h, event, tool)]
        if not hooks:
            return Merged()
        data = self.payload(event, fields)
        background = [h for h in hooks if isinstance(h, CommandHook) and h.run_async]
        for hook in background:
            self._start_background(hook, event, data)
        waited = [h for h in hooks if h not in background]
        runs = await asyncio.gather(*(self._run_one(h, event, data, timeout) for h in waited))
        for run in runs:
            if run.detached is not None:  # answered {"async": true}: the rest comes later
                self._detached.add(run.detached)
                self._spawn(self._finish_detached(event, run.detached))
        return Merged([self._interpret(event, run) for run in runs])

    def _selected(self, hook: Hook, event: HookEvent, tool: ToolCall | None) -> bool:
        """`if` is evaluated on tool events only; a `once` hook runs the first time it is
        selected, then never again in this session."""
        if not self._condition_holds(hook, event, tool):
            return False
        if getattr(hook, "once", False):
            if id(hook) in self._fired_once:
                return False
            self._fired_once.add(id(hook))
        return True

    def _condition_holds(self, hook: Hook, event: HookEvent, tool: ToolCall | None) -> bool:
        condition = getattr(hook, "condition", None)
        if condition is None:
            return True
        if tool is None or event not in TOOL_EVENTS:
            return False
        try:
            return bool(condition.matches(tool.name, tool.input, tool.cwd or self.cwd))
        except Exception:  # a filter that cannot decide runs the hook (Claude Code fails open)
            log.exception("hook condition %s failed; running the hook", condition)
            return True

    async def _run_one(
        self, hook: Hook, event: HookEvent, data: Mapping[str, Any], cap: float | None
    ) -> HookRun:
        status = getattr(hook, "status_message", None)
        if status:
            self._status(HookStatus(event.value, hook.label, status, running=True))
        finished = self.observer.hook_started(event, hook) if self.observer else None
        run = HookRun(hook.label, None, error="cancelled")
        try:
            run = await self._dispatch(hook, event, data, cap)
            return run
        finally:
            if finished is not None:
                finished(run)
            if status:
                self._status(HookStatus(event.value, hook.label, status, running=False))

    async def _dispatch(
        self, hook: Hook, event: HookEvent, data: Mapping[str, Any], cap: float | None
    ) -> HookRun:
        if isinstance(hook, CallableHook):
            return await run_callable_hook(hook, data)
        timeout = timeout_of(hook, event)
        timeout = min(timeout, cap) if cap is not None else timeout
        if isinstance(hook, CommandHook):
            env = {**self._env, **hook.env} if hook.env else self._env
            return await run_command_hook(hook, data, cwd=self.cwd, env=env, timeout=timeout)
        if isinstance(hook, HttpHook):
            return await run_http_hook(hook, data, env=self._env, timeout=timeout)
        return await self._run_prompt(hook, event, data, timeout)

    async def _run_prompt(
        self, hook: PromptHook, event: HookEvent, data: Mapping[str, Any], timeout: float
    ) -> HookRun:
        try:
            return await asyncio.wait_for(
                run_prompt_hook(hook, data, event, self.ask_model), timeout
            )
        except TimeoutError:
            return HookRun(hook.label, None, error=f"timed out after {timeout:g}s")
        except Exception as exc:  # a provider error must not break the event
            return HookRun(hook.label, None, error=f"the model call failed: {exc}")

    def _interpret(self, event: HookEvent, run: HookRun) -> Verdict:
        verdict, warnings = interpret(event, run)
        verdict.label = run.label
        for message in warnings:
            self.warn(event, run.label, message)
        return verdict

    # -- background (`async`) hooks --------------------------------------------------------

    def _start_background(
        self, hook: CommandHook, event: HookEvent, data: Mapping[str, Any]
    ) -> None:
        """A hook marked `async` in its settings: it runs beside the event, not before it."""

        async def run() -> None:
            result = await self._run_one(hook, event, data, None)
            if result.detached is not None:
                self._detached.add(result.detached)
                await self._finish_detached(event, result.detached)
            else:
                self._deliver_late(event, result)

        self._spawn(run())

    async def _finish_detached(self, event: HookEvent, detached: Detached) -> None:
        try:
            self._deliver_late(event, await detached.finish())
        finally:
            self._detached.discard(detached)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _deliver_late(self, event: HookEvent, run: HookRun) -> None:
        """A background hook ended: its `systemMessage` and `additionalContext` go to the
        model on the next turn, shown to nobody (Claude Code's rule); its decisions come
        too late to matter. That it could not run, or was killed, is a warning."""
        if run.error is not None:
            self.warn(event, run.label, run.error)
            return
        answer = run.output if run.output is not None else late_answer(run.stdout)
        context = late_context(answer)
        if context:
            self._async_context.append(context)
        elif not answer and run.exit_code not in (0, None):
            detail = run.stderr.strip() or run.stdout.strip() or "no output"
            log.warning("background %s hook %r exited %s: %s", event.value, run.label,
                        run.exit_code, detail[:500])  # fmt: skip

    def take_async_context(self) -> str | None:
        """Context from background hooks that finished since the last call (for the next turn)."""
        if not self._async_context:
            return None
        text, self._async_context = "\n".join(self._async_context), []
        return text

    async def aclose(self) -> None:
        """Cancel background hooks still running and kill their processes (the session
        ends; Claude Code's -p does the same at teardown, outcome `cancelled`)."""
        tasks = list(self._background)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for detached in list(self._detached):  # a task cancelled before it began
            await detached.stop()
        self._detached.clear()

    # -- reporting --------------------------------------------------------------------------

    def _status(self, status: HookStatus) -> None:
        if self.on_status is None:
            return
        try:
            self.on_status(status)
        except Exception:  # a UI callback must not break the hook path
            log.exception("on_status callback failed")

    def warn(self, event: HookEvent, label: str, message: str) -> None:
        """Report a hook's problem to the user (kept, logged, passed to `on_warning`)."""
        warning = HookWarning(event.value, label, message)
        self.warnings.append(warning)
        log.info("%s hook %r %s", event.value, label, message)  # the user sees `on_warning`
        if self.on_warning is not None:
            try:
                self.on_warning(warning)
            except Exception:  # a UI callback must not break the hook path
                log.exception("on_warning callback failed")


def joined(parts: Sequence[str]) -> str:
    """Messages of several hooks, one per line."""
    return "\n".join(p for p in parts if p)
