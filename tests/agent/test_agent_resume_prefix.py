"""A resumed session's first request starts with every byte of the last request before the
resume, also after a compaction (docs/context.md, "Session facts")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_helpers import local_agent

from queryloop import Agent
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn, without_cache_control


def model(body: dict[str, Any]) -> Turn:
    last = json.dumps(body["messages"][-1])
    if "summary" in last.lower() and "detailed summary" in last:
        return turn(text("<summary>We listed the folder twice and read notes.txt.</summary>"))
    if "tool_result" in last:
        return turn(text("Done."))
    return turn(tool_use("Read", {"file_path": "notes.txt"}))


async def test_a_compacted_session_resumes_onto_the_prefix_it_last_sent(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n" * 200)
    with MessagesServer(model) as server:
        async with local_agent(server, tmp_path, permission_mode="bypassPermissions") as agent:
            for prompt in ("read the notes", "read them again", "once more"):
                await agent.run(prompt)
            assert await agent.compact() is not None
            await agent.run("and again after the summary")
            session = agent.session_id
        before = server.requests[-1]
        resumed = Agent.resume(
            session,
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            permission_mode="bypassPermissions",
        )
        async with resumed:
            await resumed.run("and after the resume")
        after = server.requests[len(server.requests) - 2]  # the resumed prompt's Read call
        assert all(v == [] for v in server.violations)
    assert after["tools"] == before["tools"] and after["system"] == before["system"]
    sent = without_cache_control(before["messages"])
    assert "We listed the folder" in json.dumps(sent)  # the compacted history
    assert without_cache_control(after["messages"])[: len(sent)] == sent
