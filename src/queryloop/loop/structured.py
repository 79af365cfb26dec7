"""Structured output in the loop: what a batch of tool calls returned through the
`StructuredOutput` tool, and the words that send the model back to it. Pure functions; the
query loop (`loop.query`) decides what happens next (docs/structured-output.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.constructors import tool_result_for
from ..messages.types import Message
from ..tools.structured_output import OUTPUT_TOOL_NAME, Accepted, StructuredOutputTool

MAX_STRUCTURED_OUTPUT_RETRIES = 5
"""Failed attempts sent back to the model before the query ends with
`max_structured_output_retries` (5: the default reported for Claude Code's
`MAX_STRUCTURED_OUTPUT_RETRIES`; docs/structured-output.md)."""

OUTPUT_REQUIRED = (
    f"You MUST call the {OUTPUT_TOOL_NAME} tool to complete this request: your final answer "
    "is its input, matching its schema. Call it now."
)
"""The nudge when the model stops without calling the tool (Claude Code's Stop-hook words)."""

NOT_CALLED = f"it answered without calling {OUTPUT_TOOL_NAME}"
"""The last error of a query whose last attempt was a stop without the tool."""


@dataclass(frozen=True, slots=True)
class BatchOutput:
    """What one batch of tool calls did with the output tool."""

    accepted: Accepted | None = None
    """The first valid call's value; None when none was valid."""
    error: str = ""
    """The last failed call's tool_result text (what the model was told); "" when none failed."""


def batch_output(
    tool: StructuredOutputTool, uses: Sequence[ToolUseBlock], results: Sequence[Message]
) -> BatchOutput:
    """The output a batch returned: the first call of `tool` that ran without error (its
    input checked again: the check is pure), else the last failure's words."""
    error = ""
    for use in uses:
        if use.name != tool.name:
            continue
        answer = tool_result_for(use.id, results)
        if answer is not None and not answer.is_error:
            verdict = tool.output.check(dict(use.input))
            if isinstance(verdict, Accepted):
                return BatchOutput(accepted=verdict)
            error = verdict.error
        else:
            error = _text(answer)
    return BatchOutput(error=error)


def retries_exhausted(failures: int, last_error: str) -> str:
    """The terminal's detail when `failures` attempts failed."""
    why = f" The last attempt: {last_error}" if last_error else ""
    return f"No valid structured output after {failures} attempts.{why}"


def _text(block: ToolResultBlock | None) -> str:
    if block is None:
        return "the call got no result"
    if isinstance(block.content, str):
        return block.content
    return "".join(getattr(b, "text", "") for b in block.content)
