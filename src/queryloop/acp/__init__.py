"""queryloop.acp: the Agent Client Protocol over stdio, for editors (`queryloop acp`).

Zed, JetBrains IDEs, Neovim (CodeCompanion, avante) and other ACP clients start
`queryloop acp` and speak JSON-RPC to it over stdin/stdout (docs/acp.md). Each ACP session
is one `queryloop.Agent`, built by the CLI's own factory (`AcpHost.make_agent`), so an
editor's session has the same settings, rules, hooks, MCP servers and transcript as a
terminal one. The wire format is the maintained `agent-client-protocol` package (`acp`):
its pydantic schema and JSON-RPC connection; this package only maps queryloop's loop events
to `session/update`s and bridges permission questions, cancellation and session storage.

Modules: `host` (what the CLI hands over), `transport` (stdio that carries protocol
messages only), `tool_calls` and `updates` (pure mappings to the protocol's types),
`permission` (the `session/request_permission` bridge), `session` (one editor session)
and `server` (the protocol's methods).
"""

from __future__ import annotations

from .host import AcpHost, AgentSpec
from .server import QueryloopAcpAgent, serve

__all__ = ["AcpHost", "AgentSpec", "QueryloopAcpAgent", "serve"]
