"""Every reason the query loop goes on, and every reason it stops: in one place."""

from __future__ import annotations

from enum import StrEnum


class Continue(StrEnum):
    """Why the loop started another iteration (recorded as `State.transition`)."""

    NEXT_TURN = "next_turn"
    """The model called tools; their results were appended."""
    MAX_OUTPUT_TOKENS_ESCALATE = "max_output_tokens_escalate"
    """Output was cut at max_tokens: retry the same request with the model's maximum."""
    MAX_OUTPUT_TOKENS_RECOVERY = "max_output_tokens_recovery"
    """Still cut: a meta message asks the model to resume where it stopped."""
    REACTIVE_COMPACT_RETRY = "reactive_compact_retry"
    """The API said prompt too long: compacted, retrying."""
    COLLAPSE_DRAIN_RETRY = "collapse_drain_retry"
    """The API said prompt too long: staged context collapses were committed, retrying."""
    STOP_HOOK_BLOCKING = "stop_hook_blocking"
    """A stop hook blocked the stop; its message was injected."""
    TOKEN_BUDGET_CONTINUATION = "token_budget_continuation"
    """The model stopped with token budget left; nudged to go on."""
    STRUCTURED_OUTPUT_REQUIRED = "structured_output_required"
    """The model stopped without returning the prompt's structured output; told to call
    the StructuredOutput tool."""


class Terminal(StrEnum):
    """Why the loop ended (the reason of the last event, `TerminalEvent`)."""

    COMPLETED = "completed"
    BLOCKING_LIMIT = "blocking_limit"
    PROMPT_TOO_LONG = "prompt_too_long"
    IMAGE_ERROR = "image_error"
    MODEL_ERROR = "model_error"
    ABORTED_STREAMING = "aborted_streaming"
    ABORTED_TOOLS = "aborted_tools"
    STOP_HOOK_PREVENTED = "stop_hook_prevented"
    HOOK_STOPPED = "hook_stopped"
    MAX_TURNS = "max_turns"
    DEFERRED = "deferred"
    """A tool call was put off (a PreToolUse hook's `defer`, a `can_use_tool` deferral): its
    tool_use waits, unanswered, for a decision (`Agent.resume(..., decisions=...)`)."""
    MAX_STRUCTURED_OUTPUT_RETRIES = "max_structured_output_retries"
    """No valid structured output after the allowed attempts (the Claude Agent SDK's
    `error_max_structured_output_retries`)."""
