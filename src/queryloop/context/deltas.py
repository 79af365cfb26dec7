"""Delta attachments: announce slowly changing sets by difference, with no stored state.

Every listing (deferred tools, MCP server instructions, sub-agent types, skills) is one
`Listing`, and one mechanism serves them all. Its provider

1. rebuilds what the model was told by scanning the history for earlier attachments of its
   own type (names added, then removed, in order),
2. compares that with the current set,
3. emits only the difference -- nothing when nothing changed.

Its renderer turns such an attachment into the text the model reads. Both depend only on
the attachment's data, so an attachment read back from a transcript renders the same bytes.

Because the announced state lives in the history itself, a compaction that drops the old
attachments empties it, and the next turn sends a full announcement (`is_initial`) with no
special "after compaction" code. The tool list and the system prompt never change when MCP
servers, deferred tools or agent types come and go, so the prompt cache survives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Listing:
    """One set the model is told about by difference: where it comes from, the data keys its
    attachments carry, and the words they read as.

    An attachment's data is `{added_key, [entries_key], removed_key, "is_initial"}` in that
    order (the transcript stores it so). `entries_key` holds one shown entry per added name
    when the model needs more than the name; without it the names are the entries.
    """

    kind: AttachmentType
    current: Callable[[AttachmentContext], Mapping[str, str]]
    """The current set: name -> what an entry shows of it (a description, instructions)."""
    first_heading: str
    """Before the added entries when nothing was announced yet (`is_initial`)."""
    later_heading: str
    """Before the added entries otherwise."""
    removed_heading: str
    """Before the removed names, one a line."""
    added_key: str = "added_names"
    removed_key: str = "removed_names"
    entries_key: str | None = None
    entry: Callable[[str, str], str] | None = None
    """An added name and its description -> its entry (with `entries_key`)."""
    entry_separator: str = "\n"

    async def delta(self, ctx: AttachmentContext, messages: Sequence[Message]) -> list[Attachment]:
        """The names added to or removed from the set since the history last told them."""
        announced = announced_names(messages, self.kind, self.added_key, self.removed_key)
        current = self.current(ctx)
        added, removed = diff_names(announced, current)
        if not added and not removed:
            return []
        data: dict[str, Any] = {self.added_key: added}
        if self.entries_key is not None and self.entry is not None:
            data[self.entries_key] = [self.entry(name, current[name]) for name in added]
        data[self.removed_key] = removed
        data["is_initial"] = not announced
        return [Attachment(self.kind, data)]

    def render(self, data: Mapping[str, Any]) -> str:
        """The text an attachment of this listing reads as (empty when it says nothing)."""
        parts: list[str] = []
        entries = data.get(self.entries_key or self.added_key)
        if entries:
            heading = self.first_heading if data.get("is_initial") else self.later_heading
            parts.append(heading + self.entry_separator.join(entries))
        if data.get(self.removed_key):
            parts.append(self.removed_heading + "\n".join(data[self.removed_key]))
        return "\n\n".join(parts)


def format_agent_line(agent_type: str, agents: Mapping[str, str]) -> str:
    """`- type: description` (the description may be empty)."""
    return _line(agent_type, agents.get(agent_type, ""))


def _line(name: str, description: str) -> str:
    description = description.strip()
    return f"- {name}: {description}" if description else f"- {name}"


def _instructions(name: str, text: str) -> str:
    return f"## {name}\n{text.strip()}"


def _deferred_heading(lead: str) -> str:
    return (
        f"The following deferred tools {lead}. Only their names are known to you: before "
        "calling one, load its definition with the ToolSearch tool (query "
        '"select:<name>" for exact names, or keywords to search).\n'
    )


def _skills_heading(lead: str) -> str:
    return (
        f"{lead} for use with the Skill tool (call it with the skill's name when a task "
        "matches its description):\n"
    )


_MCP_HEADING = (
    "# MCP Server Instructions\n\nThe following MCP servers have provided instructions "
    "for how to use their tools and resources:\n\n"
)

DEFERRED_TOOLS = Listing(
    AttachmentType.DEFERRED_TOOLS_DELTA,
    current=lambda ctx: dict.fromkeys(ctx.deferred_tools, ""),
    first_heading=_deferred_heading("are available"),
    later_heading=_deferred_heading("are now also available"),
    removed_heading="The following deferred tools are no longer available; do not call them:\n",
)
"""Names of deferred tools (loadable with ToolSearch); their schemas load through ToolSearch."""

MCP_INSTRUCTIONS = Listing(
    AttachmentType.MCP_INSTRUCTIONS_DELTA,
    # Tracked by server name: a server whose instructions change without reconnecting
    # under a new name is not re-announced.
    current=lambda ctx: {name: text for name, text in ctx.mcp_instructions.items() if text.strip()},
    first_heading=_MCP_HEADING,
    later_heading=_MCP_HEADING,
    removed_heading=(
        "The following MCP servers have disconnected; their instructions no longer apply:\n"
    ),
    entries_key="added_blocks",
    entry=_instructions,
    entry_separator="\n\n",
)
"""Instructions of MCP servers that connected, and names of those that left."""

AGENT_TYPES = Listing(
    AttachmentType.AGENT_LISTING_DELTA,
    current=lambda ctx: ctx.agent_types,
    first_heading="Available agent types for sub-agent tasks:\n",
    later_heading="New agent types available for sub-agent tasks:\n",
    removed_heading="The following agent types are no longer available:\n",
    added_key="added_types",
    removed_key="removed_types",
    entries_key="added_lines",
    entry=_line,
)
"""Sub-agent types (with their one-line descriptions)."""

SKILLS = Listing(
    AttachmentType.SKILL_LISTING_DELTA,
    current=lambda ctx: ctx.skills,
    first_heading=_skills_heading("The following skills are available"),
    later_heading=_skills_heading("New skills are available"),
    removed_heading="The following skills are no longer available:\n",
    entries_key="added_lines",
    entry=_line,
)
"""Skills (name and description). Only the listing: a skill's instructions load when the
model calls the Skill tool or the user types `/<skill-name>` (`queryloop.skills`)."""

LISTINGS: tuple[Listing, ...] = (DEFERRED_TOOLS, MCP_INSTRUCTIONS, AGENT_TYPES, SKILLS)
"""Every listing, in the order their attachments are gathered."""

deferred_tools_delta = DEFERRED_TOOLS.delta
mcp_instructions_delta = MCP_INSTRUCTIONS.delta
agent_listing_delta = AGENT_TYPES.delta
skill_listing_delta = SKILLS.delta


def _names(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return []
