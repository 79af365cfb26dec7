"""Which of a project's `.mcp.json` servers may start: Claude Code's approval settings.

Claude Code asks before it starts a server from a project's `.mcp.json`, and three settings
answer in advance (code.claude.com/docs/en/mcp; its settings schema):
`enableAllProjectMcpServers`, `enabledMcpjsonServers`, `disabledMcpjsonServers`. queryloop's
question is workspace trust: an untrusted folder starts none of its servers, whatever the
settings say; in a trusted one these keys decide which of them start. The lists merge over
every settings file; `enableAllProjectMcpServers` takes the last file that sets it.

A module of its own, without the MCP types' package, so reading settings stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .settings_file import FileContext

if TYPE_CHECKING:
    from ..tools.mcp_server import McpServerConfig


@dataclass(frozen=True, slots=True)
class McpJsonApproval:
    """Which servers of a project's `.mcp.json` may start in a trusted folder (Claude Code's
    settings keys, merged over every settings file)."""

    enable_all: bool = False
    """`enableAllProjectMcpServers: true` (the last file that sets it decides)."""
    enabled: frozenset[str] | None = None
    """`enabledMcpjsonServers` (lists merge): when set, only these start, unless `enable_all`;
    Claude Code would ask about the others, and queryloop has no per-server question."""
    disabled: frozenset[str] = frozenset()
    """`disabledMcpjsonServers` (lists merge): never started, whatever else says."""

    def approves(self, name: str) -> bool:
        """Whether the project server `name` may start."""
        if name in self.disabled:
            return False
        return self.enable_all or self.enabled is None or name in self.enabled


class McpApprovalMerger:
    """The three approval keys across settings files. An untrusted project's approvals are
    ignored; its refusals count (they only narrow)."""

    def __init__(self) -> None:
        self.enable_all = False
        self.enabled: set[str] | None = None
        self.disabled: set[str] = set()

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        """One file's keys."""
        self.disabled.update(ctx.strings(data, "disabledMcpjsonServers"))
        enabled = ctx.strings(data, "enabledMcpjsonServers")
        enable_all = ctx.boolean(data, "enableAllProjectMcpServers")
        if not ctx.trusted:
            if enabled or enable_all:
                ctx.ignore("MCP server approvals")
            return
        if "enabledMcpjsonServers" in data:
            self.enabled = (self.enabled or set()) | set(enabled)
        if enable_all is not None:
            self.enable_all = enable_all

    def result(self) -> McpJsonApproval:
        """The merged approvals."""
        enabled = frozenset(self.enabled) if self.enabled is not None else None
        return McpJsonApproval(self.enable_all, enabled, frozenset(self.disabled))


def approved_servers(
    servers: Mapping[str, McpServerConfig], approval: McpJsonApproval
) -> tuple[dict[str, McpServerConfig], list[str]]:
    """The servers `approval` lets start, and the names of those it holds back."""
    kept = {name: s for name, s in servers.items() if approval.approves(name)}
    return kept, sorted(set(servers) - set(kept))
