"""The Anthropic Messages API's request rules, checked locally.

`validate_api_request(body)` returns every rule the request body breaks, each with a
stable rule id (for example `tool_use.unanswered`), a message and a JSONPath-like location.
It accepts the full real request shape: fields it does not judge (stream, metadata,
context_management, citations, server tools, ...) pass untouched. docs/messages.md lists
every rule and the documentation it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .validate_blocks import check_cache_totals, record_cache_control
from .validate_messages import final_turn_first_assistant, validate_messages
from .violation import Violation

__all__ = [
    "Violation",
    "final_turn_first_assistant",
    "thinking_active",
    "validate_api_request",
    "validate_messages",
]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MIN_THINKING_BUDGET = 1024
FORCED_TOOL_CHOICES = frozenset({"any", "tool"})

Out = list[Violation]
Cache = list[tuple[str, Mapping[str, Any]]]


def thinking_active(request: Mapping[str, Any]) -> bool:
    """True when the request turns thinking on (`enabled` or `adaptive`)."""
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def validate_api_request(request: Mapping[str, Any]) -> list[Violation]:
    """Every rule the request body breaks; an empty list means the API should accept it."""
    out: Out = []
    cache: Cache = []
    _check_scalars(request, out)
    tool_names = _check_tools(request.get("tools"), out, cache)
    _check_system(request.get("system"), out, cache)
    out.extend(
        validate_messages(
            request.get("messages"), thinking_enabled=thinking_active(request), cache=cache
        )
    )
    check_cache_totals(cache, out)
    _check_tools_defined(request, out)
    _check_tool_choice(request.get("tool_choice"), tool_names, out)
    _check_thinking(request, out)
    return out


def _check_scalars(request: Mapping[str, Any], out: Out) -> None:
    model = request.get("model")
    if not isinstance(model, str) or not model:
        out.append(Violation("model.missing", "model must be a non-empty string", "model"))
    if not _is_int(request.get("max_tokens")) or request["max_tokens"] < 1:
        out.append(
            Violation("max_tokens.invalid", "max_tokens must be an integer >= 1", "max_tokens")
        )
    _check_range(request, "temperature", 0.0, 1.0, out)
    _check_range(request, "top_p", 0.0, 1.0, out)
    top_k = request.get("top_k")
    if top_k is not None and (not _is_int(top_k) or top_k < 0):
        out.append(Violation("top_k.range", "top_k must be a non-negative integer", "top_k"))
    stops = request.get("stop_sequences")
    if stops is not None and (
        not isinstance(stops, list) or not all(isinstance(s, str) and s.strip() for s in stops)
    ):
        out.append(
            Violation(
                "stop_sequences.invalid",
                "stop_sequences must be non-whitespace strings",
                "stop_sequences",
            )
        )
    metadata = request.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, Mapping) or not isinstance(metadata.get("user_id", ""), str | None)
    ):
        out.append(
            Violation(
                "metadata.invalid", "metadata must be an object; user_id a string", "metadata"
            )
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_range(request: Mapping[str, Any], key: str, low: float, high: float, out: Out) -> None:
    value = request.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        out.append(Violation(f"{key}.range", f"{key} must be between {low} and {high}", key))


def _check_tools(tools: Any, out: Out, cache: Cache) -> set[str]:
    names: set[str] = set()
    if tools is None:
        return names
    if not isinstance(tools, list):
        out.append(Violation("tools.invalid", "tools must be a list", "tools"))
        return names
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        if not isinstance(tool, Mapping):
            out.append(Violation("tools.invalid", "a tool must be an object", path))
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            out.append(
                Violation(
                    "tools.name_pattern",
                    f"tool name {name!r} must match {TOOL_NAME.pattern}",
                    f"{path}.name",
                )
            )
        elif name in names:
            out.append(
                Violation(
                    "tools.duplicate_name", f"tool name {name!r} is defined twice", f"{path}.name"
                )
            )
        else:
            names.add(name)
        if tool.get("type") in (None, "custom"):
            schema = tool.get("input_schema")
            if not isinstance(schema, Mapping) or schema.get("type") != "object":
                out.append(
                    Violation(
                        "tools.schema_not_object",
                        "input_schema must be a JSON schema of type 'object'",
                        f"{path}.input_schema",
                    )
                )
        if tool.get("cache_control") is not None:
            record_cache_control(tool["cache_control"], f"{path}.cache_control", out, cache)
    return names


def _check_system(system: Any, out: Out, cache: Cache) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        out.append(
            Violation(
                "system.block_type", "system must be a string or a list of text blocks", "system"
            )
        )
        return
    for i, block in enumerate(system):
        path = f"system[{i}]"
        if (
            not isinstance(block, Mapping)
            or block.get("type") != "text"
            or not isinstance(block.get("text"), str)
        ):
            out.append(Violation("system.block_type", "system blocks must be text blocks", path))
            continue
        if not block["text"].strip():
            out.append(
                Violation("text.empty", "system text blocks must contain non-whitespace text", path)
            )
            if block.get("cache_control") is not None:
                out.append(
                    Violation(
                        "cache_control.on_empty_text",
                        "cache_control cannot be set on empty text",
                        path,
                    )
                )
        if block.get("cache_control") is not None:
            record_cache_control(block["cache_control"], f"{path}.cache_control", out, cache)


def _check_tools_defined(request: Mapping[str, Any], out: Out) -> None:
    if request.get("tools") or request.get("mcp_servers"):
        return
    messages = request.get("messages")
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if isinstance(block, Mapping) and block.get("type") in ("tool_use", "tool_result"):
                out.append(
                    Violation(
                        "tools.undefined",
                        "requests with tool_use or tool_result blocks must define tools",
                        f"messages[{i}].content[{j}]",
                    )
                )
                return


def _check_tool_choice(choice: Any, tool_names: set[str], out: Out) -> None:
    if choice is None:
        return
    if not isinstance(choice, Mapping) or choice.get("type") not in ("auto", "any", "tool", "none"):
        out.append(
            Violation(
                "tool_choice.invalid",
                "tool_choice type must be auto, any, tool or none",
                "tool_choice",
            )
        )
        return
    if choice.get("type") == "tool" and choice.get("name") not in tool_names:
        out.append(
            Violation(
                "tool_choice.unknown_tool",
                f"tool_choice names {choice.get('name')!r}, which is not in tools",
                "tool_choice.name",
            )
        )


def _check_thinking(request: Mapping[str, Any], out: Out) -> None:
    thinking = request.get("thinking")
    if thinking is None:
        return
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind not in ("enabled", "disabled", "adaptive"):
        out.append(
            Violation(
                "thinking.invalid",
                "thinking type must be enabled, disabled or adaptive",
                "thinking",
            )
        )
        return
    if kind == "enabled":
        _check_budget(thinking.get("budget_tokens"), request.get("max_tokens"), out)
    if kind == "disabled":
        return
    if request.get("temperature") not in (None, 1, 1.0):
        out.append(
            Violation(
                "thinking.temperature",
                "temperature cannot be changed while thinking is on",
                "temperature",
            )
        )
    if request.get("top_k") is not None:
        out.append(Violation("thinking.top_k", "top_k cannot be set while thinking is on", "top_k"))
    top_p = request.get("top_p")
    if top_p is not None and isinstance(top_p, int | float) and not 0.95 <= top_p <= 1:
        out.append(
            Violation(
                "thinking.top_p", "with thinking on, top_p must be between 0.95 and 1", "top_p"
            )
        )
    choice = request.get("tool_choice")
    if (
        kind == "enabled"
        and isinstance(choice, Mapping)
        and choice.get("type") in FORCED_TOOL_CHOICES
    ):
        out.append(
            Violation(
                "thinking.tool_choice",
                "extended thinking allows only tool_choice auto or none",
                "tool_choice",
            )
        )


def _check_budget(budget: Any, max_tokens: Any, out: Out) -> None:
    if not _is_int(budget) or budget < MIN_THINKING_BUDGET:
        out.append(
            Violation(
                "thinking.budget_too_small",
                f"budget_tokens must be an integer >= {MIN_THINKING_BUDGET}",
                "thinking.budget_tokens",
            )
        )
    elif _is_int(max_tokens) and budget >= max_tokens:
        out.append(
            Violation(
                "thinking.budget_exceeds_max_tokens",
                "budget_tokens must be less than max_tokens",
                "thinking.budget_tokens",
            )
        )
