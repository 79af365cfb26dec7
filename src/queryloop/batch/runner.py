"""Run one task to its end, resuming its session when a previous attempt did not finish.

The transcript is the source of truth, in the session store the options choose (the
`session_store` option, `QUERYLOOP_SESSION_STORE`, the settings; a database shared by the
workers lets a task killed on one node resume on another). Before running, the task's
session transcript (if any) is read: when it already holds the task's prompt followed by a
`terminal` record, the task finished (the process died before the result was written) and
its result is rebuilt from the transcript without a model call; when it holds the prompt but
no terminal after it, or an interrupt's terminal (`aborted_streaming`, `aborted_tools`:
Ctrl-C stopped the batch), the session is resumed (repair answers any interrupted tool call)
and told to continue; otherwise the prompt runs. So running a task twice, or after a kill at
any moment, is idempotent.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.session_store import open_configured_store
from ..loop.reasons import Terminal
from ..messages.usage import Usage
from ..session.store import project_key, queryloop_home
from ..session.store_api import SessionStore
from ..session.stores import TranscriptRef, as_ref, close_store
from ..session.timing import TimingEvent
from ..session.transcript import TIMING_RECORD
from .tasks import BatchResult, BatchTask

RESUME_PROMPT = (
    "The session was interrupted before the task finished (its worker stopped or the batch "
    "was interrupted). Continue the task from where you left off."
)
INTERRUPTED = frozenset({Terminal.ABORTED_STREAMING.value, Terminal.ABORTED_TOOLS.value})
"""Terminals that are not an end: in a batch only an interrupt (Ctrl-C, a cancelled run)
aborts a task, and the task resumes on the next run."""
PREPARED_DIR = "batch-prepared"


@dataclass
class SessionState:
    """What a task's transcript says about it."""

    exists: bool = False
    prompt_seen: bool = False
    terminal: str | None = None
    detail: str = ""
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0
    attempts: int = 0

    @property
    def finished(self) -> bool:
        """The prompt ran and its loop ended (any terminal but an interrupt's)."""
        return self.prompt_seen and self.terminal is not None and self.terminal not in INTERRUPTED


def inspect_session(transcript: TranscriptRef | Path, prompt: str) -> SessionState:
    """Read a task's transcript, in its store or a `.jsonl` file (tolerantly: a cut last
    line is skipped)."""
    state = SessionState()
    if isinstance(transcript, Path) and not transcript.is_file():
        return state
    ref = as_ref(transcript)
    records = ref.store.load(ref.key)
    if records is None:
        return state
    state.exists = True
    for record in records:
        if isinstance(record, dict):
            _feed(state, record, prompt)
    return state


def _feed(state: SessionState, record: dict[str, Any], prompt: str) -> None:
    kind = record.get("record")
    if kind == "message":
        message = record.get("message") or {}
        content = message.get("content")
        if message.get("type") == "user" and not message.get("is_meta"):
            text = _text(content)
            if text in (prompt, RESUME_PROMPT):
                state.attempts += 1
                state.terminal = None  # a new run of the task began
                if text == prompt:
                    state.prompt_seen = True
        elif message.get("type") == "assistant" and state.prompt_seen:
            text = _text(content)
            state.text = text if message.get("stop_reason") or text else state.text
    elif kind == "usage":
        state.usage = state.usage + Usage.from_dict(record.get("usage"))
        state.cost_usd += float(record.get("cost_usd") or 0.0)
        state.turns += int(_is_turn(record))
    elif kind == TIMING_RECORD and record.get("event") == TimingEvent.TERMINAL:
        if state.prompt_seen:
            state.terminal = str(record.get("reason"))
            state.detail = str(record.get("detail") or "")
    elif kind == "result" and state.prompt_seen and record.get("terminal"):
        state.terminal = str(record["terminal"])  # the prompt's end, as the Session wrote it


def _is_turn(usage_record: dict[str, Any]) -> bool:
    """A turn of the loop (not a compaction summary, side call or interrupted attempt)."""
    return usage_record.get("kind", "main") == "main" and not usage_record.get("purpose")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def prepare_folder(task: BatchTask, cwd: Path, home: Path) -> None:
    """Create the task's working folder and copy `copy_from` into it, once per session
    (a marker under QUERYLOOP_HOME, not in the folder, says it was done)."""
    cwd.mkdir(parents=True, exist_ok=True)
    if task.copy_from is None:
        return
    marker = home / PREPARED_DIR / f"{task.session or task.id}.done"
    if marker.exists():
        return
    source = Path(task.copy_from)
    if not source.is_dir():
        raise FileNotFoundError(f"task {task.id!r}: copy_from {source} is not a folder")
    shutil.copytree(source, cwd, dirs_exist_ok=True)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(cwd), encoding="utf-8")


def task_paths(task: BatchTask, agent_options: Mapping[str, Any]) -> tuple[Path, Path]:
    """(working folder, QUERYLOOP_HOME) of a task."""
    options = {**agent_options, **task.options}
    cwd = Path(task.cwd or options.get("cwd") or Path.cwd()).expanduser().resolve()
    return cwd, queryloop_home(options.get("home"))


async def run_task(task: BatchTask, agent_options: Mapping[str, Any]) -> BatchResult:
    """Run (or resume, or recover the result of) one task; exceptions become an errored
    result. `result.error` starting with "retryable:" marks a transient failure."""
    started = time.monotonic()
    cwd, home = task_paths(task, agent_options)
    store: SessionStore | None = None
    opened = False
    try:
        prepare_folder(task, cwd, home)
        options = {**agent_options, **task.options}
        store, opened = open_configured_store(
            options.get("session_store"), cwd, home, trust=options.get("trust")
        )
        ref = TranscriptRef.of(store, project_key(cwd), task.session) if task.session else None
        state = inspect_session(ref, task.prompt) if ref is not None else SessionState()
        if state.finished:
            return _from_state(task, state, time.monotonic() - started)
        existing = ref if state.exists else None
        return await _run(task, agent_options, cwd, store, existing, state, started)
    except Exception as exc:  # one task's failure must not end the batch
        return BatchResult(
            task_id=task.id,
            terminal="error",
            session_id=task.session or "",
            duration_s=time.monotonic() - started,
            error=f"{type(exc).__name__}: {exc}",
        )

    finally:
        if store is not None and opened:
            close_store(store)


async def _run(
    task: BatchTask,
    agent_options: Mapping[str, Any],
    cwd: Path,
    store: SessionStore,
    existing: TranscriptRef | None,
    state: SessionState,
    started: float,
) -> BatchResult:
    from ..agent import Agent

    options = {**agent_options, **task.options, "cwd": cwd, "session_store": store}
    model = options.pop("model", None)
    if existing is not None:
        agent = Agent.resume(existing.session_id, model, **options)
    else:
        agent = Agent(model, session_id=task.session, **options)
    prompt = RESUME_PROMPT if state.prompt_seen else task.prompt
    try:
        result = await agent.run(prompt)
        error = agent.last_terminal.error if agent.last_terminal is not None else None
    finally:
        await agent.aclose()
    after = inspect_session(
        TranscriptRef.of(store, project_key(cwd), result.session_id), task.prompt
    )
    return BatchResult(
        task_id=task.id,
        terminal=result.terminal.value,
        text=result.text,
        session_id=result.session_id,
        turns=after.turns or result.turns,
        cost_usd=after.cost_usd or result.cost_usd,
        usage=(after.usage if after.turns else result.usage).to_dict(),
        duration_s=time.monotonic() - started,
        error=_retryable(error),
        attempts=max(1, after.attempts),
    )


def _retryable(error: BaseException | None) -> str | None:
    """`retryable: ...` for a transient provider failure (Ray retries the task)."""
    if error is None or not getattr(error, "retryable", False):
        return None
    return f"retryable: {type(error).__name__}: {error}"


def _from_state(task: BatchTask, state: SessionState, duration: float) -> BatchResult:
    return BatchResult(
        task_id=task.id,
        terminal=state.terminal or "error",
        text=state.text,
        session_id=task.session or "",
        turns=state.turns,
        cost_usd=state.cost_usd,
        usage=state.usage.to_dict(),
        duration_s=duration,
        attempts=max(1, state.attempts),
    )
