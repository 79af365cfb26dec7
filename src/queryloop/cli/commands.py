"""Subcommands (`queryloop sessions`, `queryloop trust`) and the REPL's slash commands."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .args import CliOptions
from .exit_codes import ExitCode
from .markup import escape_markup
from .mcp_view import SUBCOMMANDS as MCP_SUBCOMMANDS
from .mcp_view import mcp_view

if TYPE_CHECKING:
    from ..session import SessionSummary, Transcript
    from .host import CommandHost


# Subcommands must stay light: `render` imports the loop (and with it every SDK), so the
# slash commands import it when they run.

# ---- subcommands ----------------------------------------------------------------------------


def print_sessions(cwd: Path, out: TextIO) -> int:
    """`queryloop sessions`: this folder's sessions in the session store, newest first."""
    sessions = _listed(cwd, None)
    if not sessions:
        out.write(f"no sessions yet in {cwd}\n")
        return ExitCode.OK
    out.write(
        f"{'ID':<36}  {'MODIFIED':<16}  {'PROMPTS':>7}  {'TURNS':>5}  {'COST':>8}  FIRST PROMPT\n"
    )
    for s in sessions:
        when = s.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        cost = f"${s.cost_usd:.4f}"
        out.write(
            f"{s.id:<36}  {when:<16}  {s.prompts:>7}  {s.turns:>5}  {cost:>8}  {s.first_prompt}\n"
        )
    out.write("\nresume one with: queryloop --resume ID (a unique prefix is enough)\n")
    return ExitCode.OK


def trust_folder(path: Path, out: TextIO) -> int:
    """`queryloop trust [PATH]`: record a folder as trusted."""
    from ..config.trust import trust_folder as record

    folder = path.expanduser().resolve()
    if not folder.is_dir():
        from .args import UsageError

        raise UsageError(f"{str(path)!r} is not a folder")
    settings = record(folder)
    out.write(f"trusted {folder}: its hooks, MCP servers and allow rules will run\n")
    out.write(f"(recorded in {settings}; remove it from trustedFolders to undo)\n")
    return ExitCode.OK


def show_trust(path: Path, out: TextIO) -> int:
    """`queryloop trust --show [PATH]`: what the folder's project files hold, in full, and
    whether it is trusted (the notice of an untrusted folder only counts them)."""
    from ..config import load_workspace
    from ..config.project_config import project_config
    from ..config.settings import queryloop_home
    from ..config.trust import TRUST_HINT, is_trusted

    folder = path.expanduser().resolve()
    if not folder.is_dir():
        from .args import UsageError

        raise UsageError(f"{str(path)!r} is not a folder")
    home = queryloop_home()
    holds = project_config(folder, home)
    trusted = is_trusted(folder, home)
    out.write(f"{folder} is {'trusted' if trusted else 'not trusted'}\n")
    if not holds:
        out.write("its project files hold nothing that needs trust\n")
        return ExitCode.OK
    out.write("its project files hold:\n" + "".join(f"  {p}\n" for p in holds.parts()))
    ignored = load_workspace(folder, trust_override=False).settings.ignored
    if ignored:
        out.write("in full (what runs once it is trusted):\n")
        out.write("".join(f"  {line}\n" for line in ignored))
    if not trusted:
        out.write(f"{TRUST_HINT}\n")
    return ExitCode.OK


# ---- slash commands -------------------------------------------------------------------------

SlashHandler = Callable[["CommandHost", str], Awaitable[bool]]
"""(what the command may use of the REPL, argument text) -> keep going? False exits the REPL."""


@dataclasses.dataclass(frozen=True)
class SlashCommand:
    """A REPL command: `/name [argument]`."""

    name: str
    help: str
    handler: SlashHandler
    subcommands: tuple[str, ...] = ()
    """The words it takes first (`/mcp login`), offered by Tab after the name."""


async def _help(host: CommandHost, _: str) -> bool:
    for command in COMMANDS.values():
        host.console.print(f"  [bold]/{command.name:<9}[/] {command.help}")
    for name, skill in getattr(host.agent, "slash_commands", {}).items():
        hint = f" {skill.options.argument_hint}" if skill.options.argument_hint else ""
        label = f"({skill.kind.value}, {skill.source.value})"
        host.console.print(
            f"  [bold]/{escape_markup(name)}[/]{escape_markup(hint)} [dim]{label}[/] "
            f"{escape_markup(skill.description[:70])}"
        )
    host.console.print(
        "  [dim]Esc+Enter or a trailing \\ for a new line · Ctrl-C interrupts · "
        "Ctrl-C twice (or Ctrl-D) exits[/]"
    )
    return True


async def _clear(host: CommandHost, _: str) -> bool:
    await host.agent.aclear()  # SessionEnd / SessionStart hooks around the switch
    host.console.print("[dim]Started a fresh conversation (new session).[/]")
    return True


async def _compact(host: CommandHost, arg: str) -> bool:
    before = host.agent.context_usage()
    with host.console.status("Compacting… (Ctrl-C to stop)"):
        finished = await host.interruptible(
            host.agent.compact(arg or None),
            notice="Interrupted: the conversation was not compacted.",
        )
    if not finished:
        return True
    after = host.agent.context_usage()
    used = [window - free for window, free in _used(before, after)]
    note = f" ({used[0]:,} → {used[1]:,} tokens)" if len(used) == 2 else ""
    host.console.print(f"[dim]Compacted{note}.[/]")
    return True


def _used(*contexts: dict[str, int]) -> list[tuple[int, int]]:
    return [(c["window"], c.get("free", 0)) for c in contexts if c.get("window")]


def _listed(cwd: Path, transcript: Transcript | None) -> list[SessionSummary]:
    """The sessions of `cwd` in the store `transcript` is in, else the configured one."""
    from ..session import list_sessions
    from ..session.stores import close_store
    from .agent_factory import open_cli_store

    if transcript is not None:
        return list_sessions(cwd, store=transcript.ref.store)
    store, opened = open_cli_store(CliOptions(cwd=cwd))
    try:
        return list_sessions(cwd, store=store)
    finally:
        if opened:
            close_store(store)


async def _resume(host: CommandHost, arg: str) -> bool:
    if not arg:
        sessions = _listed(host.cwd, host.agent.session.transcript)[:10]
        if not sessions:
            host.console.print("[dim]No sessions in this folder yet.[/]")
        for s in sessions:
            when = s.modified.astimezone().strftime("%Y-%m-%d %H:%M")
            host.console.print(f"  {s.id[:8]}  {when}  {s.turns:>3} turns  {s.first_prompt}")
        host.console.print("[dim]/resume ID to continue one (a prefix is enough).[/]")
        return True
    agent = await host.replace_agent(resume=arg)
    host.console.print(
        f"[dim]Resumed session {agent.session_id} ({len(agent.messages)} messages).[/]"
    )
    host.show_recent(agent.messages)
    return True


async def _cost(host: CommandHost, _: str) -> bool:
    from .render_text import cost_lines

    agent = host.agent
    lines = cost_lines(agent.cost_usd, agent.turns, agent.usage, agent.cost_breakdown())
    host.console.print("\n".join(f"  {line}" for line in lines), highlight=False)
    return True


async def _context(host: CommandHost, _: str) -> bool:
    from .render_text import CATEGORIES, COLORS, context_bar_parts

    context = host.agent.context_usage()
    if not context.get("window"):
        host.console.print("[dim]No context yet: send a prompt first.[/]")
        return True
    parts = context_bar_parts(context)
    bar = "".join(f"[{COLORS[name]}]{'█' * cells}[/]" for name, _, cells in parts)
    host.console.print(f"  {bar}")
    window = context["window"]
    for name in CATEGORIES:
        tokens = context.get(name, 0)
        label = "system prompt" if name == "system" else name
        host.console.print(
            f"  [{COLORS[name]}]■[/] {label:<14} {tokens:>9,} tokens  {tokens / window:6.1%}"
        )
    host.console.print(f"  [dim]window {window:,} tokens · model {host.agent.model}[/]")
    return True


async def _model(host: CommandHost, arg: str) -> bool:
    if not arg:
        host.console.print(f"  model: {host.agent.model}  [dim](/model NAME to switch)[/]")
        return True
    # Keep the conversation: resume this session under the new model (if it has begun).
    session = host.agent.session_id if host.agent.messages else None
    await host.replace_agent(model=arg, resume=session or None)
    host.console.print(f"[dim]Switched to {arg}.[/]")
    return True


async def _rewind(host: CommandHost, arg: str) -> bool:
    from .rewind import rewind_command

    return await rewind_command(host, arg)


async def _memory(host: CommandHost, arg: str) -> bool:
    from .memory_cmd import memory_command

    return await memory_command(host, arg)


async def _tasks(host: CommandHost, arg: str) -> bool:
    tasks = host.agent.tasks
    listed = tasks.all() if tasks is not None else []
    if tasks is None or not listed:
        host.console.print("[dim]No background tasks in this session.[/]")
        return True
    if arg.startswith("stop "):
        await tasks.stop(arg.removeprefix("stop ").strip())
    for task in listed:
        host.console.print(
            f"  {task.id:<18} {task.type.value:<11} {task.status.value:<9} {task.description[:60]}",
            markup=False,
            highlight=False,
        )
    host.console.print("[dim]/tasks stop ID stops one; the model reads them with TaskOutput.[/]")
    return True


async def _mcp(host: CommandHost, arg: str) -> bool:
    """The session's MCP servers and how each is doing; `/mcp login NAME` logs in to an
    OAuth-protected server from inside the session (the authorization URL is printed, the
    browser's redirect awaited, Ctrl-C gives up) and `/mcp reconnect NAME` connects one
    afresh. Either way a server that connects joins the session: its tools are in the next
    request (`Agent.mcp_login`, `Agent.mcp_reconnect`; `cli.mcp_view` renders)."""
    return await mcp_view(host, arg)


async def _report(host: CommandHost, arg: str) -> bool:
    if not host.agent.messages:
        host.console.print("[dim]Nothing to report yet: send a prompt first.[/]")
        return True
    page = host.agent.report(Path(arg).expanduser() if arg else None)
    host.console.print(f"  report: {page}", highlight=False)
    return True


async def _agents(host: CommandHost, arg: str) -> bool:
    from .views import agents_view

    return await agents_view(host, arg)


async def _permissions(host: CommandHost, arg: str) -> bool:
    from .views import permissions_view

    return await permissions_view(host, arg)


async def _exit(_: Any, __: str) -> bool:
    return False


COMMANDS: dict[str, SlashCommand] = {
    c.name: c
    for c in (
        SlashCommand("help", "show the commands", _help),
        SlashCommand("clear", "start a fresh conversation", _clear),
        SlashCommand("compact", "summarise the conversation [instructions]", _compact),
        SlashCommand("resume", "list sessions, or resume one: /resume ID", _resume),
        SlashCommand("cost", "tokens, cache hits and cost of this session", _cost),
        SlashCommand("context", "context window use by category", _context),
        SlashCommand("model", "show or switch the model: /model NAME", _model),
        SlashCommand("rewind", "restore code or conversation to before a prompt", _rewind),
        SlashCommand("memory", "memory files; /memory project|user TEXT adds a line", _memory),
        SlashCommand("tasks", "background tasks (also /bashes): /tasks stop ID", _tasks),
        SlashCommand(
            "mcp",
            "MCP servers and their status; /mcp login|reconnect NAME",
            _mcp,
            subcommands=MCP_SUBCOMMANDS,
        ),
        SlashCommand("report", "write this session's HTML report [FILE]", _report),
        SlashCommand("agents", "the agents that loaded, with their source", _agents),
        SlashCommand("permissions", "the permission rules in force and their files", _permissions),
        SlashCommand("exit", "leave (also /quit, Ctrl-D)", _exit),
    )
}
ALIASES = {"quit": "exit", "q": "exit", "?": "help", "bashes": "tasks"}


def parse_slash(line: str) -> tuple[SlashCommand | None, str, str]:
    """(command or None, its name as typed, argument) for a line starting with `/`."""
    head, _, arg = line[1:].strip().partition(" ")
    name = ALIASES.get(head, head)
    return COMMANDS.get(name), head, arg.strip()
