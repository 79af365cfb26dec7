"""Hooks read `transcript_path` as Claude Code writes it: a loop plugin's Stop hook that finds
the last assistant text the way the official plugins do (`grep '"role":"assistant"' | tail -1
| jq …`) keeps the session going until it sees its marker, as it does in Claude Code; and the
lines carry Claude Code's fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_support import agent_on
from queryloop.hooks.claude_transcript import ClaudeTranscript, LineContext, claude_lines
from queryloop.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from queryloop.testing import MessagesServer, text, tool_use, turn

LOOP_HOOK = r"""#!/bin/bash
# The loop plugins' Stop hook, reading the transcript as they do.
set -euo pipefail
INPUT=$(cat)
echo "$INPUT" >> "$CLAUDE_PROJECT_DIR/stop-inputs.jsonl"
TRANSCRIPT_PATH=$(echo "$INPUT" | jq -r '.transcript_path')
if ! grep -q '"role":"assistant"' "$TRANSCRIPT_PATH"; then
  echo "no assistant messages found in transcript" >&2
  exit 0
fi
LAST=$(grep '"role":"assistant"' "$TRANSCRIPT_PATH" | tail -1 |
  jq -r '.message.content | map(select(.type=="text")) | map(.text) | join("\n")')
if [[ "$LAST" == *LOOP-DONE* ]]; then
  exit 0
fi
jq -n --arg last "$LAST" '{"decision": "block", "reason": ("Not done yet; you said: " + $last)}'
"""


def loop_project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".claude/hooks").mkdir(parents=True)
    script = proj / ".claude/hooks/loop.sh"
    script.write_text(LOOP_HOOK)
    script.chmod(0o755)
    command = {"type": "command", "command": "${CLAUDE_PROJECT_DIR}/.claude/hooks/loop.sh"}
    settings = {"hooks": {"Stop": [{"hooks": [command]}]}}
    (proj / ".claude/settings.json").write_text(json.dumps(settings))
    return proj


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_loop_plugins_stop_hook_reads_the_transcript_and_runs_three_turns(
    tmp_path: Path, home: Path
) -> None:
    proj = loop_project(tmp_path)
    script = [
        turn(text("step 1"), tool_use("Bash", {"command": "echo hi"})),
        turn(text("still step 1")),
        turn(text("step 2")),
        turn(text("all finished LOOP-DONE")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, proj, home, trust=True, permission_mode="bypassPermissions")
        result = await agent.run("go")
        session_id = agent.session.session_id
        await agent.aclose()
        server.assert_complete()
    assert result.text == "all finished LOOP-DONE"
    inputs = lines(proj / "stop-inputs.jsonl")
    assert [i["stop_hook_active"] for i in inputs] == [False, True, True]
    path = Path(inputs[0]["transcript_path"])
    assert path.name == f"{session_id}.jsonl" and path.parent.name == "claude-code"
    written = lines(path)
    kinds = [(w["type"], w["message"]["content"]) for w in written if w["type"] != "system"]
    assert kinds[0] == ("user", "go")
    assert kinds[1] == ("assistant", [{"type": "text", "text": "step 1"}])
    assert kinds[2][0] == "assistant" and kinds[2][1][0]["type"] == "tool_use"
    result_line = next(w for w in written if "toolUseResult" in w)
    assert result_line["message"]["content"][0]["type"] == "tool_result"
    assert result_line["toolUseResult"].strip() == "hi"
    for before, line in zip([None, *written], written, strict=False):
        assert line["parentUuid"] == (before["uuid"] if before else None)
        assert line["sessionId"] == session_id and line["cwd"] == str(proj)
        assert line["isSidechain"] is False and line["userType"] == "external"
        assert line["timestamp"] and line["version"] and "gitBranch" in line
    # The hook's feedback went to the model as Claude Code sends it.
    assert "Not done yet; you said: step 2" in json.dumps(server.requests[3]["messages"])


def test_lines_are_appended_once_and_a_draft_gains_its_later_blocks(tmp_path: Path) -> None:
    context = LineContext("sess", str(tmp_path), "1.0", "main")
    prompt = UserMessage(content="hello")
    draft = AssistantMessage(content=(TextBlock("a"),), message_id="msg_1")
    whole = AssistantMessage(
        uuid=draft.uuid,
        content=(TextBlock("a"), ToolUseBlock(id="toolu_1", name="Read", input={})),
        message_id="msg_1",
    )
    path = tmp_path / "t.jsonl"
    mirror = ClaudeTranscript(path, context)
    mirror.update([prompt, draft])
    mirror.update([prompt, whole])
    ClaudeTranscript(path, context).update([prompt, whole])  # a resumed session: nothing new
    written = lines(path)
    assert [w["type"] for w in written] == ["user", "assistant", "assistant"]
    assert [w["message"]["content"][0]["type"] for w in written[1:]] == ["text", "tool_use"]
    assert {w["message"]["id"] for w in written[1:]} == {"msg_1"}
    assert written[2]["parentUuid"] == written[1]["uuid"] == draft.uuid
    assert b'"role":"assistant"' in path.read_bytes()  # compact, as the plugins grep for it


def test_a_meta_message_and_a_tool_result_say_so(tmp_path: Path) -> None:
    from queryloop.messages import ToolResultBlock

    context = LineContext("sess", "/w", "1.0")
    meta = UserMessage(content="<system-reminder>x</system-reminder>", is_meta=True)
    [line] = claude_lines(meta, "p", context)
    assert line["isMeta"] is True and line["parentUuid"] == "p"
    results = UserMessage(content=(ToolResultBlock("toolu_1", "out", is_error=True),))
    [line] = claude_lines(results, None, context)
    block = line["message"]["content"][0]
    assert block == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "out",
                     "is_error": True}  # fmt: skip
    assert line["toolUseResult"] == "out"


def test_a_transcript_that_cannot_be_written_does_not_stop_the_hook(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the folder would be")
    path = tmp_path / "blocked" / "t.jsonl"
    mirror = ClaudeTranscript(path, LineContext("sess", str(tmp_path), "1.0"))
    assert mirror.update([UserMessage(content="hello")]) == path  # logged, not raised
