"""Rules for single content blocks and cache_control markers (used by the validator).

Every block type the Messages API accepts in a request is known here (`KNOWN_BLOCK_TYPES`,
the request content-block union of the API, beta features included); the API rejects any
other type, and so does the validator. Of the server-tool blocks, web search's are checked
(`validate_server`); the others are known but not judged further.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .validate_server import check_server_block
from .violation import Violation

USER_ONLY = frozenset({"tool_result"})
ASSISTANT_ONLY = frozenset(
    {"tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result"}
)
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
RESULT_PARTS = frozenset(
    {"text", "image", "document", "search_result", "tool_reference", "browser_state"}
)
KNOWN_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "advisor_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "mcp_tool_listing",
        "container_upload",
        "compaction",
        "tool_addition",
        "tool_removal",
        "fallback",
    }
)
"""Request content-block types of the Messages API (anthropic SDK 2.14 `ContentBlockParam`
and `BetaContentBlockParam` unions, which are generated from the API's schema)."""
SERVER_RESULT_TYPES = frozenset(
    t for t in KNOWN_BLOCK_TYPES if t.endswith("_tool_result") and t != "mcp_tool_result"
)
"""Results of server tools (each answers a `server_tool_use` in the same assistant turn)."""
PAUSED_TURN_TYPES = frozenset({"server_tool_use", *SERVER_RESULT_TYPES})
"""A final assistant turn holding one of these is a server tool's paused turn (the API's
`pause_turn`), sent back to be continued: not a prefill."""
IMAGE_MEDIA = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
CACHE_TTLS = frozenset({"5m", "1h"})

Out = list[Violation]


def check_block(block: Mapping[str, Any], path: str, role: str, out: Out) -> None:
    """Append the violations of one message content block."""
    kind = str(block.get("type"))
    if kind not in KNOWN_BLOCK_TYPES:
        out.append(Violation("block.unknown_type", f"{kind!r} is not a content block type", path))
        return
    if (role == "assistant" and kind in USER_ONLY) or (role == "user" and kind in ASSISTANT_ONLY):
        out.append(
            Violation("block.role_mismatch", f"a {role} message cannot contain {kind!r}", path)
        )
        return
    checker = _CHECKERS.get(kind)
    if checker is not None:
        checker(block, path, out)


SYSTEM_MESSAGE_BLOCKS = frozenset({"text", "tool_addition", "tool_removal"})


def check_system_message_block(block: Mapping[str, Any], path: str, out: Out) -> None:
    """Append the violations of one block of a role "system" message."""
    kind = block.get("type")
    if kind not in SYSTEM_MESSAGE_BLOCKS:
        out.append(
            Violation(
                "system_message.block_type",
                f"a system message can hold text, tool_addition and tool_removal, not {kind!r}",
                path,
            )
        )
    elif kind == "text":
        _text(block, path, out)
    elif not isinstance(block.get("tool"), Mapping):
        out.append(Violation("system_message.block_type", f"{kind} needs a tool reference", path))


def _text(block: Mapping[str, Any], path: str, out: Out) -> None:
    text = block.get("text")
    if not isinstance(text, str):
        out.append(Violation("text.invalid", "text must be a string", path))
    elif not text.strip():
        out.append(
            Violation("text.empty", "text content blocks must contain non-whitespace text", path)
        )


def _thinking(block: Mapping[str, Any], path: str, out: Out) -> None:
    if not isinstance(block.get("thinking"), str):
        out.append(Violation("thinking.invalid", "thinking must be a string", path))
    signature = block.get("signature")
    if not isinstance(signature, str) or not signature:
        out.append(
            Violation("thinking.signature_missing", "a thinking block needs its signature", path)
        )


def _redacted(block: Mapping[str, Any], path: str, out: Out) -> None:
    if not isinstance(block.get("data"), str) or not block.get("data"):
        out.append(Violation("thinking.redacted_data", "redacted_thinking needs its data", path))


def _tool_use(block: Mapping[str, Any], path: str, out: Out) -> None:
    if not isinstance(block.get("name"), str) or not block.get("name"):
        out.append(Violation("tool_use.name", "tool_use needs a name", path))
    if not isinstance(block.get("input"), Mapping):
        out.append(Violation("tool_use.input_not_object", "tool_use input must be an object", path))


def _tool_result(block: Mapping[str, Any], path: str, out: Out) -> None:
    if not isinstance(block.get("tool_use_id"), str):
        out.append(Violation("tool_result.invalid", "tool_result needs a tool_use_id", path))
    content = block.get("content", "")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        out.append(
            Violation(
                "tool_result.content_type", "tool_result content must be a string or a list", path
            )
        )
        return
    for k, part in enumerate(content):
        part_path = f"{path}.content[{k}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in RESULT_PARTS:
            out.append(
                Violation(
                    "tool_result.content_type", f"a tool_result cannot contain {kind!r}", part_path
                )
            )
            continue
        checker = _CHECKERS.get(str(kind))
        if checker is not None:
            checker(part, part_path, out)
        if part.get("cache_control") is not None:
            out.append(
                Violation(
                    "cache_control.nested_in_tool_result",
                    "cache_control is not supported on blocks inside a tool_result; "
                    "put it on the tool_result block",
                    f"{part_path}.cache_control",
                )
            )


def _image(block: Mapping[str, Any], path: str, out: Out) -> None:
    source = block.get("source")
    problem = _image_source_problem(source)
    if problem:
        out.append(Violation("image.source", problem, f"{path}.source"))


def _image_source_problem(source: Any) -> str:
    if not isinstance(source, Mapping):
        return "image source must be an object"
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") not in IMAGE_MEDIA:
            return f"image media_type must be one of {sorted(IMAGE_MEDIA)}"
        return (
            ""
            if isinstance(source.get("data"), str) and source.get("data")
            else "base64 data missing"
        )
    if kind == "url":
        return "" if isinstance(source.get("url"), str) and source.get("url") else "url missing"
    if kind == "file":
        return "" if isinstance(source.get("file_id"), str) else "file_id missing"
    return f"unknown image source type {kind!r}"


def _document(block: Mapping[str, Any], path: str, out: Out) -> None:
    problem = _document_source_problem(block.get("source"))
    if problem:
        out.append(Violation("document.source", problem, f"{path}.source"))


def _document_source_problem(source: Any) -> str:
    if not isinstance(source, Mapping):
        return "document source must be an object"
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") != "application/pdf":
            return "a base64 document must be application/pdf"
        return (
            ""
            if isinstance(source.get("data"), str) and source.get("data")
            else "base64 data missing"
        )
    if kind == "text":
        if source.get("media_type") != "text/plain":
            return "a text document must be text/plain"
        return "" if isinstance(source.get("data"), str) else "text data missing"
    if kind == "content":
        return "" if isinstance(source.get("content"), str | list) else "content missing"
    if kind == "url":
        return "" if isinstance(source.get("url"), str) and source.get("url") else "url missing"
    if kind == "file":
        return "" if isinstance(source.get("file_id"), str) else "file_id missing"
    return f"unknown document source type {kind!r}"


_CHECKERS: dict[str, Callable[[Mapping[str, Any], str, Out], None]] = {
    "text": _text,
    "thinking": _thinking,
    "redacted_thinking": _redacted,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "image": _image,
    "document": _document,
    "server_tool_use": check_server_block,
    "web_search_tool_result": check_server_block,
}


def check_cache_control(
    block: Mapping[str, Any], path: str, out: Out, cache: list[tuple[str, Mapping[str, Any]]]
) -> None:
    """Record a block's cache_control and check its placement (markers nested in a
    tool_result's content are rejected by `check_block`, and not counted)."""
    marker = block.get("cache_control")
    if marker is not None:
        kind = block.get("type")
        if kind in THINKING_TYPES:
            out.append(
                Violation(
                    "cache_control.on_thinking", "thinking blocks cannot carry cache_control", path
                )
            )
        elif kind == "text" and not str(block.get("text", "")).strip():
            out.append(
                Violation(
                    "cache_control.on_empty_text", "cache_control cannot be set on empty text", path
                )
            )
        record_cache_control(marker, path, out, cache)


def record_cache_control(
    marker: Any, path: str, out: Out, cache: list[tuple[str, Mapping[str, Any]]]
) -> None:
    """Check one cache_control object's shape and remember it for the count and TTL order."""
    if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
        out.append(
            Violation("cache_control.invalid", "cache_control must be {'type': 'ephemeral'}", path)
        )
        return
    ttl = marker.get("ttl", "5m")
    if ttl not in CACHE_TTLS:
        out.append(
            Violation(
                "cache_control.invalid",
                f"cache_control ttl must be '5m' or '1h', not {ttl!r}",
                path,
            )
        )
        return
    cache.append((path, marker))


def check_cache_totals(cache: list[tuple[str, Mapping[str, Any]]], out: Out) -> None:
    """At most 4 breakpoints; a 1h entry may not follow a 5m one (tools, system, messages)."""
    if len(cache) > 4:
        out.append(
            Violation(
                "cache_control.too_many",
                f"{len(cache)} cache_control breakpoints; at most 4 are allowed",
                cache[4][0],
            )
        )
    short_seen = False
    for path, marker in cache:
        ttl = marker.get("ttl", "5m")
        if ttl == "5m":
            short_seen = True
        elif short_seen:
            out.append(
                Violation(
                    "cache_control.ttl_order",
                    "a 1h cache_control must come before every 5m one",
                    path,
                )
            )
