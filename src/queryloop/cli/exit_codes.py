"""Exit statuses of the `queryloop` command, one per kind of ending (see docs/cli.md)."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing the loop package costs ~150 ms; `--help` must not pay it
    from ..loop.reasons import Terminal


class ExitCode(IntEnum):
    """What `queryloop` exits with. Scripts may rely on these numbers."""

    OK = 0
    """The loop completed."""
    ERROR = 1
    """An unexpected internal error (a bug: please report it with --verbose output)."""
    USAGE = 2
    """A bad flag, a missing API key, an unknown session, an invalid config file."""
    MAX_TURNS = 3
    """--max-turns was reached before the model finished."""
    CONTEXT_LIMIT = 4
    """The conversation no longer fits the context window (prompt_too_long, blocking_limit)."""
    MODEL_ERROR = 5
    """The model API failed (unreachable, authentication, overloaded after retries, ...)."""
    ABORTED = 6
    """The turn was aborted (other than by Ctrl-C, which exits 130)."""
    HOOK_STOPPED = 7
    """A hook stopped the loop (hook_stopped, stop_hook_prevented)."""
    MEDIA_ERROR = 8
    """The API refused an image or document in the conversation (image_error)."""
    DEFERRED = 9
    """A tool call was deferred and awaits a decision (`--resume ID --approve/--deny ID`)."""
    STRUCTURED_OUTPUT = 10
    """No output matching `--json-schema` after the allowed attempts
    (max_structured_output_retries)."""
    INTERRUPTED = 130
    """Ctrl-C / SIGINT (128 + 2, the shell convention)."""
    OUTPUT_CLOSED = 141
    """The reader of stdout went away (`queryloop -p ... | head`): 128 + SIGPIPE, what a
    command killed by SIGPIPE reports. Nothing is printed."""


# Keyed by the Terminal values (StrEnum members hash and compare as their strings).
_BY_TERMINAL: dict[str, ExitCode] = {
    "completed": ExitCode.OK,
    "max_turns": ExitCode.MAX_TURNS,
    "prompt_too_long": ExitCode.CONTEXT_LIMIT,
    "blocking_limit": ExitCode.CONTEXT_LIMIT,
    "model_error": ExitCode.MODEL_ERROR,
    "aborted_streaming": ExitCode.ABORTED,
    "aborted_tools": ExitCode.ABORTED,
    "hook_stopped": ExitCode.HOOK_STOPPED,
    "stop_hook_prevented": ExitCode.HOOK_STOPPED,
    "image_error": ExitCode.MEDIA_ERROR,
    "deferred": ExitCode.DEFERRED,
    "max_structured_output_retries": ExitCode.STRUCTURED_OUTPUT,
}


def exit_code_for(terminal: Terminal | str, *, interrupted: bool = False) -> ExitCode:
    """The exit status for a loop that ended with `terminal` (130 if the user hit Ctrl-C)."""
    if interrupted and terminal in ("aborted_streaming", "aborted_tools"):
        return ExitCode.INTERRUPTED
    return _BY_TERMINAL.get(str(terminal), ExitCode.ERROR)
