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


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What UserPromptSubmit, SessionStart or PreCompact hooks said.

    `blocked`: UserPromptSubmit — drop the prompt and show `reason` to the user; PreCompact —
    the caller may skip this compaction. `additional_context`: text for the model (prompt
    and session start) or extra summary instructions (pre-compact). `stop_reason`: a hook
    asked to end the session (`"continue": false`).
    """

    blocked: bool = False
    reason: str = ""
    additional_context: str | None = None
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True)
class HookWarning:
    """A hook that failed, timed out or printed something unusable; shown to the user."""

    event: str
    hook: str
    message: str
