"""`login()`: log in to one OAuth-protected MCP server with a person present.

It connects as a session would (`McpManager`, the same transports), but with `Interactive`
auth: the SDK's flow runs (discovery, registration, PKCE), `show` presents the authorization
URL, a loopback listener takes the redirect, the code is exchanged and the tokens land in the
server's token file (`tools.mcp_auth`). The connection then lists the tools, which proves the
tokens work. `queryloop mcp login NAME` runs it, and so does `/mcp login NAME` in the REPL
(`Agent.mcp_login`, which then reconnects the server in the session).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .mcp import McpManager, McpServerStatus
from .mcp_auth import CALLBACK_TIMEOUT, Interactive, LoopbackCallback
from .mcp_server import McpLoginError, McpServerConfig

LOGIN_CONNECT_TIMEOUT = CALLBACK_TIMEOUT + 30.0
"""The handshake includes the person's visit to the authorization page."""


@dataclass(frozen=True, slots=True)
class LoginResult:
    """How a login went: the server's status after it, and whether it asked for a login at
    all (connected and asked: new tokens are stored)."""

    status: McpServerStatus
    asked: bool


async def login(config: McpServerConfig, show: Callable[[str], Awaitable[None]]) -> LoginResult:
    """Run the authorization flow for `config` and connect once; `show` is awaited on the
    caller's event loop (the flow runs on the manager's). Cancelling the call stops the flow
    and releases the callback port. Raises McpLoginError when that port is in use."""
    callback = _listen(config)
    asked: list[str] = []
    caller = asyncio.get_running_loop()

    async def shown(url: str) -> None:
        await show(url)

    async def present(url: str) -> None:  # runs on the manager's loop
        asked.append(url)
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(shown(url), caller))

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


def _listen(config: McpServerConfig) -> LoopbackCallback:
    """The redirect's listener, on the entry's `oauth.callbackPort` or a free port."""
    port = config.oauth.callback_port
    try:
        return LoopbackCallback(port)
    except OSError as exc:
        where = f"the callback port {port} on 127.0.0.1 is in use" if port else "no port"
        raise McpLoginError(
            f"cannot log in to MCP server {config.name!r}: {where} ({exc.strerror or exc}); "
            "end the program that holds it (another login still waiting?) or change the "
            "entry's `oauth.callbackPort`"
        ) from exc
