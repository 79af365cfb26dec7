"""`/agents` and `/permissions`: what the session loaded, and where each piece came from.

Claude Code has both (`/agents` manages subagents, `/permissions` views and edits the tool
rules: code.claude.com/docs/en/slash-commands); here they list, read-only: the agents with
their source and file, and the allow/ask/deny rules in force with the file (or the command
line, or "session" for an answer given during it) each came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .markup import escape_markup

if TYPE_CHECKING:
    from .host import CommandHost


async def agents_view(host: CommandHost, _: str) -> bool:
    """`/agents`: the subagent types that loaded, with their source and file."""
    agents = host.agent.agents
    if not agents:
        host.console.print("[dim]No agents loaded.[/]")
        return True
    width = max(len(a.name) for a in agents)
    for agent in sorted(agents, key=lambda a: (a.source.value, a.name)):
        where = f"  {_relative(host, agent.path)}" if agent.path is not None else ""
        host.console.print(
            f"  [bold]{escape_markup(agent.name):<{width}}[/]  {agent.source.value:<8}"
            f"[dim]{escape_markup(where)}[/]",
            highlight=False,
        )
    host.console.print("[dim]The model starts one with the Agent tool (subagent_type).[/]")
    return True


async def permissions_view(host: CommandHost, _: str) -> bool:
    """`/permissions`: the mode and the effective rules, each with its source."""
    rules = host.agent.permission_rules
    host.console.print(f"  permission mode: [bold]{host.agent.permission_mode}[/]")
    for behavior, listed in (("allow", rules.allow), ("ask", rules.ask), ("deny", rules.deny)):
        host.console.print(f"  [bold]{behavior}[/]" + ("" if listed else " [dim](none)[/]"))
        for rule in listed:
            host.console.print(
                f"    {escape_markup(str(rule))}  [dim]{escape_markup(rule.source)}[/]",
                highlight=False,
            )
    host.console.print("[dim]Deny wins over ask, ask over allow (docs/settings.md).[/]")
    return True


def _relative(host: CommandHost, path: Path) -> str:
    try:
        return str(path.relative_to(host.cwd))
    except ValueError:
        return str(path)
