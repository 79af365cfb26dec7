"""`login()`: log in to one OAuth-protected MCP server with a person present.

It connects as a session would (`McpManager`, the same transports), but with `Interactive`
auth: the SDK's flow runs (discovery, registration, PKCE), `show` presents the authorization
URL, a loopback listener takes the redirect, the code is exchanged and the tokens land in the
server's token file (`tools.mcp_auth`). The connection then lists the tools, which proves the
tokens work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .mcp import McpManager, McpServerStatus
from .mcp_auth import CALLBACK_TIMEOUT, Interactive, LoopbackCallback
from .mcp_server import McpServerConfig

LOGIN_CONNECT_TIMEOUT = CALLBACK_TIMEOUT + 30.0
"""The handshake includes the person's visit to the authorization page."""


@dataclass(frozen=True, slots=True)
class LoginResult:
    """How a login went: the server's status after it, and whether it asked for a login at
    all (connected and asked: new tokens are stored)."""

    status: McpServerStatus
    asked: bool


async def login(config: McpServerConfig, show: Callable[[str], Awaitable[None]]) -> LoginResult:
    """Run the authorization flow for `config` and connect once. Raises OSError when the
    callback port is taken."""
    callback = LoopbackCallback(config.oauth.callback_port)
    asked: list[str] = []

    async def present(url: str) -> None:
        asked.append(url)
        await show(url)

    try:
        manager = McpManager(
            {config.name: config},
            connect_timeout=LOGIN_CONNECT_TIMEOUT,
            login=Interactive(present, callback),
        )
        async with manager:
            return LoginResult(manager.statuses()[config.name], asked=bool(asked))
    finally:
        callback.close_socket()
