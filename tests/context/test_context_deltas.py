"""Delta attachments: additions, removals, no change, and a full announcement after compaction."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from queryloop.context import (
    AttachmentContext,
    AttachmentType,
    agent_listing_delta,
    deferred_tools_delta,
    mcp_instructions_delta,
)
from queryloop.messages import (
    Attachment,
    AttachmentMessage,
    Message,
    compact_boundary,
    user_message,
)
from queryloop.messages.attachments import RenderContext, render_attachment


def ctx(tmp_path: Path, **kw: object) -> AttachmentContext:
    return AttachmentContext(cwd=tmp_path, **kw)  # type: ignore[arg-type]


def record(history: list[Message], attachments: Sequence[Attachment]) -> None:
    history.extend(AttachmentMessage(attachment=a, is_meta=True) for a in attachments)


def rendered(a: Attachment) -> str:
    out = render_attachment(AttachmentMessage(attachment=a), RenderContext())
    assert out is not None and out.text is not None
    return out.text


async def test_deferred_tools_added_removed_unchanged_and_after_compaction(tmp_path: Path) -> None:
    history: list[Message] = [user_message("hi")]
    [first] = await deferred_tools_delta(ctx(tmp_path, deferred_tools=["b", "a"]), history)
    assert first.data == {"added_names": ["a", "b"], "removed_names": [], "is_initial": True}
    assert rendered(first).startswith(
        "<system-reminder>\nThe following deferred tools are available"
    )
    record(history, [first])

    assert await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a", "b"]), history) == []

    [second] = await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a", "c"]), history)
    assert second.data == {"added_names": ["c"], "removed_names": ["b"], "is_initial": False}
    text = rendered(second)
    assert "now also available" in text and "no longer available" in text
    record(history, [second])
    assert await deferred_tools_delta(ctx(tmp_path, deferred_tools=["c", "a"]), history) == []

    # Compaction replaced the history: the old deltas are gone, so announce everything again.
    compacted: list[Message] = [compact_boundary("auto", 1000), user_message("summary")]
    [again] = await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a", "c"]), compacted)
    assert again.data == {"added_names": ["a", "c"], "removed_names": [], "is_initial": True}


async def test_removing_everything_then_readding_is_initial(tmp_path: Path) -> None:
    history: list[Message] = []
    record(history, await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a"]), history))
    [gone] = await deferred_tools_delta(ctx(tmp_path), history)
    assert gone.data["removed_names"] == ["a"]
    record(history, [gone])
    [back] = await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a"]), history)
    assert back.data["is_initial"] is True


async def test_mcp_instructions_delta(tmp_path: Path) -> None:
    history: list[Message] = []
    servers = {"github": "Use issues.", "empty": "  "}
    [first] = await mcp_instructions_delta(ctx(tmp_path, mcp_instructions=servers), history)
    assert first.data["added_names"] == ["github"]
    assert first.data["added_blocks"] == ["## github\nUse issues."]
    assert "# MCP Server Instructions" in rendered(first)
    record(history, [first])
    servers2 = {"github": "Use issues.", "slack": "Be brief."}
    [second] = await mcp_instructions_delta(ctx(tmp_path, mcp_instructions=servers2), history)
    assert second.data["added_names"] == ["slack"] and second.data["is_initial"] is False
    record(history, [second])
    [third] = await mcp_instructions_delta(ctx(tmp_path, mcp_instructions={}), history)
    assert third.data["removed_names"] == ["github", "slack"]
    assert "disconnected" in rendered(third)


async def test_agent_listing_delta(tmp_path: Path) -> None:
    history: list[Message] = []
    agents = {"explore": "Searches the codebase", "plan": ""}
    [first] = await agent_listing_delta(ctx(tmp_path, agent_types=agents), history)
    assert first.data["added_lines"] == ["- explore: Searches the codebase", "- plan"]
    assert "Available agent types" in rendered(first)
    record(history, [first])
    assert await agent_listing_delta(ctx(tmp_path, agent_types=agents), history) == []
    [second] = await agent_listing_delta(ctx(tmp_path, agent_types={"plan": ""}), history)
    assert second.data["removed_types"] == ["explore"] and second.data["added_types"] == []


async def test_deltas_of_other_types_do_not_count(tmp_path: Path) -> None:
    history: list[Message] = []
    record(history, [Attachment(AttachmentType.AGENT_LISTING_DELTA, {"added_types": ["a"]})])
    [d] = await deferred_tools_delta(ctx(tmp_path, deferred_tools=["a"]), history)
    assert d.data["is_initial"] is True
