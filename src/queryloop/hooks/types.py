"""Hook contracts the loop calls. Shell-command hooks and Python callables both satisfy them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..messages.types import Message


@dataclass(frozen=True, slots=True)
class StopHookInput:
    """What a Stop hook sees when the model is about to end its turn."""

    messages: Sequence[Message]
    last_assistant_text: str
    stop_hook_active: bool
    """True when the loop is already continuing because of an earlier stop-hook block."""
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class StopHookResult:
    """`block`: inject `message` and let the model go on; `prevent`: end the loop now."""

    decision: Literal["continue", "block", "prevent"] = "continue"
    message: str = ""


StopHook: TypeAlias = Callable[[StopHookInput], Awaitable[StopHookResult | None]]
