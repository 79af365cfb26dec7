"""Rendering helpers and the Renderer on a recording console."""

from __future__ import annotations

import io

from rich.console import Console

from queryloop.cli.render import Renderer
from queryloop.cli.render_text import (
    cache_hit_share,
    collapse,
    context_bar_parts,
    short_input,
    status_text,
)
from queryloop.cli.stream_json import event_record, jsonable
from queryloop.loop.events import (
    LoopEvent,
    MessageEvent,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from queryloop.loop.reasons import Continue, Terminal
from queryloop.messages import (
    Message,
    ToolUseBlock,
    assistant_message,
    final_text,
    tool_result_message,
    user_message,
)
from queryloop.messages.usage import Usage
from queryloop.providers.base import BlockComplete, TextDelta


def test_short_input_and_collapse() -> None:
    assert short_input("Bash", {"command": "ls   -la\n/tmp", "timeout": 5}) == "ls -la /tmp"
    assert short_input("Read", {"file_path": "a.py", "offset": 3}) == "a.py"
    assert short_input("X", {"a": 1}) == '{"a":1}'
    assert short_input("Bash", {"command": "x" * 100}, width=10) == "x" * 9 + "…"
    shown, hidden = collapse("\n".join(f"l{i}" for i in range(10)), 4)
    assert shown == ["l0", "l1", "l2", "l3"] and hidden == 6
    assert collapse("") == (["(no output)"], 0)


def test_context_bar_has_fixed_width_and_shows_small_parts() -> None:
    ctx = {"system": 3000, "tools": 5000, "memory": 10, "messages": 42000, "free": 150000,
           "window": 200000}  # fmt: skip
    parts = context_bar_parts(ctx, width=40)
    assert [p[0] for p in parts] == ["system", "tools", "memory", "messages", "free"]
    assert sum(cells for _, _, cells in parts) == 40
    assert {n: c for n, _, c in parts}["memory"] == 1  # tiny but visible
    usage = Usage(input_tokens=10, cache_creation_input_tokens=30, cache_read_input_tokens=60)
    assert cache_hit_share(usage) == 0.6
    line = status_text("claude-x", ctx, usage, 0.5)
    assert line == "claude-x · 25% context · 60% cache hits · $0.5000"
    assert "context n/a" in status_text("m", {}, Usage(), 0)


def test_renderer_plain_console_shows_text_tool_call_and_collapsed_result() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=False)
    r = Renderer(console)
    assert not r.animated
    tool = ToolUseBlock(id="t1", name="Bash", input={"command": "seq 10"})
    events: list[LoopEvent] = [
        StreamDelta(TextDelta(0, "Running ")),
        StreamDelta(TextDelta(0, "it.")),
        StreamDelta(BlockComplete(1, tool)),
        MessageEvent(assistant_message([tool])),
        MessageEvent(tool_result_message("t1", "\n".join(str(i) for i in range(10)))),
        TransitionEvent(Continue.NEXT_TURN, 1),
        TerminalEvent(Terminal.ABORTED_TOOLS, 2),
    ]
    for e in events:
        r.handle(e)
    out = buf.getvalue()
    assert "Running it." in out
    assert "⏺ Bash(seq 10)" in out
    assert "⎿ 0" in out and "… 6 more lines" in out
    assert "Interrupted" in out
    assert out.index("Running it.") < out.index("⏺ Bash") < out.index("… 6 more")


def test_stream_json_records_are_json_ready() -> None:
    import json

    tool = ToolUseBlock(id="t1", name="Read", input={"file_path": "a"})
    rec = event_record(StreamDelta(BlockComplete(0, tool)), "s")
    block = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
    event = {"type": "block_complete", "index": 0, "block": block}
    assert rec == {"type": "stream_event", "session_id": "s", "event": event}
    rec = event_record(MessageEvent(user_message("hi")), "s")
    assert rec is not None and rec["type"] == "user" and rec["message"]["content"] == "hi"
    rec = event_record(TransitionEvent(Continue.NEXT_TURN, 2), "s")
    assert rec == {"type": "transition", "session_id": "s", "reason": "next_turn", "turn": 2}
    assert event_record(TerminalEvent(Terminal.COMPLETED, 1), "s") is None
    json.dumps(jsonable(Usage(input_tokens=1)))
    msgs: list[Message] = [user_message("q"), assistant_message("a1"), assistant_message("final")]
    assert final_text(msgs) == "final"
    assert final_text([assistant_message("old"), user_message("new q")]) == ""


def test_subagent_progress_and_task_events_are_shown_and_stream_json_carries_tasks() -> None:
    from queryloop.messages import ProgressMessage
    from queryloop.tasks import TaskEvent, TaskEventKind, TaskStatus, TaskType

    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    renderer = Renderer(console)
    data = {
        "type": "agent_progress",
        "agent_type": "general-purpose",
        "text": "Looking at the parser",
        "tool_uses": [{"name": "Grep", "input": {"pattern": "def parse"}}],
    }
    renderer.handle(MessageEvent(ProgressMessage(tool_use_id="t1", data=data)))
    done = TaskEvent(
        TaskEventKind.FINISHED,
        "b1234567",
        TaskType.SHELL,
        "npm run build",
        TaskStatus.COMPLETED,
        "completed (exit code 0)",
    )
    renderer.handle(done)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "general-purpose: Looking at the parser" in shown
    assert "⏺ Grep(def parse)" in shown
    assert "Background task b1234567 (npm run build) completed (exit code 0)" in shown
    record = event_record(done, "s1")
    assert record is not None and record["type"] == "task_finished"
    assert record["task_id"] == "b1234567" and record["status"] == "completed"


def test_subagents_are_named_by_type_and_description_and_numbered_when_a_name_repeats() -> None:
    from queryloop.cli.subagents import SubagentLabels

    labels = SubagentLabels()
    helper = {"agent_type": "helper", "description": "count  the\nfiles"}
    assert (
        labels.learn({**helper, "agent_id": "a1", "kind": "started"}) == "helper (count the files)"
    )
    assert labels.learn({**helper, "agent_id": "a2"}) == "helper (count the files) #2"
    assert labels.learn({"agent_type": "helper", "agent_id": "a3"}) == "helper"
    assert labels.learn({"agent_type": "helper", "agent_id": "a4"}) == "helper #2"
    assert labels.learn({**helper, "agent_id": "a1", "text": "later"}) == "helper (count the files)"
    assert labels.of("a2") == "helper (count the files) #2"
    assert labels.of("zz") == "subagent zz"


def test_events_wait_while_a_question_is_on_screen_and_are_drawn_after_it() -> None:
    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    renderer = Renderer(console)
    renderer.hold()
    renderer.handle(TerminalEvent(Terminal.MODEL_ERROR, 1, "held back"))
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]
    renderer.release()
    assert "held back" in console.file.getvalue()  # type: ignore[attr-defined]


def test_a_retry_is_a_line_and_the_final_api_error_is_said_once() -> None:
    from queryloop.loop.events import ApiRetry
    from queryloop.messages import SystemSubtype, system_message
    from queryloop.providers.errors import OverloadedError, ProviderConnectionError

    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    renderer = Renderer(console)
    failure = "could not reach the Anthropic API at http://127.0.0.1:9/v1/messages"
    renderer.handle(ApiRetry(2, 4, 1.5, ProviderConnectionError(failure), "m"))
    notice = system_message(SystemSubtype.API_ERROR, failure, level="error")
    renderer.handle(MessageEvent(notice))
    renderer.handle(TerminalEvent(Terminal.MODEL_ERROR, 1, failure))
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "API request failed (could not connect); retrying in 1.5s · attempt 2/4" in shown
    assert shown.count(failure) == 1 and "Stopped (model_error)" in shown
    record = event_record(ApiRetry(1, 4, 0.61, OverloadedError("busy", status=529), "m"), "s")
    assert record == {
        "type": "system",
        "subtype": "api_retry",
        "session_id": "s",
        "attempt": 1,
        "max_retries": 4,
        "retry_delay_ms": 610,
        "error_status": 529,
        "error": "busy",
        "model": "m",
    }
