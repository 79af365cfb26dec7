"""`ThinkingType`: which thinking mode a request runs in (the `thinking.type` it sends).

A boolean cannot tell the two modes apart, and the API treats them differently: in
extended (manual, `enabled`) mode the final assistant turn of a request must begin with a
thinking block; adaptive mode relaxes this (docs/messages.md cites the source).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeAlias


class ThinkingType(StrEnum):
    """The request's `thinking.type`: disabled (or absent), enabled (manual) or adaptive."""

    DISABLED = "disabled"
    ENABLED = "enabled"
    ADAPTIVE = "adaptive"

    @property
    def on(self) -> bool:
        """True when the request thinks (enabled or adaptive)."""
        return self is not ThinkingType.DISABLED

    @classmethod
    def of(cls, thinking: ThinkingSpec) -> ThinkingType:
        """The mode of a thinking config: a request's `thinking` object (or None), its type
        string, a `ThinkingType`, or a legacy boolean (True means `enabled`, the strict mode).
        An unknown type counts as `enabled`, the mode with the most rules."""
        if isinstance(thinking, ThinkingType):
            return thinking
        if thinking is None or thinking is False:
            return cls.DISABLED
        if thinking is True:
            return cls.ENABLED
        kind = thinking.get("type") if isinstance(thinking, Mapping) else thinking
        try:
            return cls(str(kind))
        except ValueError:
            return cls.ENABLED


ThinkingSpec: TypeAlias = "ThinkingType | Mapping[str, Any] | str | bool | None"
"""Anything `ThinkingType.of` accepts."""

THINKING_OFF: Mapping[str, Any] = {"type": "disabled"}
"""The `thinking` a request sends to turn thinking off (a model may think by default)."""
