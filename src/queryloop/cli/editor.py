"""`queryloop acp`: the Agent Client Protocol server for editors (docs/acp.md).

The server is `queryloop.acp`; here the command line hands it the CLI's own parts: Agents
built by `make_agent` from the command's options (model, permission mode, rules, ...) with
the editor's folder, model and MCP servers over them, and the REPL's "always" rule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .agent_factory import make_agent
from .args import CliOptions

if TYPE_CHECKING:
    from ..acp import AgentSpec
    from ..agent import Agent
    from ..permissions import PermissionRequest


def run_acp(options: CliOptions) -> int:
    """Serve ACP on stdin/stdout until the client closes it; the exit status."""
    from ..acp import AcpHost, serve
    from .always import save_local_rule

    def build(spec: AgentSpec, /, **extra: Any) -> Agent:
        wanted = replace(
            options,
            cwd=spec.cwd,
            model=spec.model or options.model,
            resume=spec.resume,
            continue_latest=False,
        )
        if spec.mcp_servers:
            extra["mcp_servers"] = dict(spec.mcp_servers)
        return make_agent(wanted, **extra)

    host = AcpHost(
        make_agent=build, cwd=options.cwd, always_rule=_always_rule, save_rule=save_local_rule
    )
    return serve(host)


def _always_rule(request: PermissionRequest) -> str | None:
    from .always import always_offer

    return always_offer(request).rule
