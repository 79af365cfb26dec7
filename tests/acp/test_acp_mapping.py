"""The pure mappings of `queryloop acp`: how a prompt's end becomes a stop reason, how tool
calls are shown, how a prompt's content blocks become text, which file access the client's
capabilities give."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from acp.interfaces import Client
from acp.schema import (
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    FileSystemCapabilities,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from queryloop.acp.files import EditorFiles, editor_files
from queryloop.acp.tool_calls import tool_info
from queryloop.acp.updates import PromptBlock, prompt_text, stop_reason
from queryloop.loop.events import TerminalEvent
from queryloop.loop.reasons import Terminal
from queryloop.messages.blocks import TextBlock
from queryloop.messages.types import AssistantMessage


@pytest.mark.parametrize(
    ("reason", "model_stop", "expected"),
    [
        (Terminal.COMPLETED, "end_turn", "end_turn"),
        (Terminal.COMPLETED, "refusal", "refusal"),
        (Terminal.COMPLETED, "max_tokens", "max_tokens"),
        (Terminal.MAX_TURNS, "tool_use", "max_turn_requests"),
        (Terminal.ABORTED_STREAMING, None, "cancelled"),
        (Terminal.ABORTED_TOOLS, "tool_use", "cancelled"),
        (Terminal.PROMPT_TOO_LONG, None, "max_tokens"),
        (Terminal.HOOK_STOPPED, None, "end_turn"),
        (Terminal.MODEL_ERROR, None, None),
    ],
)
def test_each_end_of_a_prompt_has_its_stop_reason(
    reason: Terminal, model_stop: str | None, expected: str | None
) -> None:
    last = AssistantMessage(content=(TextBlock("…"),), stop_reason=model_stop)
    assert stop_reason(TerminalEvent(reason, turn=1), [last]) == expected


def test_tool_calls_have_their_kind_title_and_diff(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("before\n")

    edit = tool_info("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, tmp_path)
    write = tool_info("Write", {"file_path": "old.txt", "content": "after\n"}, tmp_path)
    bash = tool_info("Bash", {"command": "pytest -q", "description": "Run the tests"}, tmp_path)

    assert (edit.kind, write.kind, bash.kind) == ("edit", "edit", "execute")
    assert isinstance(edit.content[0], FileEditToolCallContent)
    assert (edit.content[0].path, edit.content[0].old_text) == (str(tmp_path / "a.py"), "x")
    assert isinstance(write.content[0], FileEditToolCallContent)
    assert (write.content[0].old_text, write.content[0].new_text) == ("before\n", "after\n")
    assert bash.title == "`pytest -q`"
    assert [loc.path for loc in edit.locations] == [str(tmp_path / "a.py")]
    assert tool_info("Grep", {"pattern": "TODO"}, tmp_path).kind == "search"
    assert tool_info("mcp__db__query", {"sql": "select 1"}, tmp_path).kind == "other"


def test_a_prompt_of_blocks_becomes_one_text() -> None:
    blocks: list[PromptBlock] = [
        TextContentBlock(type="text", text="Explain"),
        ResourceContentBlock(type="resource_link", name="a.py", uri="file:///p/a.py"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///p/b.py", text="print(1)"),
        ),
    ]
    assert prompt_text(blocks) == (
        'Explain\n@/p/a.py\n<context ref="file:///p/b.py">\nprint(1)\n</context>'
    )


@pytest.mark.parametrize(
    ("reads", "writes"), [(True, True), (True, False), (False, True), (False, False)]
)
def test_the_client_file_system_is_used_for_the_directions_it_offers(
    reads: bool, writes: bool
) -> None:
    fs = FileSystemCapabilities(read_text_file=reads, write_text_file=writes)
    client = cast(Client, object())  # never called: only the choice is tested here
    access = editor_files(client, ClientCapabilities(fs=fs), lambda: "s")
    if reads or writes:
        assert isinstance(access, EditorFiles)
        assert (access.reads, access.writes) == (reads, writes)
    else:
        assert access is None  # the disk, as in the terminal
    assert editor_files(client, None, lambda: "s") is None
