"""MCP server configuration: `.mcp.json` and `--mcp-config FILE` (Claude Code's shape).

    {"mcpServers": {
        "files": {"command": "python", "args": ["server.py"], "env": {"TOKEN": "${TOKEN}"}},
        "remote": {"type": "http", "url": "http://127.0.0.1:8000/mcp",
                   "headers": {"X-Key": "..."}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:8001/sse"}}}

`${VAR}` and `${VAR:-default}` in command, args, env, url and headers are expanded from the
environment. A broken file or entry becomes a problem message (path, line, column, fix); the
other servers still load. The result is `McpServerConfig`s: the type belongs to the client
(`tools.mcp.McpManager` takes them), the reading of files to this layer.

Which of a project's `.mcp.json` servers start: in a trusted folder, those Claude Code's
approval settings let through (`config.mcp_approval`); in an untrusted folder, none.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ..tools.mcp_server import AUTH_DIR, McpOAuthConfig, McpServerConfig

MCP_JSON = ".mcp.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(value: str, environ: Mapping[str, str] | None = None) -> str:
    """Expand `${VAR}` / `${VAR:-default}`; an unset variable without default becomes ''."""
    env = os.environ if environ is None else environ

    def sub(m: re.Match[str]) -> str:
        return env.get(m.group(1)) or (m.group(2) or "")

    return _VAR.sub(sub, value)


def load_mcp_config(path: Path) -> tuple[dict[str, McpServerConfig], list[str]]:
    """Servers in one `.mcp.json`-shaped file, and problems (a missing file is no problem)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"{path}: cannot read MCP config: {exc}"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}; the file was skipped"
        ]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, [f'{path}: expected {{"mcpServers": {{name: {{...}}}}}}; the file was skipped']
    found: dict[str, McpServerConfig] = {}
    problems: list[str] = []
    for name, raw in servers.items():
        server, problem = parse_server(name, raw, source=str(path), base=path.parent)
        if server is not None:
            found[name] = server
        if problem:
            problems.append(problem)
    return found, problems


def parse_server(
    name: str,
    raw: object,
    *,
    source: str,
    base: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[McpServerConfig | None, str | None]:
    """One server entry; returns (config, None) or (None, problem). `environ` adds variables
    for `${VAR}` (a plugin's `CLAUDE_PLUGIN_ROOT`) to the process environment."""
    env_vars = {**os.environ, **environ} if environ else None
    where = f"{source}: mcpServers.{name}"
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return None, f"{where}: server names may use letters, digits, '_' and '-' only"
    if not isinstance(raw, Mapping):
        return None, f"{where}: must be an object with 'command' or 'type': 'http' and 'url'"
    kind = raw.get("type", "http" if "url" in raw else "stdio")
    if kind in ("http", "streamable-http", "streamable_http"):
        return _http(name, "http", raw, where, source, env_vars)
    if kind == "sse":
        return _http(name, "sse", raw, where, source, env_vars)
    if kind != "stdio":
        return None, f"{where}: transport {kind!r} is not supported (use stdio, http or sse)"
    command, args, env = raw.get("command"), raw.get("args", []), raw.get("env", {})
    if not isinstance(command, str) or not command:
        return None, f"{where}: 'command' must be a non-empty string"
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None, f"{where}: 'args' must be a list of strings"
    if not _str_map(env):
        return None, f"{where}: 'env' must be an object of string values"
    cwd = raw.get("cwd")
    return (
        McpServerConfig(
            name,
            "stdio",
            command=expand_vars(command, env_vars),
            args=tuple(expand_vars(a, env_vars) for a in args),
            env={k: expand_vars(v, env_vars) for k, v in env.items()},
            cwd=(base / cwd) if isinstance(cwd, str) and base else None,
            source=source,
        ),
        None,
    )


def _http(
    name: str,
    transport: Literal["http", "sse"],
    raw: Mapping[str, object],
    where: str,
    source: str,
    env_vars: Mapping[str, str] | None = None,
) -> tuple[McpServerConfig | None, str | None]:
    url, headers = raw.get("url"), raw.get("headers", {})
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None, f"{where}: 'url' must be an http(s) URL"
    if not _str_map(headers):
        return None, f"{where}: 'headers' must be an object of string values"
    assert isinstance(headers, Mapping)
    oauth, problem = _oauth(raw.get("oauth", {}), where)
    if oauth is None:
        return None, problem
    expanded = {k: expand_vars(v, env_vars) for k, v in headers.items()}
    url = expand_vars(url, env_vars)
    return McpServerConfig(
        name, transport, url=url, headers=expanded, source=source, oauth=oauth
    ), None


def _oauth(raw: object, where: str) -> tuple[McpOAuthConfig | None, str | None]:
    """A remote entry's `oauth` object (Claude Code's `callbackPort`, `scopes`, `clientId`)."""
    if not isinstance(raw, Mapping):
        return None, f"{where}: 'oauth' must be an object"
    port, scopes, client_id = raw.get("callbackPort"), raw.get("scopes"), raw.get("clientId")
    if port is not None and (
        not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536
    ):
        return None, f"{where}: 'oauth.callbackPort' must be a port number (1-65535)"
    for key, value in (("scopes", scopes), ("clientId", client_id)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            return None, f"{where}: 'oauth.{key}' must be a non-empty string"
    assert scopes is None or isinstance(scopes, str)
    assert client_id is None or isinstance(client_id, str)
    return McpOAuthConfig(callback_port=port, scopes=scopes, client_id=client_id), None


def with_auth_dir(servers: Mapping[str, McpServerConfig], home: Path) -> dict[str, McpServerConfig]:
    """Remote servers with the user's token folder (`home/mcp-auth`), so that they can use
    OAuth tokens a login stored (`tools.mcp_auth`)."""
    return {
        name: server if server.transport == "stdio" else replace(server, auth_dir=home / AUTH_DIR)
        for name, server in servers.items()
    }


def _str_map(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )
