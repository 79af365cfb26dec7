"""The words and numbers of a session as people see them: pure functions of plain data
(tool inputs shortened, results collapsed, cache and context shares, the status line, the
cost lines, diff markup, recent exchanges), unit-tested without a terminal. `render.Renderer`
puts them on a rich Console; print mode and the slash commands use them too."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..loop.events import (
    ApiRetry,
)
from ..messages.blocks import TextBlock, ToolResultBlock
from ..messages.types import (
    AssistantMessage,
    UserMessage,
)
from ..messages.usage import Usage
from ..providers.errors import brief
from .markup import escape_markup

if TYPE_CHECKING:
    from ..report.costs import CostBreakdown

RESULT_LINES = 4
_INPUT_KEYS = ("command", "file_path", "pattern", "path", "url", "query", "description")
CATEGORIES = ("system", "tools", "memory", "messages", "free")
COLORS = {"system": "magenta", "tools": "cyan", "memory": "yellow", "messages": "green",
           "free": "grey37"}  # fmt: skip


def short_input(name: str, input: Mapping[str, Any], width: int = 60) -> str:
    """A one-line form of a tool input: its main field, else compact JSON, cut to `width`."""
    text = next((str(input[k]) for k in _INPUT_KEYS if input.get(k)), "")
    if name == "TodoWrite" and isinstance(input.get("todos"), list):
        text = f"{len(input['todos'])} todos"
    if not text:
        text = json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def result_text(block: ToolResultBlock) -> str:
    """The text of a tool_result (images and documents as placeholders)."""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if isinstance(b, TextBlock) else f"[{b.type}]" for b in block.content)


def collapse(text: str, max_lines: int = RESULT_LINES) -> tuple[list[str], int]:
    """The first `max_lines` non-empty-trimmed lines of `text` and how many more there are."""
    lines = text.strip("\n").splitlines() or ["(no output)"]
    return lines[:max_lines], max(0, len(lines) - max_lines)


def cache_hit_share(usage: Usage) -> float:
    """Cache reads as a share of all prompt tokens (0.0 when nothing was sent)."""
    total = usage.total_input_tokens
    return usage.cache_read_input_tokens / total if total else 0.0


def cost_lines(cost_usd: float, turns: int, usage: Usage, costs: CostBreakdown) -> list[str]:
    """/cost: the cost, what caching saved, each compaction, the tokens by kind."""
    from ..report.costs import caching_line, compaction_line

    one_hour = usage.cache_creation_1h_input_tokens
    writes = f"{usage.cache_creation_input_tokens:,} cache write"
    if one_hour:
        writes += f" ({one_hour:,} of them 1-hour)"
    lines = [
        f"Total cost:     ${cost_usd:.4f}",
        f"Caching saved:  {caching_line(costs)}",
        f"Compactions:    {len(costs.compactions) or 'none'}",
        *(f"  {i}. {compaction_line(c)}" for i, c in enumerate(costs.compactions, 1)),
        f"Model turns:    {turns}",
        f"Input tokens:   {usage.input_tokens:,} uncached · {writes} · "
        f"{usage.cache_read_input_tokens:,} cache read",
        f"Output tokens:  {usage.output_tokens:,}",
        f"Cache hits:     {cache_hit_share(usage):.0%} of prompt tokens",
    ]
    return lines


def context_share(context: Mapping[str, int]) -> float | None:
    """Used share of the window from `Agent.context_usage()`, None when unknown."""
    window = context.get("window") or 0
    if window <= 0:
        return None
    used = window - context.get("free", window)
    return max(0.0, min(1.0, used / window))


def context_bar_parts(context: Mapping[str, int], width: int = 50) -> list[tuple[str, int, int]]:
    """(category, tokens, cells) for the /context bar; cells add up to `width`."""
    window = context.get("window") or sum(context.get(c, 0) for c in CATEGORIES) or 1
    parts: list[tuple[str, int, int]] = []
    used_cells = 0
    for category in CATEGORIES:
        tokens = max(0, context.get(category, 0))
        cells = round(tokens / window * width)
        if tokens and not cells:
            cells = 1  # a category that exists is always visible
        parts.append((category, tokens, cells))
        used_cells += cells
    # Rounding error goes to (or comes from) the free part so the bar has a fixed width.
    name, tokens, cells = parts[-1]
    parts[-1] = (name, tokens, max(0, cells + width - used_cells))
    return parts


def compact_headroom(context: Mapping[str, int]) -> float | None:
    """The share of the room before auto-compaction starts that is still free (1.0 empty,
    0.0 at the threshold), from `Agent.context_usage()`; None when unknown."""
    threshold = context.get("autocompact") or 0
    window = context.get("window") or 0
    if threshold <= 0 or window <= 0:
        return None
    used = window - context.get("free", window)
    return max(0.0, min(1.0, 1.0 - used / threshold))


def status_text(model: str, context: Mapping[str, int], usage: Usage, cost_usd: float) -> str:
    """The bottom status line: model · context left before auto-compact · cache hits · cost.

    The context figure is relative to where compaction starts (not to the whole window,
    which compaction never lets a conversation fill), so it moves turn by turn."""
    headroom = compact_headroom(context)
    share = context_share(context)
    if headroom is not None:
        ctx = f"{headroom:.0%} context left before auto-compact"
    elif share is not None:
        ctx = f"{share:.0%} context"
    else:
        ctx = "context n/a"
    return f"{model} · {ctx} · {cache_hit_share(usage):.0%} cache hits · ${cost_usd:.4f}"


def retry_text(event: ApiRetry) -> str:
    """The line that says a failed request is tried again: `API request failed (could not
    connect); retrying in 1.1s · attempt 1/4`."""
    return (
        f"API request failed ({brief(event.error)}); retrying in {event.delay_s:.1f}s · "
        f"attempt {event.attempt}/{event.max_retries}"
    )


def waiting_text(label: str, elapsed_s: float, tokens: int) -> str:
    """The spinner's words: `Thinking… 4s · ↓ 120 tokens · Ctrl-C to interrupt`."""
    parts = [f"{label}… {int(elapsed_s)}s"]
    if tokens > 0:
        parts.append(f"↓ {tokens:,} tokens")
    parts.append("Ctrl-C to interrupt")
    return " · ".join(parts)


def diff_markup(lines: list[str], max_lines: int = 40) -> list[str]:
    """Rich markup for unified-diff lines: additions green, removals red, hunks cyan."""
    out: list[str] = []
    for line in lines[:max_lines]:
        text = escape_markup(line[:200])
        if line.startswith(("+++", "---")):
            out.append(f"[bold]{text}[/]")
        elif line.startswith("+"):
            out.append(f"[green]{text}[/]")
        elif line.startswith("-"):
            out.append(f"[red]{text}[/]")
        elif line.startswith("@@"):
            out.append(f"[cyan]{text}[/]")
        else:
            out.append(f"[dim]{text}[/]")
    if len(lines) > max_lines:
        out.append(f"[dim]… {len(lines) - max_lines} more diff lines[/]")
    return out


def recent_exchanges(messages: list[Any], count: int = 3) -> list[tuple[str, str]]:
    """The last `count` (prompt, answer) pairs of a conversation: the person's prompts (not
    meta text, not tool results, not a compaction summary) and the text of the last
    assistant message before the next prompt ("" while none)."""
    from ..messages.constructors import text_of

    pairs: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if message.is_meta or message.is_compact_summary:
                continue
            if not isinstance(message.content, str) and any(
                isinstance(b, ToolResultBlock) for b in message.content
            ):
                continue
            prompt = text_of(message).strip()
            if prompt and not prompt.startswith("[Request interrupted"):
                pairs.append((prompt, ""))
        elif isinstance(message, AssistantMessage) and pairs:
            answer = text_of(message).strip()
            if answer:
                pairs[-1] = (pairs[-1][0], answer)
    return pairs[-count:]
