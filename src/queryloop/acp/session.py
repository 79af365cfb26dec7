"""One editor session: its Agent, its prompt, cancelling it, its mode and model.

The session owns its Agent and the prompt that runs on it. `cancel` stops the prompt as
the REPL's Ctrl-C does (`cli.interrupts.Interruptible`): the Agent is asked to stop
(`Agent.abort`), and if it has not within `HARD_CANCEL_S` the prompt's task is cancelled;
either way the Agent answers every open tool call, so the conversation stays valid for
the next prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from acp.schema import (
    HttpMcpServer,
    McpServerStdio,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    StopReason,
)

from acp import RequestError

from ..loop.events import TerminalEvent
from ..permissions.modes import PermissionMode
from .files import editor_files
from .host import AcpHost, AgentSpec
from .permission import PermissionBridge
from .updates import PromptBlock, Update, UpdateMapper, prompt_text, stop_reason

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities

    from ..agent import Agent
    from ..messages.types import Message

log = logging.getLogger("queryloop.acp")

HARD_CANCEL_S = 0.5
"""After `session/cancel`, how long the Agent may take to stop by itself (the REPL's)."""

MODE_CONFIG_ID, MODEL_CONFIG_ID = "mode", "model"

MODES: Mapping[PermissionMode, tuple[str, str]] = {
    PermissionMode.DEFAULT: ("Default", "Ask before edits and commands the rules do not allow"),
    PermissionMode.ACCEPT_EDITS: ("Accept Edits", "Edit files in the project without asking"),
    PermissionMode.PLAN: ("Plan", "Read and plan only: nothing is changed"),
    PermissionMode.BYPASS: ("Bypass Permissions", "Run everything except what deny rules forbid"),
}
"""The permission modes as session modes (ids are Claude Code's mode names)."""


class AcpSession:
    """One ACP session over one Agent (see the module docstring)."""

    def __init__(
        self,
        host: AcpHost,
        client: Client,
        spec: AgentSpec,
        capabilities: ClientCapabilities | None = None,
    ) -> None:
        self.host = host
        self.client = client
        self.spec = spec
        self.capabilities = capabilities
        """What the client offered in `initialize` (its file system, its terminal)."""
        self.agent = self._make_agent(spec)
        self.mapper = UpdateMapper(spec.cwd)
        self._task: asyncio.Task[StopReason] | None = None
        self._cancelled = False
        self._hard_cancel: asyncio.TimerHandle | None = None

    @property
    def session_id(self) -> str:
        """The session's id: queryloop's, so `queryloop --resume ID` continues it too."""
        return self.agent.session_id

    def _make_agent(self, spec: AgentSpec) -> Agent:
        bridge = PermissionBridge(self.client, lambda: self.session_id, self.host, self.cancel)
        files = editor_files(self.client, self.capabilities, lambda: self.session_id)
        extra = {} if files is None else {"file_access": files}
        return self.host.make_agent(spec, can_use_tool=bridge, on_notice=_notice, **extra)

    async def start(self) -> None:
        """Start the Agent now: settings, MCP servers, the mode in force are known after."""
        await self.agent.start()

    # ---- prompts ------------------------------------------------------------------------

    async def prompt(self, blocks: Sequence[PromptBlock]) -> StopReason:
        """Run one prompt, streaming its updates; how it ended."""
        if self._task is not None:
            raise RequestError.invalid_request(
                {"details": "this session is already running a prompt: cancel it first"}
            )
        text = prompt_text(blocks)
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt has no text"})
        self._cancelled = False
        task = self._task = asyncio.create_task(self._run(text), name="queryloop-acp-prompt")
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and self._cancelled:
                return "cancelled"
            raise
        finally:
            self._task = None
            if self._hard_cancel is not None:
                self._hard_cancel.cancel()
                self._hard_cancel = None

    async def _run(self, text: str) -> StopReason:
        terminal: TerminalEvent | None = None
        async for event in self.agent.stream(text):
            if isinstance(event, TerminalEvent):
                terminal = event
            await self.send(self.mapper.updates(event))
        if self._cancelled:
            return "cancelled"
        reason = stop_reason(terminal, self.agent.messages)
        if reason is None:
            detail = terminal.detail if terminal is not None else "the prompt ended early"
            raise RequestError.internal_error({"details": detail})
        return reason

    async def send(self, updates: Sequence[Update]) -> None:
        """Send updates to the client, in order."""
        for update in updates:
            await self.client.session_update(session_id=self.session_id, update=update)

    def cancel(self) -> None:
        """Stop the running prompt, softly first, then for sure (see the module docstring)."""
        task = self._task
        if task is None or task.done() or self._cancelled:
            return
        self._cancelled = True
        self.agent.abort()
        loop = asyncio.get_running_loop()
        self._hard_cancel = loop.call_later(HARD_CANCEL_S, task.cancel)

    def adopt(self, messages: Sequence[Message]) -> None:
        """Start from another session's conversation (`session/fork`): its messages become
        this session's, written to its own transcript, so a later load finds them."""
        for message in messages:
            self.agent.session.append(message)

    async def replay(self) -> None:
        """Send the stored conversation as updates (`session/load`)."""
        replayer = UpdateMapper(self.spec.cwd, echo_user=True)
        await self.send(replayer.replay(self.agent.messages))

    # ---- mode and model -----------------------------------------------------------------

    def modes(self) -> SessionModeState:
        """The permission modes as session modes, the one in force current."""
        available = [
            SessionMode(id=mode.value, name=name, description=description)
            for mode, (name, description) in MODES.items()
        ]
        return SessionModeState(
            current_mode_id=self.agent.permission_mode, available_modes=available
        )

    def config_options(self) -> list[SessionConfigOptionSelect]:
        """The session's choices as config options: the mode and the model."""
        modes = self.modes()
        mode = SessionConfigOptionSelect(
            id=MODE_CONFIG_ID, name="Mode", category="mode", type="select",
            description="How tool calls are approved (the permission mode)",
            current_value=modes.current_mode_id,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in modes.available_modes
            ],
        )  # fmt: skip
        model = SessionConfigOptionSelect(
            id=MODEL_CONFIG_ID, name="Model", category="model", type="select",
            description="The model that answers", current_value=self.agent.model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in _models(self.agent.model)],
        )  # fmt: skip
        return [mode, model]

    async def set_mode(self, mode_id: str) -> None:
        """Switch the permission mode (also while a prompt runs: calls checked from now on)."""
        from ..errors import ConfigError

        try:
            await self.agent.set_permission_mode(mode_id)
        except ConfigError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None

    async def set_model(self, model: str) -> None:
        """Continue the conversation with another model: the Agent is rebuilt around the
        stored session, as the REPL's /model does."""
        if self._task is not None:
            raise RequestError.invalid_request(
                {"details": "a prompt is running: change the model when it has ended"}
            )
        mode = self.agent.permission_mode
        spec = replace(self.spec, model=model, resume=self.session_id)
        await self.agent.aclose()
        self.spec, self.agent = spec, self._make_agent(spec)
        await self.start()
        await self.agent.set_permission_mode(mode)

    async def aclose(self) -> None:
        """Stop a running prompt and close the Agent (MCP servers, transcript)."""
        task = self._task
        if task is not None:
            task.cancel()
        await self.agent.aclose()


def mcp_servers(servers: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """The client's MCP servers in `.mcp.json` shape (the Agent's `mcp_servers`)."""
    out: dict[str, dict[str, Any]] = {}
    for server in servers:
        if isinstance(server, McpServerStdio):
            entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
            if server.env:
                entry["env"] = {v.name: v.value for v in server.env}
        elif isinstance(server, HttpMcpServer):
            entry = {"type": "http", "url": server.url}
            if server.headers:
                entry["headers"] = {h.name: h.value for h in server.headers}
        else:
            kind = getattr(server, "type", type(server).__name__)
            raise RequestError.invalid_params(
                {"details": f"MCP server {server.name!r}: the {kind} transport is not supported "
                            "(stdio and http are)"}
            )  # fmt: skip
        out[server.name] = entry
    return out


def _models(current: str) -> list[str]:
    from ..providers.models import ALIASES

    return list(dict.fromkeys([current, *ALIASES.values()]))


def _notice(text: str) -> None:
    log.warning("notice: %s", text)
