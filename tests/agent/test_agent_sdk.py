"""The SDK as a Python developer meets it: typed keyword arguments, the tools they pass just
working, and a run's refusals visible in its result. Real loop, real tools, the official SDK
over HTTP against the local Messages API server."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import local_agent

from queryloop import Agent, tool
from queryloop.agent import AgentKwargs, PermissionDenial, RunResult
from queryloop.agent.options import OWN_PARAMETERS, option_fields
from queryloop.errors import ConfigError
from queryloop.loop import Terminal
from queryloop.permissions.checker import PermissionRequest
from queryloop.session import load_transcript, session_path
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.base import DenialSource

ROOT = Path(__file__).resolve().parents[2]
CALLS: list[str] = []


@tool
def record_note(note: str) -> str:
    """Record a note (changes state, so it is not read-only).

    Args:
        note: The note.
    """
    CALLS.append(note)
    return f"recorded {note}"


@tool(needs_approval=True)
def delete_customer(customer_id: str) -> str:
    """Delete a customer.

    Args:
        customer_id: Whom to delete.
    """
    CALLS.append(f"deleted {customer_id}")
    return "deleted"


@pytest.fixture(autouse=True)
def _env(home: Path) -> None:
    CALLS.clear()


def tool_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message of a recorded request."""
    last = body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b["type"] == "tool_result"]


@dataclasses.dataclass
class Run:
    result: RunResult
    bodies: list[dict[str, Any]]
    """The request bodies the server received."""


async def run_script(tmp_path: Path, script: list[Any], prompt: str, **kw: Any) -> Run:
    with MessagesServer(script) as server:
        agent = local_agent(server, tmp_path, **kw)
        try:
            result = await agent.run(prompt)
        finally:
            await agent.aclose()
        assert [v for v in server.violations if v] == []
        return Run(result, server.requests)


# ---- the developer's own tools ------------------------------------------------------------


async def test_a_tool_the_developer_passes_runs_without_asking_in_default_mode(
    tmp_path: Path,
) -> None:
    script = [turn(tool_use("record_note", {"note": "n1"})), turn(text("noted"))]
    run = await run_script(tmp_path, script, "note it", tools=[record_note])
    result = run.result
    assert CALLS == ["n1"]
    [block] = tool_results(run.bodies[1])
    assert block.get("is_error") is not True and "recorded n1" in str(block["content"])
    assert result.terminal is Terminal.COMPLETED and result.denials == ()
    assert result.tool_calls == 1 and not result.all_tools_denied


async def test_deny_rules_and_plan_mode_still_bind_the_developers_tools(tmp_path: Path) -> None:
    script = [turn(tool_use("record_note", {"note": "n1"})), turn(text("could not"))]
    denied = (
        await run_script(
            tmp_path, script, "note it", tools=[record_note], disallowed_tools=["record_note"]
        )
    ).result
    planned = (
        await run_script(tmp_path, script, "note it", tools=[record_note], permission_mode="plan")
    ).result
    assert CALLS == []
    [by_rule] = denied.denials
    assert (by_rule.tool_name, by_rule.source, by_rule.rule) == (
        "record_note",
        DenialSource.RULE,
        "record_note",
    )
    assert by_rule.tool_input == {"note": "n1"} and "denied by the rule" in by_rule.message
    assert [d.source for d in planned.denials] == [DenialSource.MODE]
    assert denied.terminal is Terminal.COMPLETED and denied.all_tools_denied


async def test_a_tool_that_needs_approval_asks_can_use_tool(tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []

    def no(name: str, input: Mapping[str, Any], request: PermissionRequest) -> bool:
        asked.append(request)
        return False

    script = [turn(tool_use("delete_customer", {"customer_id": "c7"})), turn(text("kept"))]
    refused = (await run_script(tmp_path, script, "delete c7", tools=[delete_customer])).result
    by_user = (
        await run_script(tmp_path, script, "delete c7", tools=[delete_customer], can_use_tool=no)
    ).result
    approved = (
        await run_script(
            tmp_path,
            script,
            "delete c7",
            tools=[delete_customer],
            can_use_tool=lambda name, input, request: True,
        )
    ).result
    assert [d.source for d in refused.denials] == [DenialSource.NO_APPROVER]
    assert [d.source for d in by_user.denials] == [DenialSource.USER]
    assert [r.tool_name for r in asked] == ["delete_customer"]
    assert approved.denials == () and CALLS == ["deleted c7"]


async def test_built_in_tools_that_run_commands_keep_their_checks(tmp_path: Path) -> None:
    script = [turn(tool_use("Bash", {"command": "touch made-by-bash"})), turn(text("ok"))]
    result = (await run_script(tmp_path, script, "touch it", tools=[record_note])).result
    assert not (tmp_path / "made-by-bash").exists()
    [denial] = result.denials
    assert denial.tool_name == "Bash" and denial.source is DenialSource.NO_APPROVER
    assert denial.tool_input == {"command": "touch made-by-bash"}
    # The hint fits a program as well as a person at the command line.
    assert "Agent(allowed_tools=['Bash(touch:*)'])" in denial.message
    assert "--allowed-tools 'Bash(touch:*)'" in denial.message
    assert result.terminal is Terminal.COMPLETED and result.all_tools_denied


async def test_denials_survive_in_the_transcript_and_never_reach_the_api(tmp_path: Path) -> None:
    script = [turn(tool_use("Bash", {"command": "touch x"})), turn(text("ok"))]
    run = await run_script(tmp_path, script, "touch it")
    result = run.result

    loaded = load_transcript(session_path(result.session_id, tmp_path, tmp_path / "home"))
    recorded = [d for m in loaded.messages if (d := PermissionDenial.from_message(m))]
    assert recorded == list(result.denials)
    assert "permission_denied" not in str(run.bodies[-1]["messages"])


# ---- typed, checked keyword arguments -----------------------------------------------------


def test_agent_kwargs_match_the_options_one_for_one() -> None:
    """`AgentKwargs` (what mypy and an IDE see) and `AgentOptions` (what the Agent keeps)
    list the same names with the same types (cwd, home, mcp_config and add_dirs also take
    strings)."""

    def written(annotation: Any) -> object:
        return getattr(annotation, "__forward_arg__", annotation)

    kwargs = {k: written(v) for k, v in AgentKwargs.__annotations__.items()}
    options = {f.name: written(f.type) for f in option_fields().values()}
    assert set(kwargs) == set(options) - OWN_PARAMETERS
    widened = {"cwd": "str | Path | None", "home": "str | Path | None"}
    widened["mcp_config"] = "str | Path | None"
    widened["add_dirs"] = "Sequence[str | Path]"
    for name, hint in kwargs.items():
        assert hint == widened.get(name, options[name]), name


# mypy --strict over the whole package: minutes on a loaded 2-core machine (the subprocess's
# own timeout is the bound), not the suite's 120 s default.
@pytest.mark.slow
@pytest.mark.timeout(330)
def test_mypy_catches_a_misspelled_or_mistyped_option(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from queryloop import Agent\n"
        "Agent('claude-sonnet-5-5', max_turn=3)\n"
        "Agent('claude-sonnet-5-5', max_turns='3')\n"
        "Agent('claude-sonnet-5-5', permission_mode='yolo')\n"
        "Agent('claude-sonnet-5-5', tools=[], builtin_tools=['Read'], cwd='.')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(sample)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = done.stdout.splitlines()
    assert any(':2: error: Unexpected keyword argument "max_turn"' in e for e in errors), errors
    assert any(":3: error:" in e and "max_turns" in e for e in errors), errors
    assert any(":4: error:" in e and "permission_mode" in e for e in errors), errors
    assert not any(":5:" in e for e in errors), errors


def test_wrong_options_fail_at_construction_with_a_clear_error(tmp_path: Path) -> None:
    def plain(x: int) -> int:
        return x

    dynamic: dict[str, Any] = {"max_turn": 3}  # e.g. read from a config file
    with pytest.raises(ConfigError, match=r"unknown Agent option.*max_turn"):
        Agent("m", cwd=tmp_path, **dynamic)
    with pytest.raises(ConfigError, match="unknown permission mode 'yolo'"):
        Agent("m", cwd=tmp_path, permission_mode="yolo")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'plain' is not a tool; decorate"):
        Agent("m", cwd=tmp_path, tools=[plain])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="Read are used twice"):
        Agent("m", cwd=tmp_path, tools=[tool(name="Read")(plain)])
    with pytest.raises(ConfigError, match=r"unknown built-in tool.*Reed"):
        Agent("m", cwd=tmp_path, builtin_tools=["Reed"])
    # Without the built-in Read, a tool of one's own may take the name.
    Agent("m", cwd=tmp_path, tools=[tool(name="Read")(plain)], builtin_tools=["Grep"])


async def test_builtin_tools_selects_what_the_model_is_offered(tmp_path: Path) -> None:
    with MessagesServer([turn(text("a")), turn(text("b"))]) as server:
        only = local_agent(server, tmp_path, tools=[record_note], builtin_tools=["Read", "Task"])
        none = local_agent(server, tmp_path, tools=[record_note], builtin_tools=False)
        await only.run("one")
        await none.run("two")
        await only.aclose()
        await none.aclose()
        offered = [[t["name"] for t in body["tools"]] for body in server.requests]
    assert offered == [["Read", "Agent", "record_note"], ["record_note"]]


# ---- results of streamed runs ---------------------------------------------------------------


async def test_stream_leaves_its_result_and_a_cancelled_stream_an_aborted_one(
    tmp_path: Path,
) -> None:
    script = [turn(text("first")), turn(text("never finished"))]
    with MessagesServer(script, event_delay=0.2) as server:
        agent = local_agent(server, tmp_path)
        events = [e async for e in agent.stream("one")]
        assert agent.last_result is not None and agent.last_result.text == "first"
        assert agent.last_result.turns == 1 and len(events) > 2

        async def consume() -> None:
            async for _event in agent.stream("two"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await agent.aclose()
    assert agent.last_result is not None
    assert agent.last_result.terminal is Terminal.ABORTED_STREAMING


async def test_text_is_the_answers_words_even_when_a_tool_call_closes_the_run(
    tmp_path: Path,
) -> None:
    script = [turn(text("Checking the notes."), tool_use("record_note", {"note": "x"}))]
    result = (await run_script(tmp_path, script, "go", tools=[record_note], max_turns=1)).result
    assert result.terminal is Terminal.MAX_TURNS
    assert result.text == "Checking the notes."
