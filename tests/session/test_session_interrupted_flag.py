"""Resume finds an interrupted call by the `interrupted` flag a transcript keeps, and still
finds the ones transcripts of earlier versions marked only by their text."""

from __future__ import annotations

import json
from pathlib import Path

from queryloop.agents.wiring import _interrupted_agent_calls
from queryloop.loop.resume import MAY_HAVE_RUN, resume_interrupted_calls
from queryloop.messages import (
    Interruption,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    assistant_message,
    interrupted_result_message,
    tool_result_message,
    user_message,
)
from queryloop.session import Transcript, load_transcript
from queryloop.tools import builtin_tools
from queryloop.tools.base import ToolContext

READ = ToolUseBlock("toolu_read", "Read", {"file_path": "a.txt"})
BASH = ToolUseBlock("toolu_bash", "Bash", {"command": "touch b.txt"})


def _results(messages: list[Message]) -> dict[str, ToolResultBlock]:
    return {
        b.tool_use_id: b
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }


def _write(path: Path, messages: list[Message]) -> None:
    with Transcript(path) as writer:
        for message in messages:
            writer.append(message)


async def _resume(messages: list[Message], cwd: Path) -> dict[str, ToolResultBlock]:
    resumed = await resume_interrupted_calls(messages, builtin_tools(), ToolContext(cwd=cwd))
    return _results(resumed.messages)


async def test_a_killed_session_is_repaired_with_the_flag_and_redone(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    path = tmp_path / "s.jsonl"
    _write(path, [user_message("go"), assistant_message([READ, BASH], stop_reason="tool_use")])
    loaded = load_transcript(path)
    assert {b.interrupted for b in _results(loaded.messages).values()} == {Interruption.RESUMED}
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    assert stored[-1]["repair"] and stored[-1]["message"]["content"][0]["interrupted"] == "resumed"
    again = load_transcript(path)  # the flag read back from the file, not from the text
    assert _results(again.messages) == _results(loaded.messages)
    results = await _resume(again.messages, tmp_path)
    assert "alpha" in str(results["toolu_read"].content)
    assert (
        results["toolu_bash"].content == MAY_HAVE_RUN and results["toolu_bash"].interrupted is None
    )


async def test_old_transcripts_without_the_flag_still_resume(tmp_path: Path) -> None:
    """Each stand-in text an earlier version wrote, read back from a file."""
    (tmp_path / "a.txt").write_text("alpha\n")
    old_texts = [
        "[Tool execution was interrupted; the session was resumed]",
        "Tool call was interrupted by the user before it finished.",
        "Tool call was interrupted before it finished.",
        "[Request interrupted by user for tool use]",
        "Read was interrupted by the user",
    ]
    for index, text in enumerate(old_texts):
        path = tmp_path / f"old{index}.jsonl"
        _write(
            path,
            [
                user_message("go"),
                assistant_message([READ, BASH], stop_reason="tool_use"),
                tool_result_message(READ.id, text, is_error=True),
                tool_result_message(BASH.id, text, is_error=True),
            ],
        )
        assert '"interrupted"' not in path.read_text()  # as an earlier version wrote it
        loaded = load_transcript(path)
        assert all(b.interrupted is not None for b in _results(loaded.messages).values()), text
        results = await _resume(loaded.messages, tmp_path)
        assert "alpha" in str(results[READ.id].content), text
        # Only the loader's stand-in (killed before a result was written) becomes "may or
        # may not have taken effect"; a recorded interruption of a side effect stays true.
        assert results[BASH.id].content == (MAY_HAVE_RUN if index == 0 else text), text


async def test_resume_reads_the_flag_not_the_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    head: list[Message] = [user_message("go"), assistant_message([READ], stop_reason="tool_use")]
    flagged = tool_result_message(
        READ.id, "any words", is_error=True, interrupted=Interruption.ABORTED
    )
    assert "alpha" in str((await _resume([*head, flagged], tmp_path))[READ.id].content)
    # The old words on a result that is not flagged (a tool's own output): left alone.
    plain = tool_result_message(READ.id, Interruption.ABORTED.text(), is_error=True)
    assert (await _resume([*head, plain], tmp_path))[READ.id] == plain.content[0]


def test_interrupted_agent_calls_are_the_loaders_repairs(tmp_path: Path) -> None:
    agent = ToolUseBlock("toolu_agent", "Agent", {"prompt": "p", "description": "d"})
    head: list[Message] = [user_message("go"), assistant_message([agent], stop_reason="tool_use")]
    repaired = interrupted_result_message(agent.id, Interruption.RESUMED, "Agent")
    aborted = interrupted_result_message(agent.id, Interruption.ABORTED, "Agent")
    assert _interrupted_agent_calls([*head, repaired]) == [agent.id]
    assert _interrupted_agent_calls([*head, aborted]) == []  # as before: only a crash repair
    path = tmp_path / "old.jsonl"
    old = tool_result_message(agent.id, Interruption.RESUMED.text(), is_error=True)
    _write(path, [*head, old])
    assert _interrupted_agent_calls(load_transcript(path).messages) == [agent.id]
