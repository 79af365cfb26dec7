"""The fixed texts the loop injects. Kept together so they are easy to review and tune."""

from __future__ import annotations

MAX_OUTPUT_RECOVERY = (
    "Output token limit hit. Resume directly — no apology, no recap of what you were doing. "
    "Pick up mid-thought if that is where the cut happened. Break remaining work into "
    "smaller pieces."
)

INTERRUPTED_STREAMING = "[Request interrupted by user]"
INTERRUPTED_TOOLS = "[Request interrupted by user for tool use]"
TOOL_INTERRUPTED = "Tool call was interrupted by the user before it finished."
STREAM_CUT_BEFORE_RESULT = "The model's response was cut off; this tool call did not run."


def token_budget_nudge(used: int, budget: int) -> str:
    """The meta message that asks the model to keep going while budget remains."""
    pct = round(100 * used / budget) if budget else 100
    return (
        f"Stopped at {pct}% of the token budget ({used:,} / {budget:,} output tokens). "
        "Keep working — do not summarize."
    )
