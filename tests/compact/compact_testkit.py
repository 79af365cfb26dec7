"""Builders and invariant checks shared by the compaction tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from queryloop.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    assistant_message,
    normalize_messages_for_api,
    tool_result_message,
    user_message,
    validate_api_request,
)
from queryloop.messages.blocks import TextBlock

TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object"}}
    for n in ("Read", "Bash", "Grep", "Edit", "TodoWrite")
]


def tool_round(
    n: int, *, tool: str = "Read", result: str | None = None, usage: Usage | None = None
) -> list[Message]:
    """One API round: an assistant text + tool_use, then its tool_result."""
    tid = f"toolu_{n:04d}"
    args: dict[str, Any] = {"file_path": f"/src/f{n}.py"} if tool == "Read" else {"command": "ls"}
    blocks = (TextBlock(text=f"step {n}: looking"), ToolUseBlock(id=tid, name=tool, input=args))
    assistant = AssistantMessage(content=blocks, message_id=f"msg_{n}", usage=usage)
    body = result if result is not None else f"result {n} " + "x" * 400
    return [assistant, tool_result_message(tid, body)]


def history(
    rounds: int, *, first: str = "Fix the parser. The secret code is KIWI-42.", **kw: Any
) -> list[Message]:
    """A first user message followed by `rounds` tool rounds."""
    out: list[Message] = [user_message(first)]
    for n in range(rounds):
        out += tool_round(n, **kw)
    return out


def with_usage(messages: list[Message], usage: Usage) -> list[Message]:
    """`messages` with `usage` on the last assistant message."""
    from dataclasses import replace

    for index in range(len(messages) - 1, -1, -1):
        m = messages[index]
        if isinstance(m, AssistantMessage):
            return [*messages[:index], replace(m, usage=usage), *messages[index + 1 :]]
    return messages


def strict_pairing_problems(messages: Sequence[Message]) -> list[str]:
    """Problems a request would have WITHOUT repair: every tool_use answered in the very next
    user turn, no tool_result without its tool_use, no duplicate tool_use ids."""
    turns: list[tuple[str, list[Any]]] = []
    for m in messages:
        if isinstance(m, UserMessage | AssistantMessage):
            role: str = m.type
            blocks = [TextBlock(text=m.content)] if isinstance(m.content, str) else list(m.content)
            if turns and turns[-1][0] == role:
                turns[-1][1].extend(blocks)
            else:
                turns.append((role, blocks))
    problems: list[str] = []
    seen: set[str] = set()
    for i, (role, blocks) in enumerate(turns):
        if role != "assistant":
            continue
        uses = [b.id for b in blocks if isinstance(b, ToolUseBlock)]
        problems += [f"duplicate tool_use {u}" for u in uses if u in seen]
        seen.update(uses)
        following = turns[i + 1][1] if i + 1 < len(turns) else []
        answered = {b.tool_use_id for b in following if isinstance(b, ToolResultBlock)}
        problems += [f"unanswered {u}" for u in uses if u not in answered]
    for i, (role, blocks) in enumerate(turns):
        if role != "user":
            continue
        prev = turns[i - 1][1] if i > 0 else []
        asked = {b.id for b in prev if isinstance(b, ToolUseBlock)}
        problems += [
            f"orphan result {b.tool_use_id}"
            for b in blocks
            if isinstance(b, ToolResultBlock) and b.tool_use_id not in asked
        ]
    if turns and turns[0][0] != "user":
        problems.append("starts with assistant")
    return problems


def assert_valid(messages: Sequence[Message]) -> None:
    """No repair needed, and the normalized request breaks no API rule."""
    assert strict_pairing_problems(messages) == []
    api = normalize_messages_for_api(messages, TOOLS, thinking_enabled=False)
    body = {"model": "claude-x", "max_tokens": 1024, "messages": api, "tools": TOOLS}
    assert validate_api_request(body) == []


class FakeSummarizer:
    """Records what it was given; may raise a queue of errors before answering."""

    def __init__(self, answer: str = "<summary>1. Primary Request: fix parser</summary>") -> None:
        self.answer = answer
        self.calls: list[tuple[list[Message], str]] = []
        self.errors: list[BaseException] = []

    async def __call__(self, messages: Sequence[Message], prompt: str) -> str:
        self.calls.append((list(messages), prompt))
        if self.errors:
            raise self.errors.pop(0)
        return self.answer


def all_text(messages: Sequence[Message]) -> str:
    """Every piece of text that reaches the API, rendered."""
    api = normalize_messages_for_api(messages, TOOLS, thinking_enabled=False)
    return repr(api)


def assistant(text: str) -> AssistantMessage:
    """A plain assistant text message."""
    return assistant_message(text)


def long_session_bench() -> ModuleType:
    """`bench/long_session.py` as a module (a script, not a package): its drivers run whole
    sessions over real HTTP against `queryloop.testing`'s server."""
    name = "queryloop_bench_long_session"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[2] / "bench" / "long_session.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
