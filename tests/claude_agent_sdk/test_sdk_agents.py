"""`agents={"name": AgentDefinition(...)}`: subagent types the model starts with the Agent
tool, each with its own prompt, tools and model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    ToolResultBlock,
    UnsupportedOptionError,
    UserMessage,
    query,
)
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

REVIEWER = "You are a code reviewer. Report one finding."


def reviewer_model(body: dict[str, Any]) -> Turn:
    """The subagent (its system prompt is the definition's) reads the file and reports;
    the main agent delegates, then relays the report."""
    system = str(body.get("system", ""))
    last = body["messages"][-1]["content"]
    last_type = last[0]["type"] if isinstance(last, list) else "text"
    if REVIEWER in system:
        if last_type != "tool_result":
            return turn(tool_use("Read", {"file_path": "types.py"}))
        return turn(text("Finding: x is never used."))
    if last_type != "tool_result":
        return turn(
            tool_use(
                "Agent",
                {
                    "description": "Review types.py",
                    "prompt": "Review types.py",
                    "subagent_type": "code-reviewer",
                },
            )
        )
    return turn(text("The reviewer says: x is never used."))


async def test_a_defined_agent_runs_with_its_prompt_tools_and_model(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    (tmp_path / "types.py").write_text("x = 1\n")
    sdk_server.script(reviewer_model)
    options = ClaudeAgentOptions(
        agents={
            "code-reviewer": AgentDefinition(
                description="Reviews code for bugs and style",
                prompt=REVIEWER,
                tools=["Read", "Grep"],
                model="haiku",
            )
        },
    )

    messages = [m async for m in query(prompt="Use the code-reviewer agent", options=options)]

    main_tools = [t["name"] for t in sdk_server.requests[0]["tools"]]
    assert "Agent" in main_tools
    assert "code-reviewer" in str(sdk_server.requests[0])  # the type is listed for the model
    sub = [b for b in sdk_server.requests if REVIEWER in str(b.get("system", ""))]
    assert sub and {t["name"] for t in sub[0]["tools"]} == {"Read", "Grep"}
    assert sub[0]["model"].startswith("claude-haiku")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == (
        "The reviewer says: x is never used."
    )
    [answer] = [
        b
        for m in messages
        if isinstance(m, UserMessage)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert "x is never used" in str(answer.content)
    # Subagents report their final answer only (their own calls are not forwarded).
    assert all(m.parent_tool_use_id is None for m in messages if isinstance(m, AssistantMessage))


async def test_agent_fields_queryloop_cannot_honour_are_named(
    sdk_server: MessagesServer,
) -> None:
    options = ClaudeAgentOptions(
        agents={"r": AgentDefinition(description="d", prompt="p", initialPrompt="go")}
    )
    with pytest.raises(UnsupportedOptionError, match=r"agents\['r'\]\.initialPrompt"):
        async for _ in query(prompt="hi", options=options):
            pass


async def test_local_plugins_load_their_commands_and_agents(sdk_server: MessagesServer) -> None:
    """`plugins=[{"type": "local", "path": ...}]`: a plugin in Claude Code's layout (our
    test plugin, tests/plugins/fixtures/qa-kit) adds its commands and agent types."""
    plugin = Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "qa-kit"
    sdk_server.script([turn(text("ok"))])
    options = ClaudeAgentOptions(plugins=[{"type": "local", "path": str(plugin)}])

    messages = [m async for m in query(prompt="hi", options=options)]

    init = messages[0]
    assert "qa-kit:stamp" in init.data["slash_commands"]  # type: ignore[union-attr]
    assert "qa-kit:inspector" in str(sdk_server.requests[0])  # the agent type is listed
    with pytest.raises(UnsupportedOptionError, match="only local plugins"):
        async for _ in query(prompt="hi", options=ClaudeAgentOptions(plugins=[{"type": "x"}])):  # type: ignore[typeddict-item]
            pass
