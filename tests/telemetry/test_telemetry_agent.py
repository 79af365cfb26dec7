"""An Agent's spans, sent over real OTLP/HTTP (the SDK's exporter) to a local receiver that
decodes them: the parent/child structure and the GenAI attributes of a session with a tool
call, a denied call, a hook, a Bash call, a subagent and a compaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_receiver import OtlpReceiver, ReceivedSpan, running_receiver

from queryloop import Agent, tool
from queryloop.hooks import CommandHook, HookMatcher, PromptHook
from queryloop.messages.blocks import ToolResultBlock
from queryloop.messages.types import Message, UserMessage
from queryloop.providers.retry import RetryPolicy
from queryloop.telemetry import CAPTURE_ENV
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.testing.script import cut_stream, overloaded, rate_limited

SECRET = "the-user-secret-42"
"""A string that appears in the prompt, a tool's arguments and its result: content."""

CLIENT, INTERNAL = 3, 1  # the protobuf's SpanKind values
STATUS_ERROR = 2


@tool(read_only=True)
async def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"value of {key}"


SCRIPT = [
    turn(
        text("Working on it."),
        tool_use("lookup", {"key": SECRET}),
        tool_use("Write", {"file_path": "out.txt", "content": "x"}),
        tool_use("Bash", {"command": 'echo "TP=$TRACEPARENT"'}),
        tool_use("Agent", {"description": "sub", "prompt": "do the sub task"}),
    ),
    turn(text("The sub task is done.")),  # the subagent's only turn
    turn(text("All done.")),
    turn(text("<summary>Looked a key up; a write was denied.</summary>")),  # /compact
]


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with running_receiver() as found:
        yield found


@pytest.fixture
def providers(receiver: OtlpReceiver) -> Iterator[Callable[[], TracerProvider]]:
    """Makes SDK providers exporting to the receiver; shut down while it still listens."""
    made: list[TracerProvider] = []

    def make() -> TracerProvider:
        provider = TracerProvider(resource=Resource.create({"service.name": "agent-test"}))
        exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")
        provider.add_span_processor(BatchSpanProcessor(exporter))
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.shutdown()


async def run_session(
    tmp_path: Path, provider: TracerProvider, log: Path
) -> tuple[str, list[Message]]:
    """Run the script: the session id, the conversation as it was before the compaction."""
    with MessagesServer(SCRIPT) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            tools=[lookup],
            allowed_tools=["Bash"],
            disallowed_tools=["Write"],
            hooks={"PreToolUse": [HookMatcher("lookup", [CommandHook(f"cat > {log}")])]},
            tracer_provider=provider,
        )
        try:
            await agent.run(f"look up {SECRET}")
            messages = agent.messages
            await agent.compact()
        finally:
            await agent.aclose()
    provider.force_flush()
    return agent.session_id, messages


def by_name(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    [found] = [s for s in spans if s.name == name]
    return found


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv(CAPTURE_ENV, raising=False)


async def test_a_session_is_one_trace_of_turn_request_tool_hook_and_subagent_spans(
    tmp_path: Path,
    receiver: OtlpReceiver,
    providers: Callable[[], TracerProvider],
    env: None,
) -> None:
    session_id, messages = await run_session(tmp_path, providers(), tmp_path / "h")
    spans = receiver.wait_for("compaction")
    turns = [s for s in spans if s.name.startswith("invoke_agent")]
    main = by_name(spans, "invoke_agent queryloop")
    sub = by_name(spans, "invoke_agent general-purpose")
    assert len(turns) == 2
    assert main.parent_span_id == ""  # nothing was current: a root span
    manual = by_name(spans, "compaction manual")  # after the prompt: a trace of its own
    assert {s.trace_id for s in spans} == {main.trace_id, manual.trace_id} != {main.trace_id}
    assert [s.name for s in spans if s.trace_id == manual.trace_id] == [
        "chat claude-sonnet-5-5",
        "compaction manual",
    ]
    assert main.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert main.attributes["gen_ai.agent.name"] == "queryloop"
    assert main.attributes["gen_ai.conversation.id"] == session_id
    assert main.attributes["gen_ai.provider.name"] == "anthropic"
    assert main.attributes["queryloop.terminal"] == "completed"
    assert main.resource["service.name"] == "agent-test"
    assert main.scope == "queryloop"
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}

    # Two model requests of the main thread, children of its turn.
    chats = [s for s in receiver.children(main) if s.name.startswith("chat ")]
    assert [c.name for c in chats] == ["chat claude-sonnet-5-5"] * 2
    first = chats[0]
    assert first.kind == CLIENT
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.request.model"] == "claude-sonnet-5-5"
    assert first.attributes["gen_ai.response.model"] == "claude-sonnet-5-5"
    assert first.attributes["gen_ai.response.id"].startswith("msg_")
    assert first.attributes["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert chats[1].attributes["gen_ai.response.finish_reasons"] == ["end_turn"]
    for chat in chats:
        usage = {k: v for k, v in chat.attributes.items() if k.startswith("gen_ai.usage.")}
        assert usage["gen_ai.usage.output_tokens"] > 0
        cached = (
            usage["gen_ai.usage.cache_read.input_tokens"]
            + usage["gen_ai.usage.cache_creation.input_tokens"]
        )
        assert usage["gen_ai.usage.input_tokens"] >= cached  # input counts cached tokens too
    assert chats[1].attributes["gen_ai.usage.cache_read.input_tokens"] > 0
    assert main.attributes["gen_ai.usage.output_tokens"] == sum(
        c.attributes["gen_ai.usage.output_tokens"] for c in chats
    )

    # Four tool calls, children of the turn, with their outcomes.
    tools = {
        s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool")
    }
    assert set(tools) == {"lookup", "Write", "Bash", "Agent"}
    for name, span in tools.items():
        assert span.name == f"execute_tool {name}"
        assert span.parent_span_id == main.span_id
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.call.id"].startswith("toolu_")
    assert tools["lookup"].attributes["queryloop.tool.outcome"] == "ok"
    # Who decided: the mode allows a read-only tool, the allowed_tools rule allowed Bash,
    # a disallowed_tools rule refused Write.
    for allowed, source in (("lookup", "mode"), ("Bash", "rule")):
        assert tools[allowed].attributes["queryloop.permission.decision"] == "allow"
        assert tools[allowed].attributes["queryloop.permission.decision_source"] == source
    write = tools["Write"].attributes
    assert write["queryloop.tool.outcome"] == "denied"
    assert write["queryloop.permission.decision"] == "deny"
    assert write["queryloop.permission.decision_source"] == "rule"
    assert write["queryloop.permission.rule"] == "Write"

    # The PreToolUse hook ran inside the lookup call.
    [hook] = [s for s in spans if s.name == "hook PreToolUse"]
    assert hook.parent_span_id == tools["lookup"].span_id
    assert hook.attributes["queryloop.hook.type"] == "command"
    assert hook.attributes["queryloop.hook.exit_code"] == 0

    # The subagent is nested under the Agent call that started it, with its own request.
    assert sub.parent_span_id == tools["Agent"].span_id
    assert sub.attributes["gen_ai.agent.id"]
    [sub_chat] = receiver.children(sub)
    assert sub_chat.name == "chat claude-sonnet-5-5"
    assert sub_chat.attributes["gen_ai.response.finish_reasons"] == ["end_turn"]

    # The Bash process got the tool span's trace context (W3C traceparent).
    result = tool_result_text(messages, tools["Bash"].attributes["gen_ai.tool.call.id"])
    version, trace_id, span_id, flags = result.strip().removeprefix("TP=").split("-")
    assert (version, trace_id, span_id) == ("00", main.trace_id, tools["Bash"].span_id)
    assert int(flags, 16) & 1  # sampled

    # The manual compaction says how many tokens it freed.
    compaction = by_name(spans, "compaction manual").attributes
    assert compaction["queryloop.compaction.trigger"] == "manual"
    assert compaction["queryloop.compaction.freed_tokens"] == (
        compaction["queryloop.compaction.pre_tokens"]
        - compaction["queryloop.compaction.post_tokens"]
    )
    assert compaction["queryloop.compaction.freed_tokens"] > 0
    # Its summary is a model request of its own, under it, counted like any other.
    [summary] = receiver.children(by_name(spans, "compaction manual"))
    assert (summary.name, summary.kind) == ("chat claude-sonnet-5-5", CLIENT)
    assert summary.attributes["queryloop.request.purpose"] == "compact"
    assert summary.attributes["gen_ai.response.finish_reasons"] == ["end_turn"]
    assert summary.attributes["gen_ai.usage.output_tokens"] > 0
    assert summary.attributes["gen_ai.usage.input_tokens"] > 0


async def test_content_is_recorded_only_when_the_capture_switch_asks(
    tmp_path: Path,
    receiver: OtlpReceiver,
    providers: Callable[[], TracerProvider],
    env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await run_session(tmp_path / "a", providers(), tmp_path / "a.json")
    off = receiver.wait_for("compaction")
    assert not any(SECRET in repr(s.attributes) for s in off)
    assert not any(SECRET in repr(s.events) for s in off)
    receiver.spans.clear()

    monkeypatch.setenv(CAPTURE_ENV, "true")
    await run_session(tmp_path / "b", providers(), tmp_path / "b.json")
    on = receiver.wait_for("compaction")
    main = by_name(on, "invoke_agent queryloop")
    assert SECRET in main.attributes["gen_ai.input.messages"]
    lookup_span = next(s for s in on if s.name == "execute_tool lookup")
    assert SECRET in lookup_span.attributes["gen_ai.tool.call.arguments"]
    assert lookup_span.attributes["gen_ai.tool.call.result"] == f"value of {SECRET}"
    first_chat = next(s for s in on if s.name.startswith("chat "))
    assert '"tool_call"' in first_chat.attributes["gen_ai.output.messages"]


def tool_result_text(messages: list[Message], tool_use_id: str) -> str:
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id == tool_use_id:
                    assert isinstance(block.content, str)
                    return block.content
    raise AssertionError(f"no result for {tool_use_id}")


async def test_an_automatic_compaction_and_a_background_task_are_spans_of_the_turn(
    tmp_path: Path,
    receiver: OtlpReceiver,
    providers: Callable[[], TracerProvider],
    env: None,
) -> None:
    from queryloop.messages import assistant_message, user_message

    def pre_compact(_event: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"additionalContext": "Mention the word ZEBRA."}}

    calls: list[str] = []

    def model(body: dict[str, Any]) -> Any:
        last = str(body["messages"][-1])
        if "Mention the word ZEBRA" in last:  # the compaction request
            return turn(text("Summary: counting sheep; ZEBRA."))
        calls.append(last)
        if len(calls) == 1:
            command = 'echo "BG=$TRACEPARENT"'
            return turn(tool_use("Bash", {"command": command, "run_in_background": True}))
        return turn(text("done"))

    history: list[Message] = [user_message("Task: count the sheep.")]
    for i in range(12):
        history.append(assistant_message(f"Counted batch {i}: " + "sheep " * 400))
        history.append(user_message(f"next batch {i}"))
    provider = providers()
    with MessagesServer(model) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            history=history,
            allowed_tools=["Bash"],
            hooks={"PreCompact": [pre_compact]},
            autocompact_threshold=3_000,
            context_collapse=False,
            tracer_provider=provider,
        )
        try:
            await agent.run("keep going")
            assert agent.tasks is not None
            [task] = agent.tasks.all()
            await agent.tasks.wait(task.id, 30)
            output = task.output()
        finally:
            await agent.aclose()
    provider.force_flush()
    spans = receiver.wait_for("background_task")
    main = by_name(spans, "invoke_agent queryloop")
    compactions = sorted(receiver.named("compaction auto"), key=lambda s: s.start_ns)
    assert compactions
    for compaction in compactions:
        assert compaction.parent_span_id == main.span_id
        attributes = compaction.attributes
        assert attributes["queryloop.compaction.freed_tokens"] == (
            attributes["queryloop.compaction.pre_tokens"]
            - attributes["queryloop.compaction.post_tokens"]
        )
    assert compactions[0].attributes["queryloop.compaction.freed_tokens"] > 1_000
    # The compaction span starts with its iteration and ends before the first main request;
    # each summary request is a chat span of the turn, within its compaction's time.
    chats = [s for s in receiver.children(main) if s.name.startswith("chat ")]
    summaries = [s for s in chats if s.attributes.get("queryloop.request.purpose") == "compact"]
    requests = [s for s in chats if s not in summaries]
    assert "queryloop.request.purpose" not in requests[0].attributes
    first_chat = min(requests, key=lambda s: s.start_ns)
    assert compactions[0].end_ns <= first_chat.start_ns
    assert len(summaries) == len(compactions)
    ordered = sorted(summaries, key=lambda s: s.start_ns)
    for summary, compaction in zip(ordered, compactions, strict=True):
        assert compaction.start_ns <= summary.start_ns <= summary.end_ns <= compaction.end_ns
        assert summary.attributes["gen_ai.usage.output_tokens"] > 0
    hooks = receiver.named("hook PreCompact")
    assert len(hooks) == len(compactions)
    assert {h.parent_span_id for h in hooks} == {main.span_id}
    assert hooks[0].attributes["queryloop.hook.type"] == "callable"

    bash = by_name(spans, "execute_tool Bash")
    background = by_name(spans, "background_task local_bash")
    assert background.parent_span_id == bash.span_id
    assert background.attributes["queryloop.task.status"] == "completed"
    assert background.attributes["gen_ai.tool.call.id"] == bash.attributes["gen_ai.tool.call.id"]
    assert f"BG=00-{main.trace_id}-{bash.span_id}-" in output


async def test_a_cut_stream_and_a_fallback_leave_their_attempts_marked(
    tmp_path: Path,
    receiver: OtlpReceiver,
    providers: Callable[[], TracerProvider],
    env: None,
) -> None:
    """The loop voids a cut stream (a tombstone, `TombstoneReason.STREAM_RETRY`) and an
    overloaded attempt (the fallback notice): each attempt's `chat` span ends in error with
    why, and the turn carries a retry and a fallback event."""
    provider = providers()
    script = [turn(text("A first block."), text("cut short")), turn(text("From the fallback."))]
    with MessagesServer(script) as server:
        server.inject(cut_stream(1), overloaded())  # the cut voids the first block's message
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            fallback_model="claude-haiku-5-5",
            retry=RetryPolicy(max_retries=0),
            tracer_provider=provider,
        )
        try:
            result = await agent.run("hello")
        finally:
            await agent.aclose()
    provider.force_flush()
    assert result.text == "From the fallback."
    spans = receiver.wait_for("invoke_agent")
    main = by_name(spans, "invoke_agent queryloop")
    chats = [s for s in receiver.children(main) if s.name.startswith("chat ")]
    assert [(c.name, c.attributes.get("error.type"), c.status_code) for c in chats] == [
        ("chat claude-sonnet-5-5", "stream_interrupted", STATUS_ERROR),
        ("chat claude-sonnet-5-5", "overloaded", STATUS_ERROR),
        ("chat claude-haiku-5-5", None, 0),
    ]
    events = [name for name, _attrs in main.events]
    assert events == ["queryloop.request.retry", "queryloop.model.fallback"]
    assert dict(main.events[0][1]) == {"reason": "stream_interrupted"}


async def test_a_prompt_hooks_request_is_a_chat_span_with_its_retry(
    tmp_path: Path,
    receiver: OtlpReceiver,
    providers: Callable[[], TracerProvider],
    env: None,
) -> None:
    """A request beside the loop (here a prompt hook's decision, on the fast model) is billed
    like the loop's: it gets its own `chat` span, with its purpose, usage and retry, under
    whatever was current when it was sent."""
    provider = providers()

    def model(body: dict[str, Any]) -> Any:
        if body["model"] == "claude-haiku-5-5":  # the hook's question
            return turn(text('{"ok": true}'))
        return turn(text("hello back"))

    with MessagesServer(model) as server:
        server.inject(rate_limited(0.01))  # the first request (the hook's) is retried once
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            # A bare hook stands for HookMatcher("", [hook]); the `hooks` type names matchers.
            hooks={"UserPromptSubmit": [PromptHook("Is this prompt polite? $ARGUMENTS")]},  # type: ignore[list-item]
            tracer_provider=provider,
        )
        try:
            assert (await agent.run("hello")).text == "hello back"
        finally:
            await agent.aclose()
    provider.force_flush()
    spans = receiver.wait_for("invoke_agent")
    hook = by_name(spans, "hook UserPromptSubmit")
    [asked] = receiver.children(hook)
    assert (asked.name, asked.kind) == ("chat claude-haiku-5-5", CLIENT)
    assert asked.attributes["queryloop.request.purpose"] == "prompt_hook"
    assert asked.attributes["gen_ai.request.model"] == "claude-haiku-5-5"
    assert asked.attributes["gen_ai.usage.output_tokens"] > 0
    assert [name for name, _ in asked.events] == ["queryloop.request.retry"]
    main = by_name(spans, "invoke_agent queryloop")
    [request] = [s for s in receiver.children(main) if s.name.startswith("chat ")]
    assert "queryloop.request.purpose" not in request.attributes
    assert not request.events  # the retry was the hook's, not the turn's request's
