"""Helpers for the subagent and background-task tests: an Agent on the local server and a
model that answers by thread (parent or a named subagent)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, Turn


def make_agent(server: MessagesServer, cwd: Path, home: Path, **kw: Any) -> Agent:
    """An Agent on the local server (the Agent builds and closes the provider)."""
    fast = RetryPolicy(max_retries=1, base_delay=0.01)
    return Agent(
        "claude-sonnet-5-5", base_url=server.base_url, retry=fast, cwd=cwd, home=home, **kw
    )


def body_text(body: dict[str, Any]) -> str:
    """Every message of a request as one JSON string (to look for markers)."""
    return json.dumps(body["messages"], ensure_ascii=False)


def system_text(body: dict[str, Any]) -> str:
    """The request's system prompt text."""
    system = body.get("system") or []
    return " ".join(b.get("text", "") for b in system) if isinstance(system, list) else system


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool_result block of the request, in order."""
    return [
        b
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


def result_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [])


Router = Callable[[dict[str, Any]], Turn | str]


def by_thread(parent: Router, children: Mapping[str, Router]) -> Router:
    """Route a request to the child whose marker is in its first message, else the parent."""

    def route(body: dict[str, Any]) -> Turn | str:
        first = json.dumps(body["messages"][0], ensure_ascii=False)
        for marker, child in children.items():
            if marker in first:
                return child(body)
        return parent(body)

    return route
