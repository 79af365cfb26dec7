"""What a hook callback receives and returns (the SDK's TypedDicts), and `HookMatcher`.

A callback is `async def hook(input_data, tool_use_id, context) -> dict`. `input_data` is the
event as Claude Code's hooks read it (queryloop's hook runner builds the same JSON for its
shell hooks, docs/hooks.md); the returned dict is Claude Code's hook output, with Python's
spellings `continue_` and `async_` for the keywords `continue` and `async`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

HookEvent: TypeAlias = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SubagentStart",
    "PermissionRequest",
]
"""The events the SDK types; queryloop also fires the rest of Claude Code's events
(SessionStart, SessionEnd, ...), and a callback may be registered for any of them."""


class BaseHookInput(TypedDict):
    """Fields every event carries."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: NotRequired[str]


class _SubagentFields(TypedDict, total=False):
    agent_id: str
    agent_type: str


class PreToolUseHookInput(BaseHookInput, _SubagentFields):
    """Before a tool call runs (it may be denied, asked about or changed)."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput, _SubagentFields):
    """After a tool call succeeded."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: Any
    tool_use_id: str


class PostToolUseFailureHookInput(BaseHookInput, _SubagentFields):
    """After a tool call failed."""

    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: NotRequired[bool]


class UserPromptSubmitHookInput(BaseHookInput):
    """A prompt is about to be sent."""

    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class StopHookInput(BaseHookInput):
    """The agent is about to stop."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool


class SubagentStopHookInput(BaseHookInput):
    """A subagent is about to stop."""

    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_transcript_path: str
    agent_type: str


class PreCompactHookInput(BaseHookInput):
    """The history is about to be summarised."""

    hook_event_name: Literal["PreCompact"]
    trigger: Literal["manual", "auto"]
    custom_instructions: str | None


class NotificationHookInput(BaseHookInput):
    """Something waits for the user."""

    hook_event_name: Literal["Notification"]
    message: str
    title: NotRequired[str]
    notification_type: str


class SubagentStartHookInput(BaseHookInput):
    """A subagent starts."""

    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class PermissionRequestHookInput(BaseHookInput, _SubagentFields):
    """A tool call needs approval."""

    hook_event_name: Literal["PermissionRequest"]
    tool_name: str
    tool_input: dict[str, Any]
    permission_suggestions: NotRequired[list[Any]]


HookInput: TypeAlias = (
    PreToolUseHookInput
    | PostToolUseHookInput
    | PostToolUseFailureHookInput
    | UserPromptSubmitHookInput
    | StopHookInput
    | SubagentStopHookInput
    | PreCompactHookInput
    | NotificationHookInput
    | SubagentStartHookInput
    | PermissionRequestHookInput
)


class PreToolUseHookSpecificOutput(TypedDict):
    """PreToolUse: allow, deny or ask about the call, change its input, add context."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    """PostToolUse: context for the model."""

    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedMCPToolOutput: NotRequired[Any]


class PostToolUseFailureHookSpecificOutput(TypedDict):
    """PostToolUseFailure: context for the model."""

    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    """UserPromptSubmit: context added beside the prompt."""

    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]


class SessionStartHookSpecificOutput(TypedDict):
    """SessionStart: context for the whole session."""

    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]


class NotificationHookSpecificOutput(TypedDict):
    """Notification: context for the model."""

    hookEventName: Literal["Notification"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    """SubagentStart: context for the subagent."""

    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


class PermissionRequestHookSpecificOutput(TypedDict):
    """PermissionRequest: the decision (`{"behavior": "allow" | "deny", ...}`)."""

    hookEventName: Literal["PermissionRequest"]
    decision: dict[str, Any]


HookSpecificOutput: TypeAlias = (
    PreToolUseHookSpecificOutput
    | PostToolUseHookSpecificOutput
    | PostToolUseFailureHookSpecificOutput
    | UserPromptSubmitHookSpecificOutput
    | SessionStartHookSpecificOutput
    | NotificationHookSpecificOutput
    | SubagentStartHookSpecificOutput
    | PermissionRequestHookSpecificOutput
)


class AsyncHookJSONOutput(TypedDict):
    """`{"async_": True}`: the SDK's way to say "do not wait"; a callback has returned by
    the time queryloop reads it, so this is the same as no output."""

    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict):
    """Claude Code's hook output: `continue_` False stops the agent (`stopReason` says
    why), `decision: "block"` with `reason` blocks (Stop, PostToolUse, UserPromptSubmit),
    `systemMessage` is a notice for the user, `hookSpecificOutput` is per event."""

    continue_: NotRequired[bool]
    suppressOutput: NotRequired[bool]
    stopReason: NotRequired[str]
    decision: NotRequired[Literal["block"]]
    systemMessage: NotRequired[str]
    reason: NotRequired[str]
    hookSpecificOutput: NotRequired[HookSpecificOutput]


HookJSONOutput: TypeAlias = AsyncHookJSONOutput | SyncHookJSONOutput


class HookContext(TypedDict):
    """The third argument of a callback. `signal` is None (as in the SDK)."""

    signal: Any | None


HookCallback: TypeAlias = Callable[[Any, "str | None", HookContext], Awaitable[Any]]
"""`async (input_data: HookInput, tool_use_id, context) -> HookJSONOutput`."""


@dataclass
class HookMatcher:
    """Callbacks for the events whose target `matcher` selects: a tool name (`"Bash"`),
    names joined by `|` (`"Write|Edit"`), a regular expression (`"mcp__.*"`); None or
    `"*"` matches everything. `timeout` is seconds per callback (default 60)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None
