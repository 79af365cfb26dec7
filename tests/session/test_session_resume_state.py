"""Resume keeps what the session knew (issue 25, item 13): the files the agent has seen, the
refusal of a call re-run on resume, a subagent's refusals, a compaction's tail once per uuid.

Real parts: the Agent, the official SDK against the local Messages API server, the real
Write/Read/Bash tools and permission rules, real transcripts on disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.compact.restore import preserved_tail
from queryloop.messages import AssistantMessage, UserMessage, assistant_message, user_message
from queryloop.messages.blocks import TextBlock, ToolUseBlock
from queryloop.providers.retry import RetryPolicy
from queryloop.session import Transcript, latest_session, load_transcript, session_path
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

MODEL = "claude-sonnet-4-6"


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _options(server: MessagesServer, tmp_path: Path, project: Path, **extra: Any) -> dict[str, Any]:
    return {
        "base_url": server.base_url,
        "retry": RetryPolicy(max_retries=1, base_delay=0.01),
        "cwd": project,
        "home": tmp_path / "home",
        "permission_mode": "bypassPermissions",
        **extra,
    }


def _result_of(body: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    return next(r for r in tool_results(body) if r["tool_use_id"] == tool_use_id)


async def _write_once(tmp_path: Path, project: Path) -> Path:
    """A session in which the agent wrote notes.md; returns its transcript."""
    write = tool_use("Write", {"file_path": "notes.md", "content": "v1\n"}, id="toolu_w1")
    with MessagesServer([turn(write), turn(text("Written."))]) as server:
        agent = Agent(MODEL, **_options(server, tmp_path, project))
        await agent.run("write the notes")
        await agent.aclose()
    path = latest_session(project, tmp_path / "home")
    assert path is not None and (project / "notes.md").read_text() == "v1\n"
    return path


async def test_after_continue_the_agent_may_write_the_file_it_wrote(
    tmp_path: Path, project: Path
) -> None:
    path = await _write_once(tmp_path, project)
    again = tool_use("Write", {"file_path": "notes.md", "content": "v2\n"}, id="toolu_w2")
    with MessagesServer([turn(again), turn(text("Updated."))]) as server:
        agent = Agent.resume(path, MODEL, **_options(server, tmp_path, project))
        await agent.run("update the notes")
        await agent.aclose()
        body = server.requests[-1]
    written = _result_of(body, "toolu_w2")
    assert not written.get("is_error"), written
    assert (project / "notes.md").read_text() == "v2\n"


async def test_a_restored_file_that_then_changes_is_announced_as_a_diff(
    tmp_path: Path, project: Path
) -> None:
    """The restored entry carries the file's text (its snapshot), as a live session's does
    once a change was announced: the change after the resume comes as a diff."""
    path = await _write_once(tmp_path, project)
    with MessagesServer([turn(text("I see the new line."))]) as server:
        agent = Agent.resume(path, MODEL, **_options(server, tmp_path, project))
        await agent.start()
        (project / "notes.md").write_text("v1\nand a line the user added\n")
        await agent.run("anything new?")
        await agent.aclose()
        body = server.requests[-1]
    assert "+and a line the user added" in json.dumps(body["messages"])


async def test_a_file_changed_on_disk_since_is_not_restored(tmp_path: Path, project: Path) -> None:
    path = await _write_once(tmp_path, project)
    (project / "notes.md").write_text("changed by the user\n")
    stat = (project / "notes.md").stat()
    os.utime(project / "notes.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    again = tool_use("Write", {"file_path": "notes.md", "content": "v2\n"}, id="toolu_w2")
    with MessagesServer([turn(again), turn(text("Hm."))]) as server:
        agent = Agent.resume(path, MODEL, **_options(server, tmp_path, project))
        await agent.run("update the notes")
        await agent.aclose()
        body = server.requests[-1]
    refused = _result_of(body, "toolu_w2")
    assert refused["is_error"] and "has not been read yet" in json.dumps(refused)
    assert (project / "notes.md").read_text() == "changed by the user\n"


async def test_a_call_refused_when_rerun_on_resume_keeps_its_denial(
    tmp_path: Path, project: Path
) -> None:
    (project / "secret.txt").write_text("hunter2\n")
    path = session_path("killed", project, tmp_path / "home")
    read = ToolUseBlock("toolu_read", "Read", {"file_path": "secret.txt"})
    with Transcript(path, "killed") as writer:  # as kill -9 leaves it: the call, no result
        writer.append(user_message("read the secret"))
        writer.append(assistant_message([TextBlock("Reading."), read]))
    with MessagesServer([turn(text("I may not read it."))]) as server:
        options = _options(server, tmp_path, project, disallowed_tools=["Read(./secret.txt)"])
        agent = Agent.resume(path, MODEL, **options)
        result = await agent.run("go on")
        await agent.aclose()
    assert [d.tool_use_id for d in result.denials] == ["toolu_read"]
    reloaded = load_transcript(path)
    denied = [m for m in reloaded.messages if getattr(m, "subtype", None) == "permission_denied"]
    assert len(denied) == 1


async def test_a_subagents_refusals_are_in_the_parents_denials(
    tmp_path: Path, project: Path
) -> None:
    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(tool_use("Agent", {"description": "clean", "prompt": "CHILD: clean up"}))
        return turn(text("The helper could not clean up."))

    def child(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(tool_use("Bash", {"command": "rm -rf build"}, id="toolu_child_rm"))
        return turn(text("I was not allowed to."))

    def route(body: dict[str, Any]) -> Turn:
        return child(body) if "CHILD" in json.dumps(body["messages"][0]) else parent(body)

    with MessagesServer(route) as server:
        agent = Agent(MODEL, disallowed_tools=["Bash(rm:*)"], **_options(server, tmp_path, project))
        result = await agent.run("clean up")
        await agent.aclose()
    assert [d.tool_use_id for d in result.denials] == ["toolu_child_rm"]
    assert result.denials[0].tool_name == "Bash" and result.denials[0].rule == "Bash(rm:*)"


def test_the_kept_tail_holds_each_message_once() -> None:
    prompt = user_message("go")
    reply = assistant_message("one", message_id="m1")
    again = user_message("and?")
    last = assistant_message("two", message_id="m2")
    tail = preserved_tail([prompt, reply, again, last, again, last], budget_tokens=10_000)
    texts = [str(m.content) for m in tail if isinstance(m, UserMessage | AssistantMessage)]
    assert len(texts) == len(tail)
    assert len(tail) == len({m.uuid for m in tail})
    assert texts.count(str(again.content)) == 1 and texts.count(str(last.content)) == 1
