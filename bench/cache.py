"""Benchmark: how much of a long tool-use session's input comes from the prompt cache.

Scripted 30-turn sessions against `queryloop.testing`'s Messages API server (real HTTP, the
official `anthropic` SDK through `AnthropicProvider`, the server's prompt-cache simulation):
every turn reads a ~2 KB file with the real Read tool. Requests are built the way the loop
builds them: `RequestBuilder` (stable tools and system, user context, moving breakpoint) and
`get_attachment_messages` every turn. Three runs, each also run with caching off:

1. plain: only the Read calls;
2. MCP connect: halfway through, an MCP server connects (its tools become deferred tools and
   its instructions arrive by delta attachment) -- the tools array and system prompt do not
   change, so the cached prefix survives;
3. MCP connect + load: two turns later the model loads one of its tools with ToolSearch; the
   loaded tool is appended to the tools array, which costs one rewrite of the prefix.

    python bench/cache.py [--turns 30] [--model claude-sonnet-4-6]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from queryloop.config import get_user_context
from queryloop.context import (
    AttachmentContext,
    RequestBuilder,
    append_system_context,
    build_dynamic_suffix,
    build_system_prompt,
    get_attachment_messages,
    get_system_context,
    loaded_deferred_tools,
)
from queryloop.context.cache_ttl import CacheTtlSetting
from queryloop.messages import AssistantMessage, Message, ProgressMessage, Usage, user_message
from queryloop.providers.anthropic import AnthropicProvider
from queryloop.providers.base import complete
from queryloop.providers.models import cost_usd
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn
from queryloop.tools.base import BaseTool, Tool, ToolContext, ToolProgress, ToolResult
from queryloop.tools.builtin.read import ReadTool
from queryloop.tools.builtin.tool_search import ToolSearchTool
from queryloop.tools.execution import run_tool_call

PROMPT = "Review every module of this project and list the functions that lack tests."
MCP_INSTRUCTIONS = {"docs": "Search the team's documentation before answering API questions."}


class QueryInput(BaseModel):
    query: str


class FakeMcpTool(BaseTool[QueryInput]):
    """Stands in for a tool of an MCP server that connects mid-session."""

    input_model: type[BaseModel] = QueryInput
    read_only = True

    def __init__(self, name: str, description: str) -> None:
        self.name, self.description = name, description

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        yield ToolResult(content=f"results for {input.query}")


MCP_TOOLS: list[Tool] = [
    FakeMcpTool("mcp__docs__search", "Search the documentation"),
    FakeMcpTool("mcp__docs__fetch_page", "Fetch one documentation page"),
    FakeMcpTool("mcp__docs__list_spaces", "List documentation spaces"),
]


@dataclass
class SessionReport:
    """Usage per request of one scripted session."""

    model: str
    usages: list[Usage] = field(default_factory=list)
    connect_at: int | None = None
    load_at: int | None = None
    violations: int = 0
    tools_changes: int = 0
    """Requests whose tools array differs (as JSON) from the request before."""
    system_changes: int = 0
    """Requests whose system blocks differ (as JSON) from the request before."""

    @property
    def total(self) -> Usage:
        out = Usage()
        for u in self.usages:
            out = out + u
        return out

    @property
    def read_share(self) -> float:
        t = self.total
        return t.cache_read_input_tokens / max(1, t.total_input_tokens)

    @property
    def cost(self) -> float:
        return sum(cost_usd(u, self.model) for u in self.usages)


def make_project(root: Path, files: int) -> None:
    """A git-less project of `files` Python modules of about 2 KB each."""
    for i in range(files):
        body = "".join(
            f"def function_{i}_{j}(x):\n    return x * {j} + {i}  # arithmetic\n\n"
            for j in range(40)
        )
        (root / f"module_{i:02d}.py").write_text(body[:2048])


def script(turns: int, load_at: int | None) -> Any:
    """The model: Read a module per turn, ToolSearch at `load_at`, a final answer at the end."""

    def next_turn(body: dict[str, Any]) -> Turn:
        i = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if i == turns - 1:
            return turn(text("Done: every module is listed above."))
        if i == load_at:
            return turn(tool_use("ToolSearch", {"query": "select:mcp__docs__search"}))
        return turn(
            text(f"Reading module {i}."), tool_use("Read", {"file_path": f"module_{i:02d}.py"})
        )

    return next_turn


async def run_session(
    *,
    turns: int = 30,
    model: str = "claude-sonnet-4-6",
    cache_ttl: CacheTtlSetting | None = "5m",
    connect_at: int | None = None,
    load_at: int | None = None,
) -> SessionReport:
    """Run the scripted session: an MCP server connects before request `connect_at + 1` and
    the model calls ToolSearch in response `load_at + 1` (both 0-based; None: never)."""
    report = SessionReport(model=model, connect_at=connect_at, load_at=load_at)
    with tempfile.TemporaryDirectory() as tmp, MessagesServer(script(turns, load_at)) as server:
        root = Path(tmp)
        make_project(root, turns)
        async with AnthropicProvider(api_key="test", base_url=server.base_url) as provider:
            await _drive(root, provider, report, turns, cache_ttl)
        _record_server(report, server)
    return report


def _record_server(report: SessionReport, server: MessagesServer) -> None:
    report.violations = sum(len(v) for v in server.violations)
    bodies = server.requests
    for key, attr in (("tools", "tools_changes"), ("system", "system_changes")):
        dumps = [json.dumps(b.get(key)) for b in bodies]
        setattr(report, attr, sum(a != b for a, b in itertools.pairwise(dumps)))


async def _drive(
    root: Path,
    provider: AnthropicProvider,
    report: SessionReport,
    turns: int,
    ttl: CacheTtlSetting | None,
) -> None:
    connected: list[Tool] = []
    tools: list[Tool] = [ReadTool(), ToolSearchTool(lambda: connected)]
    system = build_system_prompt(
        attribution="queryloop bench",
        dynamic_suffix=build_dynamic_suffix(cwd=root, model=report.model),
        append=None,
    )
    builder = RequestBuilder(
        model=report.model,
        system=append_system_context(system, get_system_context(root)),
        tools=tools,
        user_context=get_user_context(root, user_home=root / ".home"),
        cache_ttl=ttl,
    )
    tool_ctx = ToolContext(cwd=root)
    messages: list[Message] = [user_message(PROMPT)]
    for i in range(turns):
        if i == report.connect_at:
            connected[:] = MCP_TOOLS
        actx = AttachmentContext(
            cwd=root,
            tool_context=tool_ctx,
            tools=builder.tool_names,
            deferred_tools=[t.name for t in connected],
            mcp_instructions=MCP_INSTRUCTIONS if connected else {},
        )
        messages += await get_attachment_messages(PROMPT if i == 0 else None, actx, messages)
        loaded = loaded_deferred_tools(tool_ctx, connected)
        response = await complete(
            provider, builder.build(messages, max_tokens=4096, extra_tools=loaded)
        )
        report.usages.append(response.usage)
        assistant = AssistantMessage(
            content=response.content, message_id=response.id, stop_reason=response.stop_reason
        )
        messages.append(assistant)
        for block in assistant.content:
            if block.type == "tool_use":
                async for m in run_tool_call(block, [*tools, *loaded, *connected], tool_ctx):
                    if not isinstance(m, ProgressMessage):
                        messages.append(m)


async def run_agent_session(*, turns: int = 30, model: str = "claude-sonnet-4-6") -> SessionReport:
    """The plain session through `queryloop.Agent`: the real query loop, built-in tools,
    attachments, compaction checks and request building, all as a user would run them."""
    from queryloop import Agent

    report = SessionReport(model=model)
    with tempfile.TemporaryDirectory() as tmp, MessagesServer(script(turns, None)) as server:
        root = Path(tmp) / "project"
        root.mkdir()
        make_project(root, turns)
        provider = AnthropicProvider(api_key="test", base_url=server.base_url)
        async with (
            provider,
            Agent(
                model, provider=provider, cwd=root, home=Path(tmp) / "home", persist=False
            ) as agent,
        ):
            result = await agent.run(PROMPT)
        if result.is_error:
            raise RuntimeError(f"the agent stopped early: {result.terminal} {result.detail}")
        report.usages = [
            m.usage for m in result.messages if isinstance(m, AssistantMessage) and m.usage
        ]
        _record_server(report, server)
    return report


def uncached_cost(r: SessionReport) -> float:
    """What the same requests cost without caching (every prompt token at the input price)."""
    t = r.total
    return cost_usd(
        Usage(input_tokens=t.total_input_tokens, output_tokens=t.output_tokens), r.model
    )


def _line(label: str, r: SessionReport) -> str:
    t = r.total
    return (
        f"  {label:<9} input {t.input_tokens:>8,}  cache write {t.cache_creation_input_tokens:>7,}"
        f"  cache read {t.cache_read_input_tokens:>8,}  output {t.output_tokens:>6,}"
        f"  read {r.read_share:6.1%}  cost ${r.cost:.4f}"
    )


def _request(r: SessionReport, i: int, label: str) -> str:
    u = r.usages[i]
    return (
        f"    request {i + 1:>2} {label:<28} read {u.cache_read_input_tokens:>7,}"
        f"  write {u.cache_creation_input_tokens:>6,}  uncached {u.input_tokens:>5,}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--model", default="claude-sonnet-4-6")
    parser.add_argument("--driver", choices=("builder", "agent"), default="builder")
    args = parser.parse_args()
    if args.driver == "agent":
        await agent_main(args.turns, args.model)
        return
    n, mid = args.turns, args.turns // 2
    runs = {
        "plain": {},
        "MCP connect": {"connect_at": mid},
        "MCP connect + ToolSearch load": {"connect_at": mid, "load_at": mid + 2},
    }
    violations = 0
    print(f"{n}-turn tool-use sessions, model {args.model}")
    for name, kw in runs.items():
        cached = await run_session(turns=n, model=args.model, **kw)
        uncached = await run_session(turns=n, model=args.model, cache_ttl=None, **kw)
        violations += cached.violations + uncached.violations
        print(f"{name}:")
        print(_line("cached", cached))
        print(_line("uncached", uncached))
        print(
            f"  saving {1 - cached.cost / uncached.cost:.1%} of the uncached cost; tools/system "
            f"changed {cached.tools_changes}/{cached.system_changes} times"
        )
        if cached.connect_at is not None:
            c = cached.connect_at
            print(_request(cached, c - 1, "before MCP connect"))
            print(_request(cached, c, "MCP connected (delta only)"))
            print(_request(cached, c + 1, "after"))
        if cached.load_at is not None:
            ld = cached.load_at
            print(_request(cached, ld + 1, "first with the loaded tool"))
            print(_request(cached, ld + 2, "next"))
    print(f"API-rule violations in all requests: {violations}")


async def agent_main(turns: int, model: str) -> None:
    """The plain session through queryloop.Agent (it cannot connect MCP servers mid-session)."""
    r = await run_agent_session(turns=turns, model=model)
    print(f"{turns}-turn tool-use session through queryloop.Agent, model {model}")
    print(_line("agent", r))
    uncached = uncached_cost(r)
    print(f"  same requests uncached: ${uncached:.4f}; saving {1 - r.cost / uncached:.1%}")
    print(
        f"  requests {len(r.usages)}; tools/system changed between requests "
        f"{r.tools_changes}/{r.system_changes} times; API-rule violations {r.violations}"
    )


if __name__ == "__main__":
    asyncio.run(main())
