"""Tool-result budget: oversized tool results go to a file, the model gets a useful preview.

Runs first in the pipeline. A single result above its tool's maximum, or the largest results
of a turn whose results together exceed the per-message budget, are written to
``<session_dir>/tool-results/<tool_use_id>.txt`` and replaced by a preview: the first ~2,000
and last ~1,000 characters, the full size, and the path with an invitation to Read it. The
reference system replaces such output by a bare notice; the model then never sees how the
output starts.

Prompt-cache safety: every decision is remembered by tool_use_id in a `BudgetCache`, so a
result that was sent verbatim stays verbatim and a replaced one is replaced by the very same
bytes on every later request. tool_use ids are never changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..messages.blocks import TextBlock, ToolResultBlock, UserContentBlock
from ..messages.types import AssistantMessage, Message, UserMessage
from .rounds import tool_names_by_id

PREVIEW_HEAD_CHARS = 2_000
PREVIEW_TAIL_CHARS = 1_000
SPILL_TAG = "<persisted-output>"
PREVIEW_SIZE = PREVIEW_HEAD_CHARS + PREVIEW_TAIL_CHARS + 500
"""Roughly how long a preview is, for the per-message arithmetic."""

BudgetCache = MutableMapping[str, str | None]
"""tool_use_id -> replacement text, or None when the result was kept verbatim."""


@dataclass(frozen=True, slots=True)
class BudgetResult:
    """The messages with oversized results replaced, and how many were replaced now."""

    messages: list[Message]
    replaced: int


def apply_tool_result_budget(
    messages: Sequence[Message],
    *,
    session_dir: Path | None,
    per_tool_max_chars: Mapping[str, int],
    default_max_chars: int = 50_000,
    per_message_max_chars: int = 200_000,
    cache: BudgetCache | None = None,
    names: Mapping[str, str] | None = None,
) -> BudgetResult:
    """Replace oversized tool results by a preview plus the path of the full output.

    `cache` keeps decisions across calls (pass the same mapping every turn); without it
    the function is still idempotent because an already replaced result is recognised.
    `names` (tool_use id -> tool name) defaults to the tool calls found in `messages`; the
    pipeline passes the whole history's when it budgets only the newest turns."""
    decisions: BudgetCache = {} if cache is None else cache
    if names is None:
        names = tool_names_by_id(messages)
    replaced = 0
    out: list[Message] = []
    for group in _turn_groups(messages):
        fresh = _decide_group(
            [messages[i] for i in group],
            names,
            decisions,
            session_dir,
            per_tool_max_chars,
            default_max_chars,
            per_message_max_chars,
        )
        replaced += fresh
    for message in messages:
        out.append(_apply(message, decisions))
    return BudgetResult(messages=out, replaced=replaced)


def _turn_groups(messages: Sequence[Message]) -> list[list[int]]:
    """Indices of user messages that normalize into one API user message (the results of one
    assistant turn may be spread over several internal messages)."""
    groups: list[list[int]] = []
    current: list[int] = []
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            if current:
                groups.append(current)
            current = []
        elif isinstance(message, UserMessage):
            current.append(index)
    if current:
        groups.append(current)
    return groups


def _results(messages: Sequence[Message]) -> list[ToolResultBlock]:
    found: list[ToolResultBlock] = []
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            found.extend(b for b in message.content if isinstance(b, ToolResultBlock))
    return found


def result_text(block: ToolResultBlock) -> str:
    """The text of a tool result (text parts joined; images and documents ignored)."""
    if isinstance(block.content, str):
        return block.content
    return "".join(p.text for p in block.content if isinstance(p, TextBlock))


def _decide_group(
    group: Sequence[Message],
    names: Mapping[str, str],
    decisions: BudgetCache,
    session_dir: Path | None,
    per_tool: Mapping[str, int],
    default_max: int,
    per_message_max: int,
) -> int:
    """Decide every undecided result of one turn; returns how many were spilled now."""
    results = _results(group)
    pending = [b for b in results if b.tool_use_id not in decisions]
    if not pending:
        return 0
    spill: list[ToolResultBlock] = []
    keep: list[ToolResultBlock] = []
    for block in pending:
        text = result_text(block)
        limit = per_tool.get(names.get(block.tool_use_id, ""), default_max)
        (spill if len(text) > limit and not is_spilled(text) else keep).append(block)
    pending_ids = {b.tool_use_id for b in pending}
    decided = sum(
        len(_current_text(b, decisions)) for b in results if b.tool_use_id not in pending_ids
    )
    total = decided + sum(len(result_text(b)) for b in keep) + PREVIEW_SIZE * len(spill)
    # Largest first: spilling the biggest frees the most while touching the fewest results.
    for block in sorted(keep, key=lambda b: len(result_text(b)), reverse=True):
        if total <= per_message_max:
            break
        text = result_text(block)
        if is_spilled(text) or len(text) <= PREVIEW_SIZE:
            continue
        keep.remove(block)
        spill.append(block)
        total -= len(text) - PREVIEW_SIZE
    for block in keep:
        decisions[block.tool_use_id] = None
    for block in spill:
        decisions[block.tool_use_id] = _spill(block, session_dir)
    return len(spill)


def is_spilled(text: str) -> bool:
    """Whether `text` is already a preview written by this module."""
    return text.startswith(SPILL_TAG)


def _current_text(block: ToolResultBlock, decisions: BudgetCache) -> str:
    cached = decisions.get(block.tool_use_id)
    return cached if cached is not None else result_text(block)


def _safe_name(tool_use_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", tool_use_id) or "result"


def _spill(block: ToolResultBlock, session_dir: Path | None) -> str:
    text = result_text(block)
    if session_dir is None:
        return build_preview(text, None, "no session folder")
    path = session_dir / "tool-results" / f"{_safe_name(block.tool_use_id)}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        # A full disk must not end the session: the preview still carries head and tail.
        return build_preview(text, None, f"writing {path} failed: {error.strerror or error}")
    return build_preview(text, path)


def build_preview(text: str, path: Path | None, why_not_saved: str = "") -> str:
    """The replacement for an oversized result: size, where the full text is, and a preview
    of its beginning and end."""
    size = len(text.encode("utf-8"))
    head = text[:PREVIEW_HEAD_CHARS]
    tail = text[-PREVIEW_TAIL_CHARS:] if len(text) > PREVIEW_HEAD_CHARS else ""
    omitted = max(0, len(text) - len(head) - len(tail))
    if path is not None:
        where = (
            f"The full output was saved to {path}. Use the Read tool on that file "
            f"(with offset and limit) to see any part of it."
        )
    else:
        where = f"The full output could not be saved ({why_not_saved}); only this preview remains."
    lines = [
        SPILL_TAG,
        f"Output too large: {len(text):,} characters ({size:,} bytes). {where}",
        "",
        f"First {len(head):,} characters:",
        head,
    ]
    if tail:
        lines += ["", f"[... {omitted:,} characters omitted ...]", "", "Last characters:", tail]
    lines.append("</persisted-output>")
    return "\n".join(lines)


def _apply(message: Message, decisions: BudgetCache) -> Message:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message
    changed = False
    blocks: list[UserContentBlock] = []
    for block in message.content:
        new = decisions.get(block.tool_use_id) if isinstance(block, ToolResultBlock) else None
        if isinstance(block, ToolResultBlock) and new is not None and result_text(block) != new:
            blocks.append(_with_text(block, new))
            changed = True
        else:
            blocks.append(block)
    return replace(message, content=tuple(blocks)) if changed else message


def _with_text(block: ToolResultBlock, text: str) -> ToolResultBlock:
    """Swap the text of a result, keeping any image or document parts after it."""
    if isinstance(block.content, str):
        return replace(block, content=text)
    others = tuple(p for p in block.content if not isinstance(p, TextBlock))
    return replace(block, content=(TextBlock(text=text), *others))
