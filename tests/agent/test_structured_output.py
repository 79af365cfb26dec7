"""Structured output through the real Agent against the scripted server: `Agent(output_type=X)`
offers the `StructuredOutput` tool, and `RunResult.output` is the validated X. The failure
cases Claude Code shipped fixes for are here: a wrapped value, a model that calls the tool
again and again, two schemas in parallel sessions, `$ref`s and enums, the tool called beside
others, a model that answers in text. The typed assignments (`x: Verdict = result.output`)
are the typing test: mypy strict checks this file."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from pathlib import Path
from typing import Any, TypeVar

import pydantic
import pytest
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from agent_support import MODEL, NO_RETRY
from queryloop import Agent, tool
from queryloop.errors import ConfigError
from queryloop.hooks.types import StopHookInput, StopHookResult
from queryloop.loop import Continue, Terminal, TransitionEvent
from queryloop.loop.structured import MAX_STRUCTURED_OUTPUT_RETRIES
from queryloop.messages import ToolResultBlock, UserMessage
from queryloop.testing import (
    OUTPUT_TOOL,
    MessagesServer,
    structured_output,
    text,
    tool_use,
    turn,
)
from queryloop.tools.structured_output import OUTPUT_TOOL_NAME

pytestmark = pytest.mark.usefixtures("home")

T = TypeVar("T")


class Verdict(pydantic.BaseModel):
    verdict: str
    score: int


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


class Severity(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Finding(pydantic.BaseModel):
    file: str
    severity: Severity


class Review(pydantic.BaseModel):
    findings: list[Finding]
    summary: str


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"color": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["color", "count"],
    "additionalProperties": False,
}


def typed_agent(server: MessagesServer, cwd: Path, output_type: type[T]) -> Agent[T]:
    return Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, output_type=output_type)


def offered_schema(body: dict[str, Any]) -> dict[str, Any]:
    tools = {t["name"]: t for t in body["tools"]}
    schema: dict[str, Any] = tools[OUTPUT_TOOL]["input_schema"]
    return schema


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_the_testing_helper_calls_the_tool_production_offers() -> None:
    assert OUTPUT_TOOL == OUTPUT_TOOL_NAME == "StructuredOutput"


async def test_a_pydantic_model_comes_back_as_an_instance(tmp_path: Path) -> None:
    script = [
        turn(text("Checked it."), structured_output({"verdict": "pass", "score": 3})),
        turn(structured_output({"verdict": "fail", "score": 0})),
    ]
    with MessagesServer(script) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        result = await agent.run("Review it")
        verdict: Verdict = result.output
        again = await agent.run("And now?")  # each prompt returns its own; the array stays valid
        await agent.aclose()
        first, second = server.requests
    assert result.terminal is Terminal.COMPLETED and not result.is_error
    assert verdict == Verdict(verdict="pass", score=3)
    assert result.text == "Checked it."
    assert offered_schema(first) == Verdict.model_json_schema()
    assert [r.get("is_error", False) for r in tool_results(second)] == [False]
    assert server.violations == [[], []]
    assert again.output == Verdict(verdict="fail", score=0)
    resumed: Agent[Verdict] = Agent.resume(result.session_id, MODEL, cwd=tmp_path,
                                           output_type=Verdict)  # fmt: skip
    assert resumed.options.output.output_type is Verdict


async def test_a_dataclass_and_a_typed_dict_are_validated_into_their_types(tmp_path: Path) -> None:
    with MessagesServer([turn(structured_output({"x": 1, "y": 2}))]) as server:
        point_agent = typed_agent(server, tmp_path, Point)
        point: Point = (await point_agent.run("where?")).output
        await point_agent.aclose()
    with MessagesServer([turn(structured_output({"name": "Ada", "age": 36}))]) as server:
        person_agent = typed_agent(server, tmp_path, Person)
        person: Person = (await person_agent.run("who?")).output
        await person_agent.aclose()
    assert point == Point(1, 2) and isinstance(point, Point)
    assert person == {"name": "Ada", "age": 36}


async def test_a_json_schema_dict_gives_the_validated_dict(tmp_path: Path) -> None:
    script = [
        turn(structured_output({"color": "blue", "count": "four"})),
        turn(structured_output({"color": "blue", "count": 4})),
    ]
    with MessagesServer(script) as server:
        agent = Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path,
                      output_type=SCHEMA)  # fmt: skip
        result = await agent.run("sky and legs")
        value: dict[str, Any] = result.output
        await agent.aclose()
        first, second = server.requests
    assert value == {"color": "blue", "count": 4}
    assert offered_schema(first) == SCHEMA
    [sent_back] = tool_results(second)
    assert sent_back["is_error"] is True
    assert "/count" in json.dumps(sent_back) and "integer" in json.dumps(sent_back)


async def test_no_output_type_means_output_none(tmp_path: Path) -> None:
    with MessagesServer([turn(text("hi"))]) as server:
        agent = Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path)
        result = await agent.run("hello")
        nothing: None = result.output
        await agent.aclose()
        assert OUTPUT_TOOL not in {t["name"] for t in server.requests[0]["tools"]}
    assert nothing is None


async def test_invalid_output_is_sent_back_with_the_error_and_retried(tmp_path: Path) -> None:
    script = [
        turn(structured_output({"verdict": "pass"})),  # score missing
        turn(structured_output({"verdict": "pass", "score": 5})),
    ]
    with MessagesServer(script) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        result = await agent.run("Review it")
        await agent.aclose()
        [sent_back] = tool_results(server.requests[1])
    assert result.output == Verdict(verdict="pass", score=5)
    assert sent_back["is_error"] is True and "`score` is required" in json.dumps(sent_back)


async def test_a_model_that_keeps_calling_with_bad_input_ends_with_a_typed_error(
    tmp_path: Path,
) -> None:
    """Claude Code #67311: 395 StructuredOutput attempts in half an hour. Here the attempts
    are bounded, and the run ends with the SDK's error, its last error in the detail."""
    bad = turn(structured_output({"verdict": "pass", "score": "high"}))
    with MessagesServer([bad] * 20) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        result = await agent.run("Review it")
        await agent.aclose()
        requests = len(server.requests)
        last = server.requests[-1]
    assert result.terminal is Terminal.MAX_STRUCTURED_OUTPUT_RETRIES and result.is_error
    assert result.output is None
    assert requests == MAX_STRUCTURED_OUTPUT_RETRIES + 1
    assert "score" in result.detail
    assert all(r["is_error"] for r in tool_results(last))
    assert isinstance(result.messages[-1], UserMessage)  # the last call was answered too
    assert isinstance(result.messages[-1].content, tuple)
    assert isinstance(result.messages[-1].content[0], ToolResultBlock)


async def test_a_model_that_answers_in_text_is_told_to_call_the_tool(tmp_path: Path) -> None:
    script = [turn(text('{"verdict": "pass", "score": 1}')), turn(structured_output(
        {"verdict": "pass", "score": 1}))]  # fmt: skip
    with MessagesServer(script) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        transitions = [
            e.reason async for e in agent.stream("Review it") if isinstance(e, TransitionEvent)
        ]
        result = agent.last_result
        await agent.aclose()
        nudged = json.dumps(server.requests[1]["messages"][-1])
    assert result is not None and result.output == Verdict(verdict="pass", score=1)
    assert transitions == [Continue.STRUCTURED_OUTPUT_REQUIRED]
    assert f"call the {OUTPUT_TOOL} tool" in nudged


async def test_a_model_that_never_calls_the_tool_is_bounded(tmp_path: Path) -> None:
    with MessagesServer([turn(text("just text"))] * 20) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        result = await agent.run("Review it")
        await agent.aclose()
        requests = len(server.requests)
    assert result.terminal is Terminal.MAX_STRUCTURED_OUTPUT_RETRIES
    assert requests == MAX_STRUCTURED_OUTPUT_RETRIES + 1
    assert OUTPUT_TOOL in result.detail


async def test_a_wrapped_value_is_unwrapped_only_when_that_is_what_validates(
    tmp_path: Path,
) -> None:
    """Models wrap the value (`{"output": {...}}`) when the schema is the inner object:
    accepted, unwrapped. A schema whose one field is `output` keeps the value as sent."""

    class Wrapper(pydantic.BaseModel):
        output: dict[str, int]

    wrapped = {"output": {"verdict": "pass", "score": 2}}
    with MessagesServer([turn(structured_output(wrapped))]) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        unwrapped = (await agent.run("Review it")).output
        await agent.aclose()
    as_sent = {"output": {"a": 1}}
    with MessagesServer([turn(structured_output(as_sent))]) as server:
        keeps = typed_agent(server, tmp_path, Wrapper)
        kept = (await keeps.run("Count it")).output
        await keeps.aclose()
    assert unwrapped == Verdict(verdict="pass", score=2)
    assert kept == Wrapper(output={"a": 1})


async def test_two_sessions_in_parallel_each_get_their_own_schema(tmp_path: Path) -> None:
    verdicts = [turn(structured_output({"verdict": "fail", "score": 0}))]
    points = [turn(structured_output({"x": 3, "y": 4}))]
    with MessagesServer(verdicts) as one, MessagesServer(points) as two:
        first = typed_agent(one, tmp_path, Verdict)
        second = typed_agent(two, tmp_path, Point)
        verdict_run, point_run = await asyncio.gather(first.run("a"), second.run("b"))
        await asyncio.gather(first.aclose(), second.aclose())
        schemas = offered_schema(one.requests[0]), offered_schema(two.requests[0])
    verdict: Verdict = verdict_run.output
    point: Point = point_run.output
    assert verdict == Verdict(verdict="fail", score=0) and point == Point(3, 4)
    assert schemas == (Verdict.model_json_schema(), pydantic.TypeAdapter(Point).json_schema())


async def test_a_schema_with_refs_and_enums(tmp_path: Path) -> None:
    bad = {"findings": [{"file": "a.py", "severity": "urgent"}], "summary": "s"}
    good = {"findings": [{"file": "a.py", "severity": "high"}], "summary": "one issue"}
    script = [turn(structured_output(bad)), turn(structured_output(good))]
    with MessagesServer(script) as server:
        agent = typed_agent(server, tmp_path, Review)
        review: Review = (await agent.run("Review it")).output
        await agent.aclose()
        schema = offered_schema(server.requests[0])
        [sent_back] = tool_results(server.requests[1])
    assert "$defs" in schema and "$ref" in json.dumps(schema["properties"])
    assert review.findings[0].severity is Severity.HIGH
    assert sent_back["is_error"] and "'low' or 'high'" in json.dumps(sent_back)


async def test_a_json_schema_with_refs_and_an_enum(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "$defs": {"level": {"type": "string", "enum": ["low", "high"]}},
        "properties": {"level": {"$ref": "#/$defs/level"}},
        "required": ["level"],
    }
    script = [turn(structured_output({"level": "mid"})), turn(structured_output({"level": "low"}))]
    with MessagesServer(script) as server:
        agent = Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path,
                      output_type=schema)  # fmt: skip
        result = await agent.run("how bad?")
        await agent.aclose()
        [sent_back] = tool_results(server.requests[1])
    assert result.output == {"level": "low"}
    assert "is not one of" in json.dumps(sent_back["content"])


async def test_the_output_tool_called_beside_other_tools_in_one_turn(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def note(line: str) -> str:
        """Write a note."""
        ran.append(line)
        return "noted"

    both = turn(tool_use("note", {"line": "seen"}), structured_output({"verdict": "ok",
                                                                      "score": 1}))  # fmt: skip
    with MessagesServer(
        [both, turn(structured_output({"verdict": "again", "score": 2}))]
    ) as server:
        agent = Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path,
                      tools=[note], output_type=Verdict)  # fmt: skip
        result = await agent.run("note and answer")
        again = await agent.run("next")  # both calls were answered: the array is valid
        await agent.aclose()
        results = tool_results(server.requests[1])
        violations = server.violations
    assert ran == ["seen"]
    assert result.output == Verdict(verdict="ok", score=1) and result.turns == 1
    assert [r.get("is_error", False) for r in results] == [False, False]
    assert again.terminal is Terminal.COMPLETED and violations == [[], []]


async def test_a_stop_hook_is_asked_before_the_output_ends_the_prompt(tmp_path: Path) -> None:
    """A valid output is a stop like any other: a Stop hook that blocks sends the model back
    to work (with its words), and the output it returns then is the prompt's."""
    asked: list[bool] = []

    async def check_first(hook_input: StopHookInput) -> StopHookResult | None:
        asked.append(hook_input.stop_hook_active)
        return None if asked[1:] else StopHookResult("block", "Run the linter first.")

    script = [turn(structured_output({"verdict": "draft", "score": 1})),
              turn(structured_output({"verdict": "final", "score": 2}))]  # fmt: skip
    with MessagesServer(script) as server:
        agent = Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=tmp_path,
                      output_type=Verdict, stop_hooks=[check_first])  # fmt: skip
        transitions = [
            e.reason async for e in agent.stream("Review it") if isinstance(e, TransitionEvent)
        ]
        result = agent.last_result
        await agent.aclose()
        fed_back = json.dumps(server.requests[1]["messages"][-1])
    assert result is not None and result.output == Verdict(verdict="final", score=2)
    assert transitions == [Continue.STOP_HOOK_BLOCKING] and asked == [False, True]
    assert "Run the linter first." in fed_back


async def test_subagents_are_not_offered_the_output_tool(tmp_path: Path) -> None:
    script = [
        turn(
            tool_use(
                "Agent",
                {
                    "description": "look",
                    "prompt": "look around",
                    "subagent_type": "general-purpose",
                },
            )
        ),
        turn(text("looked")),
        turn(structured_output({"verdict": "pass", "score": 9})),
    ]
    with MessagesServer(script) as server:
        agent = typed_agent(server, tmp_path, Verdict)
        result = await agent.run("delegate")
        await agent.aclose()
        subagent_tools = {t["name"] for t in server.requests[1]["tools"]}
    assert result.output == Verdict(verdict="pass", score=9)
    assert OUTPUT_TOOL not in subagent_tools


@pytest.mark.parametrize(
    ("output_type", "words"),
    [
        ({"type": "objekt"}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not resolve"),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}},
            "does not resolve",
        ),
        ({"type": "array", "items": {"type": "string"}}, "root must be an object"),
        (int, "root must be an object"),
        ("a string", "neither a type"),
    ],
)
def test_a_schema_that_cannot_work_is_refused_before_any_request(
    tmp_path: Path, output_type: Any, words: str
) -> None:
    with MessagesServer([]) as server, pytest.raises(ConfigError, match=words):
        Agent(MODEL, base_url=server.base_url, cwd=tmp_path, output_type=output_type)
    assert server.requests == []


async def test_an_openai_compatible_server_returns_it_through_the_same_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool works with every provider: over the Chat Completions API it is a function
    whose parameters are the schema (with its `$defs`), and an invalid call comes back."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    bad = {"findings": [{"file": "a.py", "severity": "urgent"}], "summary": "s"}
    good = {"findings": [{"file": "a.py", "severity": "low"}], "summary": "s"}
    script = [turn(structured_output(bad)), turn(structured_output(good))]
    with MessagesServer(script) as server:
        agent = Agent("ollama:qwen2.5", base_url=server.base_url + "/v1", cwd=tmp_path,
                      output_type=Review)  # fmt: skip
        review: Review = (await agent.run("Review it")).output
        await agent.aclose()
        first, second = server.requests
    functions = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert functions[OUTPUT_TOOL]["parameters"]["$defs"].keys() == {"Finding", "Severity"}
    assert review.findings[0].severity is Severity.LOW
    [sent_back] = [m for m in second["messages"] if m["role"] == "tool"]
    assert "'low' or 'high'" in str(sent_back["content"])
