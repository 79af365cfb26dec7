"""The Messages API's rules for server-tool blocks (`server_tool_use` and its result).

A server tool (web search) is called and answered inside one assistant turn: the model's
`server_tool_use` and the server's `web_search_tool_result` both sit in the assistant
message, so the result must follow its call in that turn, and no tool_result of ours
answers it. Only an assistant turn that ends the array may hold a call without its result:
a response that stopped with `pause_turn` is sent back as it is and the server goes on from
there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .violation import Violation

Out = list[Violation]
Blocks = Sequence[tuple[str, Mapping[str, Any]]]
RESULT_FOR = {"web_search_tool_result": "web_search"}
"""The result block type of each server tool the validator knows, by tool name."""


def check_server_block(block: Mapping[str, Any], path: str, out: Out) -> None:
    """The shape of one `server_tool_use` or `web_search_tool_result` block."""
    if block.get("type") == "server_tool_use":
        if not isinstance(block.get("id"), str) or not block.get("id"):
            out.append(Violation("server_tool_use.id", "server_tool_use needs an id", path))
        if not isinstance(block.get("name"), str) or not block.get("name"):
            out.append(Violation("server_tool_use.name", "server_tool_use needs a name", path))
        if not isinstance(block.get("input"), Mapping):
            out.append(
                Violation("server_tool_use.input", "server_tool_use input must be an object", path)
            )
        return
    if not isinstance(block.get("tool_use_id"), str):
        out.append(
            Violation("server_tool_result.id", f"{block.get('type')} needs a tool_use_id", path)
        )
    content = block.get("content")
    if isinstance(content, Mapping):
        if not isinstance(content.get("error_code"), str):
            out.append(
                Violation(
                    "server_tool_result.content", "an error result needs its error_code", path
                )
            )
    elif not isinstance(content, list) or any(
        not isinstance(hit, Mapping) or hit.get("type") != "web_search_result" for hit in content
    ):
        out.append(
            Violation(
                "server_tool_result.content",
                "web_search_tool_result content must be a list of web_search_result blocks "
                "or a web_search_tool_result_error",
                path,
            )
        )


def check_server_pairing(turns: Sequence[tuple[str, Blocks]], out: Out) -> None:
    """Each server tool result follows its call in the same assistant turn; every call but
    those of an assistant turn that ends the array (a paused response) has its result
    there."""
    for k, (role, blocks) in enumerate(turns):
        if role == "assistant":
            _check_turn(blocks, out, paused_allowed=k == len(turns) - 1)


def _check_turn(blocks: Blocks, out: Out, *, paused_allowed: bool) -> None:
    calls: dict[str, tuple[str, str]] = {}
    answered: set[str] = set()
    for path, block in blocks:
        kind = block.get("type")
        if kind == "server_tool_use":
            calls[str(block.get("id"))] = (path, str(block.get("name")))
        elif kind in RESULT_FOR:
            tid = str(block.get("tool_use_id"))
            if tid not in calls:
                out.append(
                    Violation(
                        "server_tool_result.orphan",
                        f"{kind} answers {tid!r}, which is no server_tool_use before it in "
                        "this assistant turn",
                        path,
                    )
                )
            answered.add(tid)
    if paused_allowed:
        return
    for tid, (path, name) in calls.items():
        if tid not in answered and name in RESULT_FOR.values():
            out.append(
                Violation(
                    "server_tool_use.unanswered",
                    f"{name} server_tool_use {tid!r} has no result in its assistant turn",
                    path,
                )
            )
