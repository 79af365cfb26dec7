"""A loaded plugin's folder is a protected path (issue 22, item 1; issue 21's mechanism): its
hooks, MCP servers, commands and `bin/` run code in the next session, so a write there asks
in every mode but bypassPermissions, like a write to the project's own settings. Real
plugin folder (`--plugin-dir`), real Write tool, an Agent over the local Messages API
server; headless, nobody can answer the question, so an ask is a denial."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.agent.options import PermissionModeName
from queryloop.testing import MessagesServer, text, tool_use, turn


def make_plugin(project: Path) -> Path:
    """A small plugin inside the project (where acceptEdits would let the Write through)."""
    plugin = project / "vendor" / "mini"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "mini"}')
    (plugin / "commands").mkdir()
    (plugin / "commands" / "hello.md").write_text("Say hello.\n")
    return plugin


pytestmark = pytest.mark.usefixtures("api_key")


def result_of(body: dict[str, Any]) -> dict[str, Any]:
    return next(
        block
        for message in reversed(body["messages"])
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    )


async def write_in(
    project: Path, plugin: Path, target: Path, mode: PermissionModeName
) -> dict[str, Any]:
    script = [
        turn(tool_use("Write", {"file_path": str(target), "content": "{}"})),
        turn(text("ok")),
    ]
    with MessagesServer(script) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=project,
            trust=True,
            plugin_dirs=[plugin],
            permission_mode=mode,
        )
        try:
            await agent.run("write it")
        finally:
            await agent.aclose()
        return result_of(server.requests[-1])


@pytest.mark.parametrize("mode", ["acceptEdits", "default"])
async def test_a_write_into_a_plugin_folder_asks(tmp_path: Path, mode: PermissionModeName) -> None:
    project = tmp_path / "proj"
    plugin = make_plugin(project)
    hooks = plugin / "hooks" / "hooks.json"  # would run commands in the next session
    result = await write_in(project, plugin, hooks, mode)
    assert result.get("is_error") and "protected" in json.dumps(result["content"])
    assert not hooks.exists()
    other = project / "notes.json"  # the rest of the project is as before
    if mode == "acceptEdits":
        assert not (await write_in(project, plugin, other, mode)).get("is_error")


async def test_bypass_permissions_still_writes_there(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    plugin = make_plugin(project)
    hooks = plugin / "hooks" / "hooks.json"
    result = await write_in(project, plugin, hooks, "bypassPermissions")
    assert not result.get("is_error") and hooks.read_text() == "{}"
