"""Long-session benchmark: an 80-turn session whose tool results total far more than the window.

Every turn the scripted model calls a tool whose result is about 4k tokens (80 x 4k = 320k,
against a 200k window). The session runs over real HTTP against `queryloop.testing`'s
Messages API server through the Anthropic provider, with `CompactionPipeline` doing all
compaction. It checks and prints:

- compactions (autocompact / reactive), collapses drained, prompt-too-long errors recovered;
- API-rule violations the server found (must be 0) and the peak request size (server count);
- whether the task, a fact stated only in the first user message and a note the user sent a
  third of the way in were in every request from the one where they were first sent, and
  whether the latest tool result was in each request verbatim;
- the cache read share of input tokens and the total cost at Sonnet prices.

A second run gives the server a smaller window than the client believes (a forced
prompt-too-long) to show recovery by drain and reactive compact.

Run: `.venv/bin/python bench/long_session.py [--turns 80] [--result-tokens 4000]
[--driver mini|agent]`. The `mini` driver is a minimal loop (pipeline, model call, tool
results, prompt-too-long recovery by drain then reactive compact), so its numbers measure
compaction alone; `agent` runs the same session through `queryloop.Agent` and its query loop.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from queryloop.compact import (
    CLEARED_PLACEHOLDER,
    AutoCompactTracking,
    CompactConfig,
    CompactionPipeline,
    provider_summarizer,
)
from queryloop.compact.policy import (
    COMPACTION_NAMES,
    CachePrices,
    CompactionName,
    policy_named,
)
from queryloop.context.request import RequestBuilder
from queryloop.messages import (
    AssistantMessage,
    Message,
    ToolUseBlock,
    Usage,
    tool_result_message,
    user_message,
)
from queryloop.providers.anthropic import AnthropicProvider
from queryloop.providers.base import ModelRequest, complete
from queryloop.providers.errors import PromptTooLongError
from queryloop.providers.models import cost_usd, get_model_info
from queryloop.testing import MessagesServer, count_input_tokens, text, tool_use, turn

MODEL = "claude-sonnet-4-0"
"""A model with a 200k window and 64k output (and not deprecated in the installed SDK)."""
TASK = "Audit every module of the project, one per step, and report at the end."
FACT = "The release codename is BLUE-HERON-7731."
NOTE = "One more thing: deploy only in the Thursday window DW-0400."
"""The second planted fact: a message the user sends while the session runs (step turns // 3):
a plain user message in the mini driver, a queued prompt (`Agent.queue`) in the agent driver."""
COMPACT_MARK = "Your task is to write a detailed summary"
TOOL = {
    "name": "Bash",  # a tool whose old results microcompact may clear
    "description": "Run a shell command.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def tool_output(step: int, tokens: int) -> str:
    """A deterministic, unique ~`tokens`-token output for `step`."""
    line = f"step {step:03d}: module_{step:03d}.py checked, {step * 7} findings, all recorded\n"
    return (line * (tokens * 4 // len(line) + 1))[: tokens * 4] + f"\nEND OF STEP {step}"


@dataclass
class Script:
    """The scripted model: a tool call per turn, a summary for compaction requests."""

    turns: int
    tool: str = "Bash"
    compaction_requests: int = 0
    model_turns: int = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        if COMPACT_MARK in json.dumps(body["messages"][-1]):
            self.compaction_requests += 1
            # Deliberately forgets the codename: restoration must keep it, not the model.
            return turn(
                text(
                    "<analysis>ok</analysis><summary>1. Primary Request and Intent: audit the "
                    f"modules one per step.\n8. Current Work: step {self.model_turns}.\n"
                    f"9. Next Step: step {self.model_turns + 1}.</summary>"
                )
            )
        self.model_turns += 1
        if self.model_turns >= self.turns:
            return turn(text("All modules audited. Report: no blocking findings."))
        # Fixed ids keep the requests byte-identical from run to run (`Report.request_digest`).
        name = f"toolu_bench_{self.model_turns:04d}"
        call = tool_use(self.tool, {"command": "audit"}, id=name)
        return turn(text(f"Step {self.model_turns}."), call)


@dataclass
class Report:
    """What one run measured."""

    terminal: str = ""
    requests: int = 0
    compactions: int = 0
    reactive_compactions: int = 0
    cleared_results: int = 0
    """Tool results shown cleared (microcompact's placeholder) in the last request."""
    drains: int = 0
    prompt_too_long: int = 0
    violations: int = 0
    peak_request_tokens: int = 0
    """The largest request the server accepted (its own token count)."""
    cache_read_share: float = 0.0
    cost_usd: float = 0.0
    fact_missing: int = 0
    """Requests without the task, the first message's fact, or (once sent) the user's note."""
    latest_result_missing: int = 0
    usage: Usage = field(default_factory=Usage)
    request_digest: str = ""
    """sha256 of every request body in order (the session folder's path blanked)."""


async def run_mini(
    *,
    turns: int,
    result_tokens: int,
    server_window: int,
    client_window: int,
    session_dir: Path,
    collapse: bool = True,
    compaction: CompactionName = "default",
    tool: str = "Bash",
) -> Report:
    """Run the session with a minimal loop around `CompactionPipeline` and the policy
    called `compaction`; a `tool` other than Bash is one microcompact may not clear (a
    user's own tool), so only a summary frees its results."""
    script = Script(turns, tool)
    report = Report()
    with MessagesServer(script, context_window=server_window) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.base_url)
        builder = RequestBuilder(
            model=MODEL,
            system=[{"type": "text", "text": "You are an auditing agent."}],
            tools=[{**TOOL, "name": tool}],
        )
        summarize = provider_summarizer(
            provider, lambda m, p: builder.build_compaction_request(m, p)
        )
        pipeline = CompactionPipeline(
            CompactConfig(
                context_window=client_window,
                max_output_tokens=64_000,
                env={},
                collapse_enabled=collapse,
                policy=policy_named(compaction, CachePrices.of(get_model_info(MODEL))),
            ),
            summarize=summarize,
            session_dir=session_dir,
        )
        try:
            await _drive(pipeline, builder, provider, report, result_tokens, turns // 3)
        finally:
            await provider.aclose()
        _measure(server.requests, report, server_window, session_dir)
        report.violations = sum(len(v) for v in server.violations)
    return report


async def _drive(
    pipeline: CompactionPipeline,
    builder: RequestBuilder,
    provider: AnthropicProvider,
    report: Report,
    result_tokens: int,
    note_step: int,
) -> None:
    messages: list[Message] = [user_message(f"{TASK} {FACT}")]
    tracking = AutoCompactTracking()
    reactive_done = drained = False
    step = 0  # counted here: a compaction shortens the history, not the work done
    while True:
        pre = await pipeline.preprocess(messages, tracking)
        tracking, messages = pre.tracking, pre.messages_for_query
        report.compactions += pre.compacted
        if pre.at_blocking_limit:
            report.terminal = "blocking_limit"
            return
        request = builder.build(messages, max_tokens=8_192)
        try:
            response = await complete(provider, _with(request, pre.context_management, pre.betas))
        except PromptTooLongError as error:
            report.prompt_too_long += 1
            if not drained and await pipeline.drain_collapses():
                report.drains += 1
                drained = True
                continue
            result = None if reactive_done else await pipeline.reactive(messages, error)
            if result is None:
                report.terminal = "prompt_too_long"
                return
            report.reactive_compactions += 1
            reactive_done, messages = True, list(result.messages)
            continue
        drained = reactive_done = False
        report.usage = report.usage + response.usage
        report.cost_usd += cost_usd(response.usage, MODEL)
        reply = AssistantMessage(
            content=response.content, message_id=response.id, usage=response.usage
        )
        messages = [*messages, reply]
        uses = [b for b in response.content if isinstance(b, ToolUseBlock)]
        if not uses:
            report.terminal = "completed"
            return
        step += 1
        messages += [tool_result_message(u.id, tool_output(step, result_tokens)) for u in uses]
        if step == note_step:
            messages.append(user_message(NOTE))


def _with(
    request: ModelRequest, context_management: dict[str, Any] | None, betas: Sequence[str]
) -> ModelRequest:
    from dataclasses import replace

    return replace(request, context_management=context_management, betas=tuple(betas))


def _measure(
    requests: Sequence[dict[str, Any]], report: Report, server_window: int, session_dir: Path
) -> None:
    report.requests = len(requests)
    noted = False
    for body in requests:
        blob = json.dumps(body["messages"])
        size = count_input_tokens(body)
        if size <= server_window:  # the server refused the larger ones (prompt too long)
            report.peak_request_tokens = max(report.peak_request_tokens, size)
        lost_note = noted and NOTE not in blob
        noted = noted or NOTE in blob
        if FACT not in blob or "Audit every module" not in blob or lost_note:
            report.fact_missing += 1
        if COMPACT_MARK in json.dumps(body["messages"][-1]):
            continue
        latest = _latest_result(body)
        if latest is not None and "END OF STEP" not in latest:
            report.latest_result_missing += 1
    report.fact_missing += not noted  # the note never reached the model
    if requests:
        report.cleared_results = json.dumps(requests[-1]["messages"]).count(CLEARED_PLACEHOLDER)
    every = json.dumps(list(requests), sort_keys=True).replace(str(session_dir), "<dir>")
    report.request_digest = hashlib.sha256(every.encode()).hexdigest()
    total_in = report.usage.total_input_tokens
    report.cache_read_share = report.usage.cache_read_input_tokens / total_in if total_in else 0.0


def _latest_result(body: dict[str, Any]) -> str | None:
    """The content of the last tool_result in the request, if the last turn carries one."""
    last = body["messages"][-1]
    results = [b for b in last["content"] if b.get("type") == "tool_result"]
    if not results:
        return None
    content = results[-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


async def run_agent(
    *,
    turns: int,
    result_tokens: int,
    server_window: int,
    client_window: int,
    session_dir: Path,
    collapse: bool = False,
    compaction: CompactionName | None = None,
) -> Report:
    """Run the session through `queryloop.Agent` (the real query loop); `collapse` is the
    Agent's `context_collapse` option (off by default, as in the Agent), `compaction` its
    compaction policy (None: the settings' in `session_dir/home`, else the default)."""
    from queryloop.agent.core import Agent
    from queryloop.loop.events import (
        CompactionEvent,
        CompactTrigger,
        TerminalEvent,
        TransitionEvent,
    )
    from queryloop.loop.reasons import Continue
    from queryloop.tools.decorator import tool

    steps = [0]
    agents: list[Agent] = []

    @tool
    def Bash(command: str) -> str:
        """Run a shell command.

        Args:
            command: The command to run.
        """
        steps[0] += 1
        if steps[0] == turns // 3:
            agents[0].queue(NOTE)  # the user types while the agent works
        return tool_output(steps[0], result_tokens)

    script = Script(turns)
    report = Report()
    with MessagesServer(script, context_window=server_window) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.base_url)
        agent = Agent(
            MODEL,
            provider=provider,
            tools=[Bash],
            builtin_tools=False,
            cwd=session_dir,
            home=session_dir / "home",
            permission_mode="bypassPermissions",
            context_collapse=collapse,
            context_window=client_window,
            compaction=compaction,
        )
        agents.append(agent)
        try:
            async for event in agent.stream(f"{TASK} {FACT}"):
                if isinstance(event, TransitionEvent):
                    report.drains += event.reason is Continue.COLLAPSE_DRAIN_RETRY
                    report.reactive_compactions += event.reason is Continue.REACTIVE_COMPACT_RETRY
                elif isinstance(event, CompactionEvent):
                    report.compactions += event.trigger is CompactTrigger.AUTO
                elif isinstance(event, TerminalEvent):
                    report.terminal = str(event.reason)
        finally:
            await agent.aclose()
            await provider.aclose()
        report.usage, report.cost_usd = agent.usage, agent.cost_usd
        report.prompt_too_long = len(server.requests) - script.model_turns
        report.prompt_too_long -= script.compaction_requests
        _measure(server.requests, report, server_window, session_dir)
        report.violations = sum(len(v) for v in server.violations)
    return report


def _print(title: str, report: Report) -> None:
    print(f"== {title}")
    for key, value in vars(report).items():
        if key == "usage":
            value = json.dumps(value.to_dict())
        elif isinstance(value, float):
            value = f"{value:.4f}"
        print(f"  {key:32} {value}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=80)
    parser.add_argument("--result-tokens", type=int, default=4_000)
    parser.add_argument("--driver", choices=["mini", "agent"], default="mini")
    parser.add_argument("--compaction", choices=["default", "economy"], default="default")
    parser.add_argument(
        "--unclearable",
        action="store_true",
        help="mini driver: the tool is not one microcompact clears (only summaries free it)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="only the 200k-window session without collapse, under both compaction policies",
    )
    args = parser.parse_args()
    if args.compare:
        await compare(args.driver, args.turns, args.result_tokens, args.unclearable)
        return
    run = run_agent if args.driver == "agent" else run_mini
    scenarios = [
        ("all stages (collapse on), 200k window", 200_000, True),
        ("collapse off: autocompact, 200k window", 200_000, False),
        ("collapse on, server window 120k, client believes 200k", 120_000, True),
        ("collapse off, server window 120k, client believes 200k", 120_000, False),
    ]
    head = f"{args.driver}, {args.compaction}: {args.turns} turns, ~{args.result_tokens} tokens"
    with tempfile.TemporaryDirectory() as tmp:
        for title, server_window, collapse in scenarios:
            report = await run(
                turns=args.turns,
                result_tokens=args.result_tokens,
                server_window=server_window,
                client_window=200_000,
                session_dir=Path(tmp),
                collapse=collapse,
                compaction=args.compaction,
            )
            _print(f"{head} per tool result; {title}", report)


async def compare(driver: str, turns: int, result_tokens: int, unclearable: bool) -> None:
    """The same session under both policies, and economy's cost as a share of default's."""
    run: Any = run_agent if driver == "agent" else run_mini
    extra = {"tool": "Audit"} if unclearable and driver == "mini" else {}
    reports: dict[str, Report] = {}
    for name in COMPACTION_NAMES:
        with tempfile.TemporaryDirectory() as tmp:
            reports[name] = await run(
                **extra,
                turns=turns,
                result_tokens=result_tokens,
                server_window=200_000,
                client_window=200_000,
                session_dir=Path(tmp),
                collapse=False,
                compaction=name,
            )
        _print(
            f"{driver}: {turns} turns, ~{result_tokens} tokens per result; {name}", reports[name]
        )
    share = reports["economy"].cost_usd / reports["default"].cost_usd
    print(f"economy costs {share:.1%} of default")


if __name__ == "__main__":
    asyncio.run(main())
