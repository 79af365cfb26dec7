"""`McpServerConfig`: how to reach one MCP server, the input of `tools.mcp.McpManager`.

A module of its own, without the MCP SDK, so that reading the configuration
(`queryloop.config.mcp`, which builds these from `.mcp.json` and `--mcp-config`) does not pay
for the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import ConfigError

AUTH_DIR = "mcp-auth"
"""The folder under `$QUERYLOOP_HOME` that holds remote servers' OAuth tokens
(`tools.mcp_auth`), one private file per server."""


@dataclass(frozen=True, slots=True)
class McpOAuthConfig:
    """A remote server entry's `oauth` object (Claude Code's names: `callbackPort`, `scopes`,
    `clientId`); every field optional, and a remote server without one still gets OAuth."""

    callback_port: int | None = None
    """The loopback port `queryloop mcp login` listens on (default: a free one)."""
    scopes: str | None = None
    """Space-separated scopes to ask for instead of what the server advertises."""
    client_id: str | None = None
    """A client registered by hand, for servers without dynamic client registration."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """How to reach one MCP server."""

    name: str
    transport: Literal["stdio", "http", "sse"] = "stdio"
    """`http` is streamable HTTP; `sse` the older HTTP+SSE transport (a GET event stream
    and POSTs to the endpoint it names), which Claude Code still reads as `"type": "sse"`."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    """The file it came from (or `sdk`)."""
    oauth: McpOAuthConfig = field(default_factory=McpOAuthConfig)
    auth_dir: Path | None = None
    """Where this user's OAuth tokens for remote servers live (`$QUERYLOOP_HOME/mcp-auth`);
    None: no OAuth (the server must accept the request as configured)."""


class McpLoginError(ConfigError):
    """A login or reconnect that cannot be tried: no server of that name, a server that has
    no login (stdio, or no token folder), or the login's callback port in use. The message
    says which and what to do."""


def named_server(servers: Mapping[str, McpServerConfig], name: str) -> McpServerConfig:
    """Server `name` of `servers`; raises McpLoginError naming the servers there are."""
    config = servers.get(name)
    if config is None:
        known = ", ".join(sorted(servers)) or "none"
        raise McpLoginError(f"no MCP server {name!r} here (servers: {known})")
    return config


def login_target(servers: Mapping[str, McpServerConfig], name: str) -> McpServerConfig:
    """Server `name`, which must be one a person can log in to (a remote server with a token
    folder); raises McpLoginError otherwise."""
    config = named_server(servers, name)
    if config.transport == "stdio":
        raise McpLoginError(f"MCP server {name!r} runs over stdio: it has no login")
    if config.auth_dir is None:
        raise McpLoginError(f"MCP server {name!r} has no token folder: it has no login")
    return config
