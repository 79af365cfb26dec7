"""The whole agent on an OpenAI-compatible server (as with Ollama, vLLM or llama.cpp):
tool calls and results cross the translation both ways, over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from queryloop import Agent
from queryloop.loop import Terminal
from queryloop.testing import MessagesServer, text, tool_use, turn


async def test_local_model_runs_tools_through_the_openai_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    script = [
        turn(text("Reading."), tool_use("Read", {"file_path": "notes.txt"})),
        turn(text("The notes say alpha and beta.")),
    ]
    with MessagesServer(script) as server:
        agent = Agent("ollama:qwen2.5", base_url=server.base_url + "/v1", cwd=tmp_path)
        result = await agent.run("What do the notes say?")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert result.text == "The notes say alpha and beta."
    assert result.cost_usd == 0.0  # a local model has no list price
    paths = [r.path for r in server.recorded]
    assert paths == ["/v1/chat/completions", "/v1/chat/completions"]
    second = server.requests[1]
    assert second["model"] == "qwen2.5"
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "alpha" in str(tool_messages[0]["content"])
    assert "cache_control" not in str(second)
