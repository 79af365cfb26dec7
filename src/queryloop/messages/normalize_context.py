"""Shared shapes of the normalization passes: their context and the draft message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .api_types import ApiContentBlock

LEADING_PLACEHOLDER_TEXT = "[Earlier conversation omitted]"
"""The user message inserted when the array would otherwise start with the assistant."""

CONTINUE_TEXT = "Continue."
"""The user message appended after a final assistant message when thinking is on (no prefill)."""

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

Draft: TypeAlias = tuple[str, list[ApiContentBlock], str]
"""(role, wire blocks, API message id or "") — one message between rendering and merging."""


@dataclass(frozen=True, slots=True)
class NormalizeContext:
    """What the passes know about the request: tool names, whether thinking is on, and
    whether the input continues an already normalized prefix (`continuation`: the array is
    the tail of a longer one, so no leading placeholder is inserted; see incremental.py)."""

    tool_names: frozenset[str] = frozenset()
    thinking_enabled: bool = True
    continuation: bool = False
