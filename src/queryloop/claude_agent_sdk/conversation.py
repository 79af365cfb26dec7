"""`Conversation`: one queryloop `Agent` driven the way the SDK's front ends need it.

`query()` and `ClaudeSDKClient` both use it: it makes the Agent from the options
(`mapping.plan_agent`), runs one prompt at a time through `Agent.stream` and turns the
events into the SDK's messages (`convert`): an `init` system message first, then the
response, then a `ResultMessage` built from the Agent's `RunResult`. It uses only the
Agent's public API.

What it honours itself: `include_partial_messages` (stream events), `max_budget_usd`
(after each model response, if the cost since the connection began reached the budget, the
turn is stopped and the result is `error_max_budget_usd`), an interrupt, and `set_model`
(the Agent is closed and the session resumed under the new model before the next prompt,
as the REPL's /model does: a session's model is fixed while it runs, docs/architecture.md).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .. import __version__
from ..agent import Agent, PermissionDenial, RunResult
from ..loop.events import LoopEvent, RequestStart, StreamDelta
from ..loop.reasons import Terminal
from ..messages.types import AssistantMessage as LoopAssistant
from ..messages.usage import Usage
from ..providers.base import MessageComplete
from ..sessions import fork_session
from .convert import convert_event
from .mapping import AgentPlan, checked_mode, plan_agent
from .messages import Message, ResultMessage, SystemMessage
from .options import ClaudeAgentOptions

_SUBTYPES = {Terminal.COMPLETED: "success", Terminal.MAX_TURNS: "error_max_turns"}
_UNSET = object()


class Conversation:
    """An Agent for a set of options, run one prompt at a time."""

    def __init__(self, options: ClaudeAgentOptions) -> None:
        self.plan: AgentPlan = plan_agent(options)
        self.agent: Agent | None = None
        self._next_model: Any = _UNSET
        self._cost = 0.0
        self._usage = Usage()
        self._running = False
        self._interrupted = False

    async def open(self) -> Agent:
        """Make the Agent (new, resumed or continued) and start it."""
        plan = self.plan
        if plan.resume and plan.fork_session:
            fork = fork_session(
                plan.resume,
                plan.kwargs["cwd"],
                up_to_message_id=plan.resume_session_at,
                session_store=plan.kwargs.get("session_store"),
            )
            agent = Agent.resume(fork.session_id, plan.model, **plan.kwargs)
        elif plan.resume:
            at = plan.resume_session_at
            agent = Agent.resume(plan.resume, plan.model, at=at, **plan.kwargs)
        elif plan.continue_latest:
            agent = Agent.continue_latest(plan.model, **plan.kwargs)
        else:
            agent = Agent(plan.model, **plan.kwargs)
        return await self._start(agent)

    async def _start(self, agent: Agent) -> Agent:
        self.agent = agent
        if self.plan.permission is not None:
            self.plan.permission.on_interrupt = self.interrupt
        await agent.start()
        return agent

    @property
    def session_id(self) -> str:
        return self.agent.session_id if self.agent is not None else ""

    async def run(self, prompt: str) -> AsyncIterator[Message]:
        """One prompt: `init`, the response's messages, then its `ResultMessage`."""
        agent = await self._switch_model()
        self._running, self._interrupted = True, False
        try:
            yield self.init_message(agent)
            meter = _Meter(agent.cost_usd)
            async for event in agent.stream(prompt):
                if self._interrupted:
                    agent.abort()  # asked before the turn had begun: stop it now
                spent = self._cost + agent.cost_usd - meter.cost_before
                if meter.observe(event, spent, self.plan.max_budget_usd):
                    agent.abort()
                for message in convert_event(
                    event,
                    agent.session_id,
                    partial=self.plan.include_partial_messages,
                    replay=self.plan.replay_user_messages,
                ):
                    yield message
        finally:
            self._running = False
        result = agent.last_result
        assert result is not None  # set when the stream ends
        yield self._result(result, meter)

    def interrupt(self) -> None:
        """Stop the running turn as soon as it safely can (nothing runs: nothing to do)."""
        if self.agent is not None and self._running:
            self._interrupted = True
            self.agent.abort()

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the mode now, also for a turn that is running."""
        assert self.agent is not None
        await self.agent.set_permission_mode(checked_mode(mode) or "default")

    def set_model(self, model: str | None) -> None:
        """Use `model` (None: the default) from the next prompt on."""
        self._next_model = model

    async def close(self) -> None:
        """Run SessionEnd hooks, stop MCP servers, close the transcript."""
        if self.agent is not None:
            await self.agent.aclose()

    async def _switch_model(self) -> Agent:
        agent = self.agent
        assert agent is not None, "open() first"
        if self._next_model is _UNSET:
            return agent
        model, self._next_model = self._next_model, _UNSET
        # The new Agent goes on where this one is: same session, same permission mode.
        kwargs = {
            **self.plan.kwargs,
            "session_id": agent.session_id,
            "permission_mode": agent.permission_mode,
        }
        await agent.aclose()
        if agent.messages:
            kwargs.pop("session_id")
            return await self._start(Agent.resume(agent.session_id, model, **kwargs))
        return await self._start(Agent(model, **kwargs))

    def init_message(self, agent: Agent) -> SystemMessage:
        """Claude Code's `system`/`init`: what this session runs with."""
        tools = agent.tool_names
        data = {
            "type": "system",
            "subtype": "init",
            "uuid": str(uuid.uuid4()),
            "session_id": agent.session_id,
            "cwd": str(agent.options.workspace.cwd),
            "model": agent.model,
            "tools": tools,
            "mcp_servers": [{"name": s["name"], "status": s["status"]} for s in mcp_status(agent)],
            "permissionMode": agent.permission_mode,
            "slash_commands": sorted(agent.slash_commands),
            "skills": sorted(agent.skills),
            "output_style": "default",
            "queryloop_version": __version__,
        }
        return SystemMessage("init", data)

    def _errors(self, run: RunResult, over_budget: bool, completed: bool) -> list[str] | None:
        """Why the run is an error, if it is: the budget (not the interruption that
        stopped the turn), else the loop's own detail."""
        if over_budget:
            return _budget_errors(self.plan.max_budget_usd)
        return None if completed or not run.detail else [run.detail]

    def _result(self, run: RunResult, meter: _Meter) -> ResultMessage:
        self._cost += run.cost_usd
        self._usage = self._usage + run.usage
        over_budget = meter.over_budget
        completed = run.terminal is Terminal.COMPLETED and not over_budget
        subtype = "error_max_budget_usd" if over_budget else _subtype(run.terminal)
        text: str | None = None
        if completed:
            text = run.text
        elif run.terminal is Terminal.MODEL_ERROR:
            text = run.detail or None
        return ResultMessage(
            subtype=subtype,
            duration_ms=int(run.duration_s * 1000),
            duration_api_ms=meter.api_ms,
            is_error=not completed,
            num_turns=run.turns,
            session_id=run.session_id,
            stop_reason=_stop_reason(run),
            total_cost_usd=round(self._cost, 6),
            usage=self._usage.to_dict(),
            result=text,
            permission_denials=[_denial(d) for d in run.denials],
            errors=self._errors(run, over_budget, completed),
            uuid=str(uuid.uuid4()),
            terminal_reason=run.terminal.value,
        )


def _budget_errors(budget: float | None) -> list[str]:
    """Claude Code's words when `--max-budget-usd` stops a run."""
    return [f"Exceeded USD budget ({budget:g})"] if budget is not None else []


class _Meter:
    """Per prompt: time spent waiting for the model, and the budget check after each
    response (cost is what the Agent spent since this conversation began)."""

    def __init__(self, cost_before: float) -> None:
        self.cost_before = cost_before
        self.api_ms = 0
        self.over_budget = False
        self._request_started: float | None = None

    def observe(self, event: LoopEvent, spent: float, budget: float | None) -> bool:
        """True when this event puts the conversation over its budget (stop the turn);
        `spent` is what it cost since it began."""
        if isinstance(event, RequestStart):
            self._request_started = time.monotonic()
        elif isinstance(event, StreamDelta) and isinstance(event.event, MessageComplete):
            if self._request_started is not None:
                self.api_ms += int((time.monotonic() - self._request_started) * 1000)
                self._request_started = None
            if budget is not None and not self.over_budget and spent >= budget:
                self.over_budget = True
                return True
        return False


def _subtype(terminal: Terminal) -> str:
    if terminal is Terminal.MODEL_ERROR:
        return "success"  # the SDK reports an API failure as success with is_error true
    return _SUBTYPES.get(terminal, "error_during_execution")


def _stop_reason(run: RunResult) -> str | None:
    last = next((m for m in reversed(run.messages) if isinstance(m, LoopAssistant)), None)
    return last.stop_reason if last is not None else None


def _denial(denial: PermissionDenial) -> dict[str, Any]:
    """Claude Code's `permission_denials` entry."""
    return {
        "tool_name": denial.tool_name,
        "tool_use_id": denial.tool_use_id,
        "tool_input": dict(denial.tool_input),
    }


def mcp_status(agent: Agent) -> list[dict[str, Any]]:
    """Each MCP server as the SDK reports it: name, status, error, tools. In-process
    servers (their tools are queryloop tools named `mcp__<server>__<tool>`) are connected."""
    tools: dict[str, list[dict[str, str]]] = {}
    for name in agent.tool_names:
        if name.startswith("mcp__"):
            server, _, tool = name[len("mcp__") :].partition("__")
            tools.setdefault(server, []).append({"name": tool})
    servers: dict[str, dict[str, Any]] = {
        name: {"name": name, "status": "connected"} for name in tools
    }
    for name, status in agent.mcp_status.items():
        entry: dict[str, Any] = {"name": name, "status": status.state}
        if status.state == "failed" and status.message:
            entry["error"] = status.message
        servers[name] = entry
    for name, entry in servers.items():
        entry["tools"] = tools.get(name, [])
    return [servers[name] for name in sorted(servers)]
