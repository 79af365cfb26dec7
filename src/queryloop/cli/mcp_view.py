"""`/mcp` in the REPL: the session's MCP servers, and logging in to one or reconnecting one
without leaving the session. The Agent does the work (`Agent.mcp_login`,
`Agent.mcp_reconnect`); this module only renders what it reports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..tools.mcp import McpServerStatus
    from ..tools.mcp_login import LoginResult
    from .host import CommandHost

T = TypeVar("T")

SUBCOMMANDS = ("login", "reconnect")
"""What `/mcp` takes before a server's name (offered by Tab)."""
USAGE = "/mcp lists the servers; /mcp login NAME logs in to one, /mcp reconnect NAME reconnects one"


async def mcp_view(host: CommandHost, arg: str) -> bool:
    """`/mcp`, `/mcp login NAME` or `/mcp reconnect NAME`."""
    action, _, name = arg.strip().partition(" ")
    name = name.strip()
    if not action:
        _list(host)
    elif action in SUBCOMMANDS and name and " " not in name:
        try:
            if action == "login":
                await _login(host, name)
            else:
                await _reconnect(host, name)
        except ConfigError as exc:  # no such server, no login, the callback port in use
            host.console.print(f"[red]{exc}[/]", markup=True, highlight=False)
    else:
        host.console.print(f"[dim]{USAGE}[/]")
    return True


def _list(host: CommandHost) -> None:
    servers = host.agent.mcp_status
    if not servers:
        host.console.print("[dim]No MCP servers in this session.[/]")
        return
    for status in servers.values():
        state = f"{status.tool_count} tools" if status.state == "connected" else status.state
        line = f"  {status.name:<18} {state:<10} {status.message}"
        host.console.print(line.rstrip(), markup=False, highlight=False)
    host.console.print(f"[dim]{USAGE}[/]")


async def _login(host: CommandHost, name: str) -> None:
    async def show(url: str) -> None:
        # As `queryloop mcp login` does: the URL printed whole (never wrapped), no browser.
        host.console.print(
            f"Open this URL in a browser to log in to {name!r}:\n\n  {url}\n",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
        host.console.print("[dim]Waiting for the browser to come back… (Ctrl-C cancels)[/]")

    result: LoginResult | None = await _interruptible(
        host, lambda: host.agent.mcp_login(name, show), f"Login to {name!r} cancelled."
    )
    if result is None:
        return
    status = result.status
    if status.state != "connected":
        _failed(host, f"Login to {name!r} failed: {status.message or status.state}")
        return
    asked = "" if result.asked else " (it did not ask for a login; nothing was stored)"
    _connected(host, status, asked)


async def _reconnect(host: CommandHost, name: str) -> None:
    with host.console.status(f"Reconnecting {name!r}… (Ctrl-C to stop)"):
        status = await _interruptible(
            host, lambda: host.agent.mcp_reconnect(name), f"Reconnecting {name!r} stopped."
        )
    if status is None:
        return
    if status.state != "connected":
        _failed(host, f"MCP server {name!r} did not reconnect: {status.message or status.state}")
        return
    _connected(host, status, "")


def _connected(host: CommandHost, status: McpServerStatus, note: str) -> None:
    from ..agent.mcp_late import joined

    host.console.print(
        f"MCP server {status.name!r} connected: {joined(status.tool_count)}{note}",
        markup=False, highlight=False, style="green",
    )  # fmt: skip


def _failed(host: CommandHost, text: str) -> None:
    host.console.print(text, markup=False, highlight=False, style="red")


async def _interruptible(
    host: CommandHost, work: Callable[[], Awaitable[T]], notice: str
) -> T | None:
    """`work()`'s result, or None when Ctrl-C stopped it (`notice` then says so)."""
    done: list[T] = []

    async def run() -> None:
        done.append(await work())

    finished = await host.interruptible(run(), notice=notice)
    return done[0] if finished and done else None
