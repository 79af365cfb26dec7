"""The compact prompt: what a summary must keep so that a long task still converges.

Summaries that keep the goal but lose the execution frontier (what is done, what is next) make
long tasks loop forever. The prompt therefore asks for the user's messages, the pending tasks,
the current work and the next step with direct quotes, besides the technical content.
"""

from __future__ import annotations

import re

NO_TOOLS_PREAMBLE = (
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. Tool calls will be rejected "
    "and waste the only turn you have. Your entire response must be the summary below."
)

_SECTIONS = """\
1. Primary Request and Intent: every explicit request and intent of the user, in detail.
2. Key Technical Concepts: technologies, frameworks, conventions and constraints discussed.
3. Files and Code Sections: every file examined, modified or created, why it matters, and
   the important code snippets (full snippets for recent edits).
4. Errors and Fixes: every error met and how it was fixed, including the user's feedback.
5. Problem Solving: problems solved and troubleshooting still going on.
6. All User Messages: list ALL messages the user wrote (not tool results), verbatim when
   short, otherwise a faithful paraphrase. They record the user's intent and its changes.
   Keep every fact, name, number and constraint the user stated, even if it seemed minor.
7. Pending Tasks: tasks explicitly asked for and not yet done (include the todo list).
8. Current Work: precisely what was being worked on immediately before this summary, with
   file names and code.
9. Optional Next Step: the next step, in line with the user's most recent explicit request
   and the work just before this summary. Quote the latest messages directly (verbatim) so
   the task is resumed exactly where it stopped. Do not start unrelated work."""

COMPACT_PROMPT = f"""{NO_TOOLS_PREAMBLE}

Your task is to write a detailed summary of the conversation so far. It will replace the
conversation: the work must be able to continue from it without losing any context — what
was asked, what is done, and what comes next.

First think in <analysis> tags: go through the conversation chronologically and note each
user request, your approach, key decisions, code, file names, errors and user feedback.
Then write the summary in <summary> tags with these sections:

{_SECTIONS}

<example>
<analysis>[your chronological analysis]</analysis>
<summary>
1. Primary Request and Intent: ...
2. Key Technical Concepts: - ...
3. Files and Code Sections: - path/to/file.py: why it matters; snippet ...
4. Errors and Fixes: - ...
5. Problem Solving: ...
6. All User Messages: - "..."
7. Pending Tasks: - ...
8. Current Work: ...
9. Optional Next Step: ... (quote: "...")
</summary>
</example>"""


def build_compact_prompt(custom_instructions: str | None = None) -> str:
    """The instruction appended (as the last user message) to the normal request."""
    if custom_instructions and custom_instructions.strip():
        return (
            f"{COMPACT_PROMPT}\n\nAdditional instructions from the user for this summary:\n"
            f"{custom_instructions.strip()}"
        )
    return COMPACT_PROMPT


def format_summary(raw: str) -> str:
    """The model's answer without its <analysis> scratchpad; the <summary> tags become a
    heading. Text outside the tags is kept when no tags were used."""
    text = re.sub(r"<analysis>.*?</analysis>", "", raw, flags=re.DOTALL)
    match = re.search(r"<summary>(.*?)(?:</summary>|$)", text, flags=re.DOTALL)
    if match:
        text = "Summary:\n" + match.group(1).strip()
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def summary_message_text(summary: str, *, suppress_follow_up: bool) -> str:
    """The text of the user message that carries the summary into the new history."""
    text = (
        "This session is being continued from a previous conversation that ran out of "
        "context. The summary below covers the earlier portion of the conversation.\n\n"
        f"{summary}"
    )
    if suppress_follow_up:
        text += (
            "\n\nPlease continue the conversation from where it left off without asking the "
            "user any further questions. Continue with the last task you were asked to work on."
        )
    return text
