"""What the validator needs to know about the request's model (a seam, not a model table).

The model table lives in `queryloop.providers.models`; its `ModelInfo` satisfies
`ModelRules`, and the testing server passes it in. Without one the model is unknown and the
model-dependent rules report at most warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .thinking_mode import ThinkingType


class ModelRules(Protocol):
    """The capabilities of one model that decide whether a request is valid."""

    @property
    def known(self) -> bool:
        """False when nothing is known about the model (its rules give warnings only)."""
        ...

    @property
    def prefill(self) -> bool:
        """Whether a final assistant message (prefill) is accepted."""
        ...

    @property
    def mid_conversation_system(self) -> bool | None:
        """Whether role "system" messages inside `messages` are accepted (None: unknown)."""
        ...

    @property
    def default_thinking(self) -> ThinkingType:
        """The thinking the model runs when the request sets no `thinking`."""
        ...


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """A plain `ModelRules` (for tests and callers without a model table)."""

    known: bool = False
    prefill: bool = True
    mid_conversation_system: bool | None = None
    default_thinking: ThinkingType = ThinkingType.DISABLED


UNKNOWN_MODEL = ModelCapabilities()
