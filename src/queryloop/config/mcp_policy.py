"""Which MCP servers may start: Claude Code's `allowedMcpServers` and `deniedMcpServers`.

Claude Code's rules (code.claude.com/docs/en/managed-mcp, "Policy-based control with
allowlists and denylists"; settings reference, `allowedMcpServers`, `deniedMcpServers`,
`allowManagedMcpServersOnly`):

- Each entry is an object with one key: `serverName` (the server's name, exact),
  `serverCommand` (a stdio server's command and arguments, exactly, in order) or `serverUrl`
  (a remote server's URL, `*` wildcards, `config.url_patterns`).
- The lists merge over every settings file; with `allowManagedMcpServersOnly` (managed
  settings) only the managed files' allowlist counts. The denylist always merges. An
  untrusted project's denylist counts; its allowlist does not (merged in, it would widen
  the user's).
- A denylist entry queryloop cannot read stops the run (fail closed); an allowlist entry it
  cannot read is dropped with a warning (that only narrows), as Claude Code drops it.
- A server that matches any denylist entry, by URL, command or name, does not start:
  nothing overrides it.
- No allowlist anywhere: every server not denied starts. An allowlist (even `[]`): a remote
  server must match a `serverUrl` entry and a stdio server a `serverCommand` entry; a
  `serverName` entry admits a server only when the list has no entry of its kind.
- `serverCommand` and `serverUrl` entries expand `${VAR}` and `${VAR:-default}` from the
  environment queryloop started with (the settings' `env` does not reach them); the
  server's side is already expanded when it is read (`config.mcp`).

The check applies to every server a session would start: a project's `.mcp.json`,
`--mcp-config` files, plugins' servers and `Agent(mcp_servers=...)`. A server's name is the
one it has in the session (a plugin's: `plugin_<plugin>_<server>`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .mcp import expand_vars
from .sandbox import Problem
from .settings_file import FileContext
from .url_patterns import is_url_pattern, url_matches

if TYPE_CHECKING:
    from ..tools.mcp_server import McpServerConfig

EntryKind = Literal["serverName", "serverCommand", "serverUrl"]
ENTRY_KINDS: tuple[EntryKind, ...] = ("serverName", "serverCommand", "serverUrl")
ALLOWED_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""What an allowlist's `serverName` may be (Claude Code: letters, digits, `-` and `_`)."""


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """One allowlist or denylist entry."""

    kind: EntryKind
    name: str = ""
    command: tuple[str, ...] = ()
    url: str = ""

    def __str__(self) -> str:
        if self.kind == "serverCommand":
            return f"serverCommand {list(self.command)}"
        return f"{self.kind} {self.name or self.url!r}"

    def matches(self, server: McpServerConfig) -> bool:
        """True when this entry names `server` (by its kind of key)."""
        if self.kind == "serverName":
            return server.name == self.name
        if self.kind == "serverCommand":
            return server.transport == "stdio" and self.command == _command_of(server)
        return server.transport != "stdio" and url_matches(self.url, server.url)


def parse_entry(raw: object, *, allow: bool) -> ServerEntry | str:
    """One entry, or why it is not one (for the settings problem)."""
    if not isinstance(raw, Mapping) or len(raw) != 1 or next(iter(raw)) not in ENTRY_KINDS:
        return "each entry must be an object with one key: serverName, serverCommand or serverUrl"
    kind, value = next(iter(raw.items()))
    if kind == "serverName":
        valid = isinstance(value, str) and (
            ALLOWED_NAME.fullmatch(value) if allow else value.strip()
        )
        if not valid:
            rule = "letters, digits, '-' and '_'" if allow else "a non-empty string"
            return f"serverName must be {rule}, not {value!r}"
        return ServerEntry("serverName", name=value)
    if kind == "serverCommand":
        if not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
            return f"serverCommand must be a non-empty list of strings, not {value!r}"
        return ServerEntry("serverCommand", command=tuple(expand_vars(v) for v in value))
    if not isinstance(value, str) or not is_url_pattern(expand_vars(value)):
        return f"serverUrl must be a URL pattern such as 'https://mcp.example.com/*', not {value!r}"
    return ServerEntry("serverUrl", url=expand_vars(value))


@dataclass(frozen=True, slots=True)
class McpServerPolicy:
    """The merged lists: `allowed` None when no file sets an allowlist."""

    allowed: tuple[ServerEntry, ...] | None = None
    denied: tuple[ServerEntry, ...] = ()

    def refusal(self, server: McpServerConfig) -> str | None:
        """Why `server` may not start (naming the setting), or None when it may."""
        for entry in self.denied:
            if entry.matches(server):
                return f"deniedMcpServers ({entry})"
        if self.allowed is None:
            return None
        own: EntryKind = "serverCommand" if server.transport == "stdio" else "serverUrl"
        kinds = {e.kind for e in self.allowed}
        usable = (own, "serverName") if own not in kinds else (own,)
        if any(e.kind in usable and e.matches(server) for e in self.allowed):
            return None
        return "not in allowedMcpServers"

    def admitted(
        self, servers: Mapping[str, McpServerConfig]
    ) -> tuple[dict[str, McpServerConfig], list[str]]:
        """The servers that may start, and one line per server that may not."""
        kept: dict[str, McpServerConfig] = {}
        refused: list[str] = []
        for name, server in servers.items():
            why = self.refusal(server)
            if why is None:
                kept[name] = server
            else:
                refused.append(f"{name} ({why})")
        return kept, refused


def _command_of(server: McpServerConfig) -> tuple[str, ...]:
    return (server.command, *server.args)


class McpPolicyMerger:
    """`allowedMcpServers`, `deniedMcpServers` and `allowManagedMcpServersOnly` across
    settings files (an entry of `config.keys`)."""

    def __init__(self) -> None:
        self.allowed: dict[bool, list[ServerEntry]] = {}  # by "from a managed file"
        self.denied: list[ServerEntry] = []
        self.managed_only = False

    def add(self, data: Mapping[str, object], ctx: FileContext) -> None:
        """One file's keys: an untrusted project's allowlist is ignored (it would widen the
        user's), its denials count."""
        denied = self._entries(data, "deniedMcpServers", ctx.flag)
        self.denied.extend(denied or ())
        allowed = self._entries(data, "allowedMcpServers", ctx.flag)
        if allowed is not None and not ctx.trusted:
            ctx.ignore("allowedMcpServers (an untrusted project cannot widen the allowlist)")
        elif allowed is not None:
            self.allowed.setdefault(ctx.managed, []).extend(allowed)
        if ctx.managed_switch(data, "allowManagedMcpServersOnly"):
            self.managed_only = True

    def result(self) -> McpServerPolicy:
        """The merged policy: no allowlist when no file (no managed file, with
        `allowManagedMcpServersOnly`) sets one; `[]` in one admits no server."""
        sets = [True] if self.managed_only else [False, True]
        found = [self.allowed[m] for m in sets if m in self.allowed]
        allowed = tuple(e for entries in found for e in entries) if found else None
        return McpServerPolicy(allowed, tuple(self.denied))

    @staticmethod
    def _entries(
        data: Mapping[str, object], key: str, problem: Problem
    ) -> list[ServerEntry] | None:
        raw = data.get(key)
        if raw is None:
            return None
        allow = key == "allowedMcpServers"
        if not isinstance(raw, list):
            problem(
                key,
                f'\'{key}\' must be a list of entries such as {{"serverName": "github"}}',
                True,
            )
            return [] if allow else None
        entries: list[ServerEntry] = []
        for item in raw:
            parsed = parse_entry(item, allow=allow)
            if isinstance(parsed, ServerEntry):
                entries.append(parsed)
            elif allow:  # dropping an allowlist entry only narrows
                problem(key, f"{key}: {parsed}; the entry was dropped", False)
            else:
                problem(key, f"{key}: {parsed}", True)
        return entries
