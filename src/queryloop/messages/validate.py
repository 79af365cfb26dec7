"""The Anthropic Messages API's request rules, checked locally.

`validate_api_request(body, model=...)` returns every rule the request body breaks, each
with a stable rule id (for example `tool_use.unanswered`), a message, a JSONPath-like
location and a severity: an ERROR is a request the API rejects with a 400, a WARNING one it
accepts (merging, ignoring or degrading something). Only errors may block a request.
`model` (a `ModelRules`, such as `providers.models.ModelInfo`) enables the model-dependent
rules; without it the model is unknown and those rules give warnings at most.
docs/messages.md lists every rule and the documentation it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .thinking_mode import ThinkingType
from .validate_blocks import check_cache_totals, record_cache_control
from .validate_messages import (
    final_turn_first_assistant,
    results_led_loop_first_assistant,
    validate_messages,
)
from .validate_model import UNKNOWN_MODEL, ModelCapabilities, ModelRules
from .violation import Severity, Violation, errors, warning, warnings

__all__ = [
    "KNOWN_REQUEST_FIELDS",
    "ModelCapabilities",
    "ModelRules",
    "Severity",
    "Violation",
    "errors",
    "final_turn_first_assistant",
    "results_led_loop_first_assistant",
    "thinking_active",
    "validate_api_request",
    "validate_messages",
    "warnings",
]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MIN_THINKING_BUDGET = 1024
FORCED_TOOL_CHOICES = frozenset({"any", "tool"})
KNOWN_REQUEST_FIELDS = frozenset(
    {
        # anthropic SDK 2.14 MessageCreateParams (generated from the API's schema) ...
        "model",
        "messages",
        "max_tokens",
        "system",
        "metadata",
        "stop_sequences",
        "stream",
        "tools",
        "tool_choice",
        "thinking",
        "service_tier",
        "container",
        "cache_control",
        "inference_geo",
        "output_config",
        "speed",
        "diagnostics",
        "user_profile_id",
        "workspace_id",
        # ... its beta additions ...
        "context_management",
        "mcp_servers",
        "compaction",
        "billing_policy",
        "fallback_credit_token",
        "fallbacks",
        "thread",
        # ... and the sampling parameters older models still accept (the SDK dropped them).
        "temperature",
        "top_p",
        "top_k",
        "output_format",
    }
)
"""Top-level request fields the API accepts; any other is rejected ("Extra inputs are not
permitted")."""
CONTEXT_EDITS = frozenset(
    {"clear_tool_uses_20250919", "clear_thinking_20251015", "compact_20260112"}
)
"""`context_management.edits[].type` values (SDK 2.14 `BetaContextManagementConfigParam`)."""

Out = list[Violation]
Cache = list[tuple[str, Mapping[str, Any]]]


def thinking_active(request: Mapping[str, Any]) -> bool:
    """True when the request turns thinking on (`enabled` or `adaptive`)."""
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def _mode(request: Mapping[str, Any], model: ModelRules) -> ThinkingType:
    """The request's thinking mode: its `thinking` (an invalid one counts as off; it is an
    error), or the model's default when it sets none."""
    if request.get("thinking") is None:
        return model.default_thinking
    if not thinking_active(request):
        return ThinkingType.DISABLED
    return ThinkingType.of(request.get("thinking"))


def validate_api_request(
    request: Mapping[str, Any], *, model: ModelRules | None = None
) -> list[Violation]:
    """Every rule the request body breaks; no errors means the API should accept it."""
    rules = model if model is not None else UNKNOWN_MODEL
    mode = _mode(request, rules)
    out: Out = []
    cache: Cache = []
    _check_fields(request, out)
    _check_scalars(request, out)
    tool_names = _check_tools(request.get("tools"), out, cache)
    _check_system(request.get("system"), out, cache)
    out.extend(validate_messages(request.get("messages"), thinking=mode, cache=cache, model=rules))
    if request.get("cache_control") is not None:
        # Automatic caching places one breakpoint on the last cacheable block.
        record_cache_control(request["cache_control"], "cache_control", out, cache)
    check_cache_totals(cache, out)
    _check_tools_defined(request, out)
    _check_tool_choice(request.get("tool_choice"), tool_names, out)
    _check_thinking(request, out)
    _check_context_management(request, mode, out)
    return out


def _check_fields(request: Mapping[str, Any], out: Out) -> None:
    for key in request:
        if key not in KNOWN_REQUEST_FIELDS:
            out.append(
                Violation("request.unknown_field", f"{key}: Extra inputs are not permitted", key)
            )


def _check_scalars(request: Mapping[str, Any], out: Out) -> None:
    model = request.get("model")
    if not isinstance(model, str) or not model:
        out.append(Violation("model.missing", "model must be a non-empty string", "model"))
    if not _is_int(request.get("max_tokens")) or request["max_tokens"] < 0:
        out.append(
            Violation("max_tokens.invalid", "max_tokens must be an integer >= 0", "max_tokens")
        )
    elif request["max_tokens"] == 0:
        _check_cache_warming(request, out)
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


def _check_cache_warming(request: Mapping[str, Any], out: Out) -> None:
    """max_tokens 0 writes the prompt cache and generates nothing: accepted, except with
    streaming, thinking, structured output or forced tool use."""
    out.append(
        warning(
            "max_tokens.zero",
            "max_tokens 0 generates nothing (a cache-warming request)",
            "max_tokens",
        )
    )
    output_config = request.get("output_config")
    choice = request.get("tool_choice")
    clashes = {
        "stream": bool(request.get("stream")),
        "thinking": thinking_active(request),
        "output_config.format": isinstance(output_config, Mapping)
        and output_config.get("format") is not None,
        "output_format": request.get("output_format") is not None,
        "tool_choice": isinstance(choice, Mapping) and choice.get("type") in FORCED_TOOL_CHOICES,
    }
    for name, clash in clashes.items():
        if clash:
            out.append(
                Violation(
                    "max_tokens.zero_unsupported",
                    f"max_tokens 0 cannot be combined with {name}",
                    "max_tokens",
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


def _check_context_management(request: Mapping[str, Any], mode: ThinkingType, out: Out) -> None:
    config = request.get("context_management")
    if config is None:
        return
    edits = config.get("edits", []) if isinstance(config, Mapping) else None
    if not isinstance(edits, list):
        out.append(
            Violation(
                "context_management.invalid",
                "context_management must be an object with a list of edits",
                "context_management",
            )
        )
        return
    for i, edit in enumerate(edits):
        path = f"context_management.edits[{i}]"
        kind = edit.get("type") if isinstance(edit, Mapping) else None
        if kind not in CONTEXT_EDITS:
            out.append(
                Violation(
                    "context_management.unknown_edit",
                    f"unknown context management edit type {kind!r}",
                    path,
                )
            )
        elif kind == "clear_thinking_20251015" and not mode.on:
            out.append(
                Violation(
                    "context_management.clear_thinking_without_thinking",
                    "the clear_thinking_20251015 edit requires thinking to be enabled",
                    path,
                )
            )
