"""`queryloop mcp list` and `queryloop mcp login NAME`: the MCP servers this folder would
start, and logging in to one that uses OAuth (as `claude mcp login` does).

`login` prints the authorization URL (open it in a browser), waits on a loopback address for
the redirect, and stores the tokens in `$QUERYLOOP_HOME/mcp-auth/` (docs/settings.md#oauth).
Inside a running REPL, `/mcp login NAME` does the same and connects the server in the session
(`cli.mcp_view`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TextIO

from ..tools.mcp_server import McpServerConfig, login_target
from .args import _Parser, _resolve_cwd
from .exit_codes import ExitCode


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="queryloop mcp", description="MCP servers: list them, log in to one.")
    actions = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    listing = actions.add_parser("list", help="the servers this folder would start")
    login = actions.add_parser("login", help="log in to an OAuth-protected server")
    login.add_argument("name", help="the server's name in the MCP configuration")
    for sub in (listing, login):
        sub.add_argument("--cwd", type=Path, help="the project folder (default: here)")
        sub.add_argument(
            "--mcp-config", type=Path, action="append", default=[], help="more MCP config files"
        )
    return p


def mcp_command(argv: list[str], out: TextIO) -> int:
    """`queryloop mcp list|login ...`; the exit status."""
    from ..config.workspace import load_workspace

    ns = _parser().parse_args(argv)
    workspace = load_workspace(_resolve_cwd(ns.cwd), mcp_config_files=ns.mcp_config)
    servers = dict(workspace.mcp_servers)
    if ns.action == "list":
        return _list(servers, out)
    return _login(login_target(servers, ns.name), out)


def _list(servers: dict[str, McpServerConfig], out: TextIO) -> int:
    from ..tools.mcp_auth import auth_summary

    if not servers:
        out.write("No MCP servers configured here.\n")
    for name, server in sorted(servers.items()):
        where = server.url or " ".join((server.command, *server.args))
        auth = auth_summary(server)
        out.write(f"{name}  {server.transport}  {where}" + (f"  ({auth})" if auth else "") + "\n")
    return ExitCode.OK


def _login(config: McpServerConfig, out: TextIO) -> int:
    from ..tools.mcp_auth import token_file
    from ..tools.mcp_login import login

    async def show(url: str) -> None:
        out.write(f"Open this URL in a browser to log in to {config.name!r}:\n\n  {url}\n\n")
        out.write("Waiting for the browser to come back...\n")
        out.flush()

    result = asyncio.run(login(config, show))
    status = result.status
    if status.state != "connected":
        out.write(f"Login to {config.name!r} failed: {status.message}\n")
        return ExitCode.ERROR
    if not result.asked:
        out.write(f"MCP server {config.name!r} did not ask for a login; nothing was stored.\n")
        return ExitCode.OK
    out.write(
        f"Logged in to {config.name!r} ({status.tool_count} tools); "
        f"tokens stored in {token_file(config)}\n"
    )
    return ExitCode.OK
