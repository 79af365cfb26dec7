"""A subagent's thread is made by the same builder as the main thread's (`build_thread`),
from the child's options (`child_options`): no second way to wire a thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from subagent_support import by_thread, make_agent, tool_results

from queryloop.agents.definitions import GENERAL_PURPOSE_AGENT
from queryloop.agents.runner import child_options, child_tools
from queryloop.agents.thread import build_thread
from queryloop.messages import user_message
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn
from queryloop.tools.base import ToolContext


def _shape(body: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], str]:
    """What the thread's builder fixes: the system prompt, the tools, the model."""
    system = [b["text"] for b in body["system"]]
    tools = [{k: v for k, v in t.items() if k != "cache_control"} for t in body["tools"]]
    return system, tools, body["model"]


async def test_a_subagent_thread_comes_from_the_same_builder_with_the_childs_options(
    tmp_path: Path, home: Path
) -> None:
    (home / "QUERYLOOP.md").parent.mkdir(parents=True, exist_ok=True)
    (home / "QUERYLOOP.md").write_text("Always answer in English.\n")
    seen: dict[str, dict[str, Any]] = {}

    def parent(body: dict[str, Any]) -> Turn:
        seen.setdefault("parent", body)
        if not tool_results(body):
            return turn(tool_use("Agent", {"description": "look", "prompt": "CHILD: look"}))
        return turn(text("done"))

    def child(body: dict[str, Any]) -> Turn:
        seen.setdefault("child", body)
        return turn(text("child done"))

    with MessagesServer(by_thread(parent, {"CHILD": child})) as server:
        agent = make_agent(server, tmp_path, home)
        await agent.run("start a subagent")
        runtime = agent._runtime
        assert runtime is not None
        host = runtime.subagents.host
        await agent.aclose()
    definition = GENERAL_PURPOSE_AGENT
    options = child_options(host, definition, host.model, child_tools(host, definition))
    expected = build_thread(
        options,
        provider=host.provider,
        permission=None,
        hooks=None,
        tool_context=ToolContext(cwd=tmp_path),
    )
    request = expected.builder.build([user_message("x")], max_tokens=100).to_body()
    assert _shape(seen["child"]) == _shape(request)
    # The same builder made the main thread: same environment and memory, its own prompt.
    main_system, main_tools, main_model = _shape(seen["parent"])
    child_system, child_tools_sent, child_model = _shape(request)
    assert main_system[-1] == child_system[-1] and main_model == child_model
    assert main_system[0] != child_system[0]  # the definition's instructions, not ours
    by_name = {t["name"]: t for t in main_tools}
    assert all(by_name[t["name"]] == t for t in child_tools_sent)  # the parent's bytes
