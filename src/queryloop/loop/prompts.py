"""The fixed texts the loop injects. Kept together so they are easy to review and tune.

The words for an interrupted call and the abort notices are shared with the tool executor,
the Agent and the transcript loader: they live in `messages.interruption`.
"""

from __future__ import annotations

MAX_OUTPUT_RECOVERY = (
    "Output token limit hit. Resume directly — no apology, no recap of what you were doing. "
    "Pick up mid-thought if that is where the cut happened. Break remaining work into "
    "smaller pieces."
)


def token_budget_nudge(used: int, budget: int) -> str:
    """The meta message that asks the model to keep going while budget remains."""
    pct = round(100 * used / budget) if budget else 100
    return (
        f"Stopped at {pct}% of the token budget ({used:,} / {budget:,} output tokens). "
        "Keep working — do not summarize."
    )
