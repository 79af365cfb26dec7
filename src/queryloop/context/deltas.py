"""Delta attachments: announce slowly changing sets by difference, with no stored state.

Each delta provider

1. rebuilds what the model was told by scanning the history for earlier attachments of its
   own type (names added, then removed, in order),
2. compares that with the current set,
3. emits only the difference -- nothing when nothing changed.

Because the announced state lives in the history itself, a compaction that drops the old
attachments empties it, and the next turn sends a full announcement (`is_initial`) with no
special "after compaction" code. The tool list and the system prompt never change when MCP
servers, deferred tools or agent types come and go, so the prompt cache survives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..messages.types import Attachment, Message
from .kinds import AttachmentType
from .scan import attachments_of

if TYPE_CHECKING:
    from .attachments import AttachmentContext


def announced_names(
    messages: Sequence[Message], kind: str, added_key: str, removed_key: str
) -> set[str]:
    """The names the history's `kind` deltas left announced (added minus later removed)."""
    announced: set[str] = set()
    for m in attachments_of(messages, kind):
        announced.update(_names(m.attachment.data.get(added_key)))
        announced.difference_update(_names(m.attachment.data.get(removed_key)))
    return announced


def diff_names(announced: set[str], current: Iterable[str]) -> tuple[list[str], list[str]]:
    """(added, removed), each sorted so the same change always renders the same bytes."""
    now = set(current)
    return sorted(now - announced), sorted(announced - now)


async def deferred_tools_delta(
    ctx: AttachmentContext, messages: Sequence[Message]
) -> list[Attachment]:
    """Names of deferred tools (loadable with ToolSearch) added or removed since last told."""
    kind = AttachmentType.DEFERRED_TOOLS_DELTA
    announced = announced_names(messages, kind, "added_names", "removed_names")
    added, removed = diff_names(announced, ctx.deferred_tools)
    if not added and not removed:
        return []
    data = {"added_names": added, "removed_names": removed, "is_initial": not announced}
    return [Attachment(kind, data)]


async def mcp_instructions_delta(
    ctx: AttachmentContext, messages: Sequence[Message]
) -> list[Attachment]:
    """Instructions of MCP servers that connected, and names of those that left, since last told.

    Tracked by server name: a server whose instructions change without reconnecting under a
    new name is not re-announced.
    """
    kind = AttachmentType.MCP_INSTRUCTIONS_DELTA
    announced = announced_names(messages, kind, "added_names", "removed_names")
    current = {name: text for name, text in ctx.mcp_instructions.items() if text.strip()}
    added, removed = diff_names(announced, current)
    if not added and not removed:
        return []
    data: dict[str, Any] = {
        "added_names": added,
        "added_blocks": [f"## {name}\n{current[name].strip()}" for name in added],
        "removed_names": removed,
        "is_initial": not announced,
    }
    return [Attachment(kind, data)]


async def agent_listing_delta(
    ctx: AttachmentContext, messages: Sequence[Message]
) -> list[Attachment]:
    """Sub-agent types added (with their one-line descriptions) or removed since last told."""
    kind = AttachmentType.AGENT_LISTING_DELTA
    announced = announced_names(messages, kind, "added_types", "removed_types")
    added, removed = diff_names(announced, ctx.agent_types)
    if not added and not removed:
        return []
    data: dict[str, Any] = {
        "added_types": added,
        "added_lines": [format_agent_line(t, ctx.agent_types) for t in added],
        "removed_types": removed,
        "is_initial": not announced,
    }
    return [Attachment(kind, data)]


async def skill_listing_delta(
    ctx: AttachmentContext, messages: Sequence[Message]
) -> list[Attachment]:
    """Skills added (name and description) or removed since last told. Only the listing:
    a skill's instructions load when the model calls the Skill tool or the user types
    `/<skill-name>` (`queryloop.skills`)."""
    kind = AttachmentType.SKILL_LISTING_DELTA
    announced = announced_names(messages, kind, "added_names", "removed_names")
    added, removed = diff_names(announced, ctx.skills)
    if not added and not removed:
        return []
    data: dict[str, Any] = {
        "added_names": added,
        "added_lines": [format_agent_line(name, ctx.skills) for name in added],
        "removed_names": removed,
        "is_initial": not announced,
    }
    return [Attachment(kind, data)]


def format_agent_line(agent_type: str, agents: Mapping[str, str]) -> str:
    """`- type: description` (the description may be empty)."""
    description = agents.get(agent_type, "").strip()
    return f"- {agent_type}: {description}" if description else f"- {agent_type}"


def _names(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return []
