"""Print mode (`queryloop -p`): one prompt, headless, output as text, JSON or stream-JSON.

It renders what the Agent reports: loop events as they come (stream-JSON, whose format is
`stream_json`), then the prompt's `RunResult`. It computes no usage, cost or final text of
its own.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from ..loop.events import ApiRetry, StreamDelta
from .exit_codes import ExitCode, exit_code_for
from .render_text import retry_text
from .stream_json import event_record, init_record, result_record

if TYPE_CHECKING:
    from ..agent import Agent, RunResult


class LineWriter:
    """Writes one JSON object per line and flushes, so a pipe reader sees it at once."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, record: Mapping[str, Any]) -> None:
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()


async def run_print(
    agent: Agent[Any],
    prompt: str | None,
    *,
    output_format: str,
    include_partial: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> ExitCode:
    """Run `prompt` on `agent` (None: continue where the session stopped), write the output,
    and return the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    emit = LineWriter(out) if output_format == "stream-json" else None
    await agent.start()
    if emit is not None:
        emit(init_record(agent))
    with _sigint_aborts(agent) as sigint:
        async for event in agent.stream(prompt):
            if emit is None and isinstance(event, ApiRetry):
                err.write(f"queryloop: {retry_text(event)}\n")  # not seconds of silence
                err.flush()
            if emit is None or (isinstance(event, StreamDelta) and not include_partial):
                continue
            record = event_record(event, agent.session_id)
            if record is not None:
                emit(record)
    result = agent.last_result
    assert result is not None  # set when the stream ends
    _write_result(result, sigint.interrupted, output_format, out, err, emit)
    return exit_code_for(result.terminal, interrupted=sigint.interrupted)


def _write_result(
    result: RunResult[Any],
    interrupted: bool,
    output_format: str,
    out: TextIO,
    err: TextIO,
    emit: Callable[[Mapping[str, Any]], None] | None,
) -> None:
    if emit is not None:
        emit(result_record(result, interrupted=interrupted))
        return
    if output_format == "json":
        record = result_record(result, interrupted=interrupted)
        out.write(json.dumps(record, ensure_ascii=False, indent=2) + "\n")
        out.flush()
        return
    if result.text:
        out.write(result.text.rstrip("\n") + "\n")
        out.flush()
    if result.is_error or result.deferred:
        detail = f": {result.detail}" if result.detail else ""
        err.write(f"queryloop: stopped ({result.terminal.value}){detail}\n")
        err.flush()


class _sigint_aborts:
    """While running: the first SIGINT aborts the turn (the loop then ends cleanly and
    the transcript stays consistent); a second exits at once with 130 (every message is
    already on disk)."""

    def __init__(self, agent: Agent[Any]) -> None:
        self.agent = agent
        self.interrupted = False
        self.installed = False

    def _handle(self) -> None:
        if self.interrupted:
            import os

            sys.stderr.write("\nqueryloop: interrupted\n")
            os._exit(ExitCode.INTERRUPTED)
        self.interrupted = True
        sys.stderr.write("\nqueryloop: aborting (Ctrl-C again to quit now)\n")
        self.agent.abort()

    def __enter__(self) -> _sigint_aborts:
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._handle)
            self.installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or no signal support: Ctrl-C raises as usual
        return self

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
