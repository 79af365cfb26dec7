"""UserPromptExpansion (issue 22, item 1): fired when a typed `/command args` expands into its
command's or skill's text, before its `!` lines run; exit 2 or `decision: "block"` drops the
prompt, `additionalContext` reaches the model; the matcher filters the command's name. Real
settings files, real subprocess hooks, real command files, an Agent over the local Messages
API server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from skill_agents import run_in

from file_support import write_text as write
from queryloop.loop import Terminal
from queryloop.testing import text, turn

RECORD = (
    "import json, sys; event = json.load(sys.stdin); "
    "open(sys.argv[1], 'a').write(json.dumps(event) + '\\n'); "
)
BLOCK = RECORD + "print('not on a friday', file=sys.stderr); sys.exit(2)"
CONTEXT = RECORD + (
    "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptExpansion', "
    "'additionalContext': 'EXPANSION-CONTEXT'}}))"
)


def hook(code: str, log: Path) -> dict[str, Any]:
    return {"type": "command", "command": sys.executable, "args": ["-c", code, str(log)]}


def setup(tmp_path: Path) -> tuple[Path, Path]:
    folder, log = tmp_path / "proj", tmp_path / "events.jsonl"
    write(folder / ".claude" / "commands" / "deploy.md", "Deploy now. !`touch deployed`\n")
    write(folder / ".claude" / "commands" / "status.md", "Report the status of $ARGUMENTS.\n")
    settings = {
        "hooks": {
            "UserPromptExpansion": [
                {"matcher": "deploy", "hooks": [hook(BLOCK, log)]},
                {"matcher": "status", "hooks": [hook(CONTEXT, log)]},
            ]
        }
    }
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", json.dumps(settings))
    return folder, log


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_a_blocking_hook_stops_the_command_before_its_shell_lines(tmp_path: Path) -> None:
    folder, log = setup(tmp_path)
    agent, requests = await run_in(folder, "/deploy prod now", [turn(text("ok"))])
    assert requests == []  # the prompt never reached the model
    assert not (folder / "deployed").exists()  # nor did its `!` line run
    assert agent.last_terminal is not None
    assert agent.last_terminal.reason is Terminal.HOOK_STOPPED
    assert "not on a friday" in (agent.last_terminal.detail or "")
    [event] = logged(log)
    assert event["hook_event_name"] == "UserPromptExpansion"
    assert event["expansion_type"] == "slash_command"
    assert (event["command_name"], event["command_args"]) == ("deploy", "prod now")
    assert event["command_source"] == "skill" and event["prompt"] == "/deploy prod now"


async def test_context_reaches_the_model_and_the_matcher_filters(tmp_path: Path) -> None:
    folder, log = setup(tmp_path)
    _, requests = await run_in(folder, "/status api", [turn(text("ok"))])
    sent = json.dumps(requests[0]["messages"])
    assert "EXPANSION-CONTEXT" in sent and "Report the status of api." in sent
    assert [e["command_name"] for e in logged(log)] == ["status"]  # not the deploy hook
    await run_in(
        folder, "just a question", [turn(text("ok"))]
    )  # a prompt that is no command fires nothing
    assert len(logged(log)) == 1
