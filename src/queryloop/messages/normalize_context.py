"""Shared shapes of the normalization passes: their context and the draft message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .api_types import ApiContentBlock
from .thinking_mode import ThinkingSpec, ThinkingType

LEADING_PLACEHOLDER_TEXT = "[Earlier conversation omitted]"
"""The user message inserted when the array would otherwise start with the assistant."""

CONTINUE_TEXT = "Continue."
"""The user message appended after a final assistant message when the request cannot
carry it as a prefill (thinking on, or a model without prefill)."""

TOOL_LOOP_CLOSED_TEXT = "[Tool results received.]"
"""The assistant message that closes a tool loop the request cannot leave open (extended
thinking on, and the loop's first assistant message has no thinking block)."""

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

Draft: TypeAlias = tuple[str, list[ApiContentBlock], str]
"""(role, wire blocks, API message id or "") — one message between rendering and merging."""


@dataclass(frozen=True, slots=True)
class NormalizeContext:
    """What the passes know about the request: tool names, its thinking mode, whether the
    model accepts a prefill (a final assistant message), and whether the input continues an
    already normalized prefix (`continuation`: the array is the tail of a longer one, so no
    leading placeholder is inserted; see incremental.py)."""

    tool_names: frozenset[str] = frozenset()
    thinking: ThinkingType = ThinkingType.ENABLED
    continuation: bool = False
    prefill: bool = True

    @property
    def thinking_enabled(self) -> bool:
        """True when the request thinks (enabled or adaptive)."""
        return self.thinking.on


def make_context(
    tools: Sequence[Mapping[str, Any]] | None,
    thinking: ThinkingSpec,
    thinking_enabled: bool | None,
    prefill: bool,
) -> NormalizeContext:
    """The context of one normalization call (`thinking_enabled`, the legacy boolean, wins
    when given: True means `enabled`)."""
    mode = ThinkingType.of(thinking if thinking_enabled is None else thinking_enabled)
    return NormalizeContext(tool_names=tool_names(tools), thinking=mode, prefill=prefill)


def tool_names(tools: Sequence[Mapping[str, Any]] | None) -> frozenset[str]:
    """The names of a request's tool definitions (what `NormalizeContext.tool_names` holds)."""
    return frozenset(str(t.get("name", "")) for t in tools or ())
