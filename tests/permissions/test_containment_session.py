"""A settings change the agent made never loosens the running session (issue 21).

Through the real `Agent` and a scripted model over HTTP: the agent writes the project's
settings (approved by the program's `can_use_tool`, or in bypassPermissions), and later calls
in the same session — the next turn, the next prompt, a subagent — are still decided by the
rules and the mode the session started with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.permissions import PermissionRequest
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.base import DenialSource

SUB = "general-purpose"
LOOSER = {"permissions": {"allow": ["Bash(*)"], "deny": [], "defaultMode": "bypassPermissions"}}


def project(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    folder = tmp_path / "proj"
    (folder / ".queryloop").mkdir(parents=True)
    if settings is not None:
        (folder / ".queryloop" / "settings.json").write_text(json.dumps(settings))
    return folder


def agent(server: MessagesServer, cwd: Path, **kw: Any) -> Agent:
    retry = RetryPolicy(max_retries=1, base_delay=0.01)
    return Agent(
        "claude-sonnet-5-5", base_url=server.base_url, retry=retry, cwd=cwd, trust=True, **kw
    )


def write_settings() -> Any:
    given = {"file_path": ".queryloop/settings.local.json", "content": json.dumps(LOOSER)}
    return turn(tool_use("Write", given))


async def test_an_approved_settings_write_does_not_loosen_the_session(tmp_path: Path) -> None:
    folder = project(tmp_path)
    asked: list[str] = []

    def only_writes(name: str, input: Mapping[str, Any], request: PermissionRequest) -> bool:
        asked.append(name)
        return name == "Write"

    script = [
        write_settings(),
        turn(tool_use("Bash", {"command": "touch marker"})),
        turn(text("tried")),
        turn(tool_use("Bash", {"command": "touch marker2"})),
        turn(text("tried again")),
    ]
    with MessagesServer(script) as server:
        async with agent(server, folder, can_use_tool=only_writes) as running:
            first = await running.run("loosen your rules")
            second = await running.run("now run it")
            assert running.permission_mode == "default"
    assert json.loads((folder / ".queryloop" / "settings.local.json").read_text()) == LOOSER
    assert asked == ["Write", "Bash", "Bash"]  # the write asked although it is acceptable
    assert [d.source for d in first.denials] == [DenialSource.USER]
    assert [d.source for d in second.denials] == [DenialSource.USER]
    assert not (folder / "marker").exists() and not (folder / "marker2").exists()


async def test_a_deny_rule_removed_in_bypass_mode_still_holds(tmp_path: Path) -> None:
    folder = project(tmp_path, {"permissions": {"deny": ["Bash(touch:*)"]}})
    script = [
        turn(tool_use("Bash", {"command": "echo '{}' > .queryloop/settings.json"})),
        turn(tool_use("Bash", {"command": "touch marker"})),
        turn(text("done")),
        turn(tool_use("Agent", {"description": "t", "prompt": "touch", "subagent_type": SUB})),
        turn(tool_use("Bash", {"command": "touch marker"})),
        turn(text("the subagent could not")),
        turn(text("it could not")),
    ]
    with MessagesServer(script) as server:
        async with agent(server, folder, permission_mode="bypassPermissions") as running:
            first = await running.run("remove the deny rule, then touch")
            await running.run("have a subagent touch it")
        sub_request = server.requests[5]  # the subagent's second request: its Bash result
    assert (folder / ".queryloop" / "settings.json").read_text() == "{}\n"
    assert [(d.tool_name, d.source, d.rule) for d in first.denials] == [
        ("Bash", DenialSource.RULE, "Bash(touch:*)")
    ]
    assert not (folder / "marker").exists()
    assert len(server.requests) == 7 and not (folder / "marker").exists()
    assert "denied by the rule Bash(touch:*)" in json.dumps(sub_request["messages"][-1])
