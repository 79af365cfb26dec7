"""Hook contracts the loop calls. Shell-command hooks and Python callables both satisfy them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from ..messages.blocks import ToolResultBlock, ToolUseBlock, block_to_api
from ..messages.types import Message, UserMessage


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

    def __str__(self) -> str:
        """In words, once: `SessionStart hook 'check.sh' failed: …` (a hook's label may be a
        whole script: its first line, shortened, names it)."""
        first = self.hook.strip().splitlines()[0] if self.hook.strip() else "?"
        name = first if len(first) <= LABEL_WIDTH else first[: LABEL_WIDTH - 1] + "…"
        more = " …" if name == first and "\n" in self.hook.strip() else ""
        return f"{self.event} hook '{name}{more}' {self.message}"


LABEL_WIDTH = 60
"""How much of a hook's label a warning shows."""


@dataclass(frozen=True, slots=True)
class HookStatus:
    """A hook with a `statusMessage` started (`running`) or ended; the CLI shows `message`
    as its spinner's text while it runs."""

    event: str
    hook: str
    message: str
    running: bool


@dataclass(frozen=True, slots=True)
class PermissionRequestOutcome:
    """What PermissionRequest hooks decided for the user: `behavior` None leaves the question
    to the person (or, headless, to the denial that follows)."""

    behavior: Literal["allow", "deny"] | None = None
    updated_input: Mapping[str, Any] | None = None
    message: str = ""
    """For `deny`: why, for the model."""
    interrupt: bool = False
    """For `deny`: stop the turn as well."""


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One call of a finished batch, as PostToolBatch hooks see it (`tool_calls[]`)."""

    tool_name: str
    tool_input: Mapping[str, Any]
    tool_use_id: str
    tool_response: Any
    """The tool_result content the model receives (a string or content blocks)."""

    @classmethod
    def batch(
        cls, uses: Sequence[ToolUseBlock], results: Sequence[Message]
    ) -> list[ToolCallRecord]:
        """Each call of a batch with the result content the model receives."""
        content: dict[str, Any] = {}
        for message in results:
            if isinstance(message, UserMessage) and not isinstance(message.content, str):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        body = block.content
                        wire = body if isinstance(body, str) else [block_to_api(b) for b in body]
                        content[block.tool_use_id] = wire
        return [cls(use.name, dict(use.input), use.id, content.get(use.id)) for use in uses]


class LoopHooks(Protocol):
    """Hook points the loop calls itself (a `HookRunner` has them)."""

    async def post_tool_batch(self, calls: Sequence[ToolCallRecord]) -> HookOutcome:
        """After every call of a batch resolved, before the next model call: `blocked` or
        `stop_reason` ends the loop, `additional_context` goes to the model."""
        ...

    async def stop_failure(self, error: BaseException, last_message: str) -> None:
        """The turn ended on an API error (instead of Stop hooks); output is ignored."""
        ...
