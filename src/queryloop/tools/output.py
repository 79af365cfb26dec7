"""Shaping tool output for the model: head-and-tail truncation and validation messages.

A huge tool result is cut to a head and a tail with a note of how much was removed, so the
model still sees how the output starts and ends (the reference system replaces it with a bare
notice). Spilling the full text to a file is the compaction layer's job.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..messages.blocks import DocumentBlock, ImageBlock, TextBlock

ResultContent = str | tuple[TextBlock | ImageBlock | DocumentBlock, ...]

HEAD_SHARE = 0.7
"""The share of the kept characters taken from the start; the rest comes from the end."""


def truncate_text(text: str, max_chars: int) -> str:
    """`text` if it fits, else its head and tail around a note saying how much was cut.

    The result is at most about `max_chars` plus the length of the note.
    """
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    head_len = int(max_chars * HEAD_SHARE)
    tail_len = max_chars - head_len
    cut = len(text) - head_len - tail_len
    head, tail = text[:head_len], text[len(text) - tail_len :] if tail_len else ""
    note = (
        f"\n\n[... {cut} characters truncated: showing the first {head_len} and the last "
        f"{tail_len} of {len(text)} characters ...]\n\n"
    )
    return head + note + tail


def truncate_content(content: ResultContent, max_chars: int) -> ResultContent:
    """Truncate the text of a tool result; image and document blocks are kept as they are."""
    if isinstance(content, str):
        return truncate_text(content, max_chars)
    total = sum(len(b.text) for b in content if isinstance(b, TextBlock))
    if total <= max_chars:
        return content
    # Share the budget between text blocks in proportion to their size.
    return tuple(
        TextBlock(text=truncate_text(b.text, max(1, max_chars * len(b.text) // total)))
        if isinstance(b, TextBlock)
        else b
        for b in content
    )


def content_text(content: ResultContent) -> str:
    """The text of a tool result's content (non-text blocks are skipped)."""
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


def format_validation_error(tool_name: str, error: ValidationError) -> str:
    """An actionable message for bad tool input, one line per problem.

    Example: "InputValidationError: Edit failed: `old_string` is required".
    """
    problems = [_describe(e) for e in error.errors()]
    if len(problems) == 1:
        return f"InputValidationError: {tool_name} failed: {problems[0]}"
    lines = "\n".join(f"- {p}" for p in problems)
    return f"InputValidationError: {tool_name} failed due to the following issues:\n{lines}"


def _describe(err: ErrorDetails) -> str:
    loc = ".".join(str(part) for part in err["loc"]) or "input"
    kind = err["type"]
    if kind == "missing":
        return f"`{loc}` is required"
    if kind == "extra_forbidden":
        return f"an unexpected parameter `{loc}` was provided"
    got = repr(err.get("input"))
    if len(got) > 80:
        got = got[:77] + "..."
    return f"`{loc}`: {err['msg']} (got {got})"
