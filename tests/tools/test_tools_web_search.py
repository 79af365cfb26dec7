"""WebSearch through the real Agent and `queryloop.testing`, Claude Code's way: a side request
whose only tool is the server's web search, its server-tool blocks streamed, normalized and
sent back (a paused turn) under the strict server, its searches in the cost; on an
OpenAI-compatible provider WebSearch is not offered and what names it gets a notice."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agent_support import MODEL, agent_on
from queryloop import Agent
from queryloop.loop import Terminal
from queryloop.providers.models import WEB_SEARCH_PRICE_USD, cost_usd
from queryloop.testing import MessagesServer, cited_text, hit, text, tool_use, turn, web_search

PYTHON = hit("https://www.python.org/downloads/", "Download Python", page_age="2 days ago")
NEWS = hit("https://docs.python.org/3/whatsnew/", "What's New In Python")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or []]


async def test_a_search_runs_as_a_side_request_with_the_server_tool_and_is_billed(
    tmp_path: Path, home: Path
) -> None:
    script = [
        turn(tool_use("WebSearch", {"query": "latest python", "blocked_domains": ["x.com"]})),
        # The side request: one search, then the server pauses the turn...
        turn(*web_search("latest python", [PYTHON, NEWS]), stop_reason="pause_turn"),
        # ...and goes on when the paused turn is sent back: a second search and the answer.
        turn(*web_search("python 3.14 release date", []), cited_text("3.14 is out.", PYTHON)),
        turn(text("Python 3.14 is the latest.")),
    ]
    with MessagesServer(script, strict=True) as server:
        agent = agent_on(server, tmp_path, home, allowed_tools=["WebSearch"])
        result = await agent.run("What is the latest Python?")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED, result.detail
    assert all(not r.violations for r in server.recorded)  # strict: every request was valid
    main, first, second, last = server.requests
    assert "WebSearch" in tool_names(main) and tool_names(main) == tool_names(last)
    assert first["model"] == MODEL
    assert first["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "blocked_domains": ["x.com"],
        }
    ]
    assert first["messages"][0]["content"][0]["text"] == (
        "Perform a web search for the query: latest python"
    )
    # The paused turn goes back exactly as it came: the call, the hits with their encrypted
    # content, and nothing after it (no "Continue." for a model without prefill).
    assert second["messages"][-1]["role"] == "assistant"
    call, found = second["messages"][-1]["content"]
    assert call["type"] == "server_tool_use" and call["input"] == {"query": "latest python"}
    assert found["type"] == "web_search_tool_result" and found["tool_use_id"] == call["id"]
    assert found["content"][0]["encrypted_content"] == PYTHON["encrypted_content"]
    assert found["content"][0]["page_age"] == "2 days ago"
    said = next(b["content"] for b in last["messages"][-1]["content"] if b["type"] == "tool_result")
    assert 'Web search results for query: "latest python"' in said
    assert '{"title": "Download Python", "url": "https://www.python.org/downloads/"}' in said
    assert "No links found." in said and "3.14 is out." in said
    assert said.index("Download Python") < said.index("No links found.") < said.index("3.14")
    # Two searches at $10 per 1,000, on top of the tokens of all four requests.
    assert result.usage.web_search_requests == 2 and result.requests == 4
    tokens_only = dataclasses.replace(result.usage, web_search_requests=0)
    expected = cost_usd(tokens_only, MODEL) + 2 * WEB_SEARCH_PRICE_USD
    assert result.cost_usd == pytest.approx(expected)


async def test_a_failed_search_is_an_error_result(tmp_path: Path, home: Path) -> None:
    script = [
        turn(tool_use("WebSearch", {"query": "anything"})),
        turn(*web_search("anything", error_code="too_many_requests")),
        turn(text("The search failed.")),
    ]
    with MessagesServer(script, strict=True) as server:
        agent = agent_on(server, tmp_path, home, allowed_tools=["WebSearch"])
        await agent.run("Search.")
        await agent.aclose()
    result = next(b for b in server.requests[2]["messages"][-1]["content"])
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "too_many_requests" in str(result["content"])


async def test_an_agent_file_with_tools_websearch_gets_the_tool(tmp_path: Path, home: Path) -> None:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Looks things up\ntools: WebSearch, Telepathy\n"
        "---\nSearch the web.\n"
    )
    call = {"subagent_type": "researcher", "description": "look up", "prompt": "Find it."}
    script = [turn(tool_use("Agent", call)), turn(text("Found nothing.")), turn(text("Done."))]
    with MessagesServer(script) as server:
        agent = agent_on(server, tmp_path, home, permission_mode="bypassPermissions", trust=True)
        await agent.run("Research.")
        notices = agent.notices
        await agent.aclose()
    assert tool_names(server.requests[1]) == ["WebSearch"]
    telepathy = [n for n in notices if "Telepathy" in n]
    assert len(telepathy) == 1 and "researcher" in telepathy[0] and "WebSearch" not in telepathy[0]


async def test_openai_compatible_offers_no_websearch_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Looks things up\ntools: WebSearch, Read\n---\nGo.\n"
    )
    with MessagesServer([turn(text("Hi.")), turn(text("Hi again."))]) as server:
        agent = Agent(
            "ollama:qwen2.5", base_url=server.base_url + "/v1", cwd=tmp_path,
            allowed_tools=["WebSearch", "Read"], trust=True,
        )  # fmt: skip
        await agent.run("Hello.")
        await agent.run("Hello again.")
        notices = agent.notices
        await agent.aclose()
    offered = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert "WebSearch" not in offered and "WebFetch" in offered
    about = [n for n in notices if "WebSearch" in n]
    assert len(about) == 2, notices  # the rule, and the agent file: each once
    assert any("rule" in n and "OpenAI-compatible" in n for n in about)
    assert any("researcher" in n and "OpenAI-compatible" in n for n in about)
