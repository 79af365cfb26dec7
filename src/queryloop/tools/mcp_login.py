"""`login()`: log in to one OAuth-protected MCP server with a person present.

It connects as a session would (`McpManager`, the same transports), but with `Interactive`
auth: the SDK's flow runs (discovery, registration, PKCE), `show` presents the authorization
URL, a loopback listener takes the redirect, the code is exchanged and the tokens land in the
server's token file (`tools.mcp_auth`). The connection then lists the tools, which proves the
tokens work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .mcp import McpManager, McpServerStatus
from .mcp_auth import CALLBACK_TIMEOUT, Interactive, LoopbackCallback
from .mcp_server import McpServerConfig

LOGIN_CONNECT_TIMEOUT = CALLBACK_TIMEOUT + 30.0
"""The handshake includes the person's visit to the authorization page."""


async def login(config: McpServerConfig, show: Callable[[str], Awaitable[None]]) -> McpServerStatus:
    """Run the authorization flow for `config` and connect once; the server's status after it
    (`connected`: the tokens are stored). Raises OSError when the callback port is taken."""
    callback = LoopbackCallback(config.oauth.callback_port)
    try:
        manager = McpManager(
            {config.name: config},
            connect_timeout=LOGIN_CONNECT_TIMEOUT,
            login=Interactive(show, callback),
        )
        async with manager:
            return manager.statuses()[config.name]
    finally:
        callback.close_socket()
