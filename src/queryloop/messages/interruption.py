"""The words for an interrupted tool call: why it has no real result, and what the model is told.

A tool call that was interrupted before its tool answered still needs a tool_result (the API
rejects an unanswered tool_use). queryloop answers it itself, in one of a few situations:

======================  ========================================================================
`Interruption`          who answers, and when
======================  ========================================================================
`ABORTED`               the loop: the user aborted while the response streamed
`TOOLS_ABORTED`         the tool executor: the user aborted while the tools ran
`CANCELLED`             the Agent: its turn was cancelled (the task, not the abort signal)
`RESUMED`               the transcript loader: the session was killed while its tools ran
`TOOL_STOPPED`          a tool itself (an MCP tool) stopped on the abort signal
`UNPAIRED`              the request's pairing repair, last resort (wire form: no flag there)
======================  ========================================================================

The texts differ on purpose: each names what happened (by the user, a cancelled turn, a resumed
session); `TOOLS_ABORTED` uses Claude Code's words. Such a result carries its `Interruption` in
`ToolResultBlock.interrupted`, persisted in the transcript: resume
(`queryloop.loop.resume`) recognises a stand-in by that flag, never by its text.
`MAY_HAVE_RUN` is different: resume's settled answer for a call not safe to repeat; it is not a
stand-in, so it carries no flag and a second resume leaves it alone.

Transcripts written before the flag existed carry only the text: `legacy_interruption` maps
those texts back to their `Interruption` (the transcript decoder calls it, and nothing else).
"""

from __future__ import annotations

import re
from enum import StrEnum


class Interruption(StrEnum):
    """Why queryloop answered a tool call instead of its tool. The value is the persisted
    name (stable); `text` is what the model is told."""

    ABORTED = "aborted"
    TOOLS_ABORTED = "tools_aborted"
    CANCELLED = "cancelled"
    RESUMED = "resumed"
    TOOL_STOPPED = "tool_stopped"
    UNPAIRED = "unpaired"

    def text(self, tool_name: str = "") -> str:
        """The result text for a call of `tool_name` (only `TOOL_STOPPED` names the tool)."""
        return _TEXTS[self].format(tool=tool_name)


INTERRUPTED_BY_USER = "[Request interrupted by user]"
"""The user-message notice after an abort while the response streamed."""
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"
"""The user-message notice after an abort while tools ran (and those tools' result text)."""

_TEXTS: dict[Interruption, str] = {
    Interruption.ABORTED: "Tool call was interrupted by the user before it finished.",
    Interruption.TOOLS_ABORTED: INTERRUPTED_FOR_TOOL_USE,
    Interruption.CANCELLED: "Tool call was interrupted before it finished.",
    Interruption.RESUMED: "[Tool execution was interrupted; the session was resumed]",
    Interruption.TOOL_STOPPED: "{tool} was interrupted by the user",
    Interruption.UNPAIRED: "Tool call was interrupted before it produced a result.",
}

MAY_HAVE_RUN = (
    "Tool call was interrupted before its result was recorded; it may or may not have taken "
    "effect. Check the current state before repeating it."
)
"""Resume's answer for an interrupted call that is not safe to re-run (not a stand-in)."""


def _pattern(template: str) -> re.Pattern[str]:
    # A tool name never holds a blank, so "{tool}" reads back as one word.
    return re.compile(re.escape(template).replace(re.escape("{tool}"), r"\S+"))


# UNPAIRED lives only in requests, never in a transcript.
_LEGACY = tuple((w, _pattern(_TEXTS[w])) for w in Interruption if w is not Interruption.UNPAIRED)


def legacy_interruption(content: object, *, is_error: bool) -> Interruption | None:
    """The `Interruption` an earlier version meant by an is_error tool_result with exactly
    this text (those transcripts carry no flag), or None for any other result."""
    if not is_error or not isinstance(content, str):
        return None
    return next((why for why, pattern in _LEGACY if pattern.fullmatch(content)), None)
