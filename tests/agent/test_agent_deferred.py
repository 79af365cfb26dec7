"""Approvals that outlive the process (issue 33, item 3), in-process through the real Agent.

A PreToolUse hook that answers `defer` (Claude Code's decision) or a `can_use_tool` that
returns `PermissionDefer` ends the run with terminal `deferred`: the tool_use stays
unanswered, the other calls of the turn run, and a record of the pending call is in the
transcript. A later Agent (`Agent.resume(..., decisions=...)`) runs an approved call once,
sends a denied one to the model as a denial, and asks the hook again when no decision is
given. A record edited by hand is refused. The local Messages API server checks every request
against the API's rules (a tool_use must be answered right after it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_support import MODEL, NO_RETRY, agent_on, messages_json
from queryloop import Agent
from queryloop.agent import DeferralMismatchError, RunResult, UnknownDeferralError
from queryloop.errors import QueryloopError
from queryloop.loop import Terminal
from queryloop.permissions import PermissionAllow, PermissionDefer, PermissionDeny
from queryloop.permissions.checker import PermissionRequest
from queryloop.session import find_session, load_transcript
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

DEPLOY = {"command": "echo deployed >> deploy.log"}
SIBLING = {"command": "echo sibling >> side.log"}


def defer_deploys(payload: dict[str, Any]) -> dict[str, Any] | None:
    """Defers every Bash call that deploys, unless an `approved` file says otherwise."""
    command = str(payload["tool_input"].get("command", ""))
    if "deploy" not in command:
        return None
    approved = (Path(payload["cwd"]) / "approved").exists()
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow" if approved else "defer",
            "permissionDecisionReason": "deploys need a person",
        }
    }


def script() -> list[Turn]:
    return [
        turn(
            text("Deploying."),
            tool_use("Bash", SIBLING, id="toolu_sibling"),
            tool_use("Bash", DEPLOY, id="toolu_deploy"),
        ),
        turn(text("Done.")),
        turn(text("Noted.")),
    ]


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def resumed(server: MessagesServer, cwd: Path, session_id: str, **kw: Any) -> Agent:
    hooks = {"PreToolUse": [defer_deploys]}
    return Agent.resume(
        session_id, MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd,
        permission_mode="bypassPermissions", hooks=hooks, **kw,
    )  # fmt: skip


async def deferred_run(server: MessagesServer, cwd: Path) -> RunResult:
    agent = agent_on(
        server, cwd, permission_mode="bypassPermissions", hooks={"PreToolUse": [defer_deploys]}
    )
    result = await agent.run("deploy it")
    await agent.aclose()
    return result


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for message in body["messages"]:
        if message["role"] == "user" and not isinstance(message["content"], str):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


async def test_a_hook_defers_a_call_the_run_ends_deferred_and_its_siblings_ran(
    tmp_path: Path, home: Path
) -> None:
    with MessagesServer(script()) as server:
        result = await deferred_run(server, tmp_path)
        assert len(server.requests) == 1  # nothing is sent while the call waits
    assert result.terminal is Terminal.DEFERRED
    assert not result.is_error
    [pending] = result.deferred
    assert (pending.tool_use_id, pending.tool_name) == ("toolu_deploy", "Bash")
    assert dict(pending.tool_input) == DEPLOY
    assert pending.deferred_by.kind == "hook"
    assert "defer_deploys" in pending.deferred_by.name
    assert lines(tmp_path / "side.log") == 1  # the allowed sibling ran, its result recorded
    assert lines(tmp_path / "deploy.log") == 0
    path = _transcript(home, tmp_path, result)
    loaded = load_transcript(path)
    assert not loaded.repaired  # pending, not an orphan: no "interrupted" result on load
    records = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = [r["message"].get("subtype") for r in records if r["record"] == "message"]
    assert "deferred_tool_use" in kinds


async def test_an_approved_call_runs_once_in_a_new_agent_and_the_model_goes_on(
    tmp_path: Path, home: Path
) -> None:
    with MessagesServer(script()) as server:
        first = await deferred_run(server, tmp_path)
        agent = resumed(
            server, tmp_path, first.session_id, decisions={"toolu_deploy": PermissionAllow()}
        )
        result = await agent.run()  # no new prompt: continue where it stopped
        await agent.aclose()
        again = resumed(server, tmp_path, first.session_id)
        with pytest.raises(QueryloopError, match="nothing to continue"):
            await again.run()
        await again.aclose()
        assert [v for v in server.violations if v] == []
        body = server.requests[1]
    assert result.terminal is Terminal.COMPLETED
    assert result.deferred == ()
    assert lines(tmp_path / "deploy.log") == 1
    assert lines(tmp_path / "side.log") == 1
    answered = results_of(body)
    assert set(answered) == {"toolu_sibling", "toolu_deploy"}
    assert not answered["toolu_deploy"].get("is_error")


async def test_a_denied_call_reaches_the_model_as_a_denial_before_the_new_prompt(
    tmp_path: Path, home: Path
) -> None:
    with MessagesServer(script()) as server:
        first = await deferred_run(server, tmp_path)
        decisions = {"toolu_deploy": PermissionDeny("not on a Friday")}
        agent = resumed(server, tmp_path, first.session_id, decisions=decisions)
        result = await agent.run("what now?")
        await agent.aclose()
        assert [v for v in server.violations if v] == []
        body = server.requests[1]
    assert result.terminal is Terminal.COMPLETED
    assert lines(tmp_path / "deploy.log") == 0
    denial = results_of(body)["toolu_deploy"]
    assert denial["is_error"] is True
    assert "not on a Friday" in json.dumps(denial)
    assert "what now?" in messages_json(body)
    [refused] = result.denials
    assert refused.tool_use_id == "toolu_deploy"


async def test_without_a_decision_the_hook_is_asked_again(tmp_path: Path, home: Path) -> None:
    with MessagesServer(script()) as server:
        first = await deferred_run(server, tmp_path)
        agent = resumed(server, tmp_path, first.session_id)
        still = await agent.run()
        assert still.terminal is Terminal.DEFERRED  # the hook deferred it again
        assert len(server.requests) == 1
        (tmp_path / "approved").write_text("yes")
        result = await agent.run()
        await agent.aclose()
        assert [v for v in server.violations if v] == []
    assert result.terminal is Terminal.COMPLETED
    assert lines(tmp_path / "deploy.log") == 1


async def test_can_use_tool_defers_and_a_later_approval_runs_the_call(
    tmp_path: Path, home: Path
) -> None:
    asked: list[str | None] = []

    def defer(name: str, input: Any, request: PermissionRequest) -> PermissionDefer:
        asked.append(request.tool_use_id)
        return PermissionDefer("the on-call engineer decides")

    one_call = [turn(tool_use("Bash", DEPLOY, id="toolu_deploy")), turn(text("Done."))]
    with MessagesServer(one_call) as server:
        agent = agent_on(server, tmp_path, can_use_tool=defer)
        first = await agent.run("deploy it")
        await agent.aclose()
        [pending] = first.deferred
        changed = PermissionAllow(updated_input={"command": "echo approved >> deploy.log"})
        later = Agent.resume(
            first.session_id, MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path,
            decisions={pending.tool_use_id: changed}, can_use_tool=defer,
        )  # fmt: skip
        result = await later.run()
        await later.aclose()
    assert first.terminal is Terminal.DEFERRED
    assert pending.deferred_by.kind == "can_use_tool"
    assert pending.deferred_by.reason == "the on-call engineer decides"
    assert asked == ["toolu_deploy"]  # the approval answered it: not asked again
    assert result.terminal is Terminal.COMPLETED, result.detail
    assert (tmp_path / "deploy.log").read_text() == "approved\n"  # the approval's input ran


async def test_defer_wins_over_ask_and_allow_from_other_hooks(tmp_path: Path, home: Path) -> None:
    def ask(payload: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    def allow(payload: dict[str, Any]) -> dict[str, Any]:
        decision = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        return {"hookSpecificOutput": decision}

    one_call = [turn(tool_use("Bash", DEPLOY, id="toolu_deploy")), turn(text("Done."))]
    with MessagesServer(one_call) as server:
        hooks = {"PreToolUse": [allow, ask, defer_deploys]}
        agent = agent_on(server, tmp_path, permission_mode="bypassPermissions", hooks=hooks)
        result = await agent.run("deploy it")
        await agent.aclose()
    assert result.terminal is Terminal.DEFERRED  # deny > defer > ask > allow (Claude Code's)
    assert "defer_deploys" in result.deferred[0].deferred_by.name
    assert lines(tmp_path / "deploy.log") == 0


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("tool_name", "Write", "tool 'Write' but the tool_use calls 'Bash'"),
        ("tool_input", {"command": "echo harmless"}, "input that differs"),
        ("tool_use_id", "toolu_other", "names no tool_use"),
    ],
)
async def test_a_pending_record_edited_by_hand_is_refused(
    tmp_path: Path, home: Path, field: str, value: Any, words: str
) -> None:
    with MessagesServer(script()) as server:
        first = await deferred_run(server, tmp_path)
        path = _transcript(home, tmp_path, first)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            message = record.get("message", {})
            if message.get("subtype") == "deferred_tool_use":
                message["metadata"][field] = value
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        decisions = {"toolu_deploy": PermissionAllow()}
        with pytest.raises(DeferralMismatchError, match=words):
            resumed(server, tmp_path, first.session_id, decisions=decisions)
    assert lines(tmp_path / "deploy.log") == 0


async def test_a_decision_for_a_call_that_is_not_pending_is_refused(
    tmp_path: Path, home: Path
) -> None:
    with MessagesServer(script()) as server:
        first = await deferred_run(server, tmp_path)
        with pytest.raises(UnknownDeferralError, match=r"toolu_nope.*pending: toolu_deploy"):
            resumed(server, tmp_path, first.session_id, decisions={"toolu_nope": PermissionAllow()})


def _transcript(home: Path, cwd: Path, result: RunResult) -> Path:
    return find_session(result.session_id, cwd, home)
