"""`ClaudeSDKClient`: a conversation you send prompts to and read messages from.

`query()` queues a prompt and returns at once; a background task runs the queued prompts
one after another on the Agent (each its own response, ending with a `ResultMessage`) and
puts their messages in a queue that `receive_messages()` / `receive_response()` read. An
error of the Agent reaches the reader as a `ProcessError` (or the error itself, when it
is queryloop's `ConfigError`: a setting to fix).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ..errors import ConfigError
from .conversation import Conversation, mcp_status
from .errors import ClaudeSDKError, CLIConnectionError, ProcessError, UnsupportedOptionError
from .messages import Message, ResultMessage
from .options import ClaudeAgentOptions
from .prompts import Prompt, prompt_texts


@dataclass(frozen=True)
class _Failed:
    """The runner stopped on an exception; the reader raises it."""

    error: BaseException


class ClaudeSDKClient:
    """A stateful conversation: prompts in (`query`), messages out (`receive_response`),
    with interrupts and mode and model switches in between.

        async with ClaudeSDKClient(options) as client:
            await client.query("What is 2 + 2?")
            async for message in client.receive_response():
                print(message)
    """

    def __init__(self, options: ClaudeAgentOptions | None = None, transport: Any = None):
        if transport is not None:
            raise UnsupportedOptionError("transport", "queryloop runs no CLI to talk to")
        self.options = options or ClaudeAgentOptions()
        self._conversation: Conversation | None = None
        self._prompts: asyncio.Queue[str] = asyncio.Queue()
        self._out: asyncio.Queue[Message | _Failed] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []

    async def connect(self, prompt: Prompt | None = None) -> None:
        """Start the Agent (and send `prompt`, if given). Raises `UnsupportedOptionError`
        for an option queryloop cannot honour, `ConfigError` for unusable settings."""
        if self._conversation is not None:
            return
        conversation = Conversation(self.options)
        await conversation.open()
        self._conversation = conversation
        self._tasks.append(asyncio.create_task(self._run()))
        if prompt is not None:  # an iterable may wait on the caller: read it in the background
            self._tasks.append(asyncio.create_task(self._feed(prompt)))

    async def query(self, prompt: Prompt, session_id: str = "default") -> None:
        """Queue `prompt` (a string, or user message dicts one turn each). `session_id`
        is accepted for the SDK's signature; the conversation keeps its own id."""
        self._connected()
        if isinstance(prompt, str):
            self._prompts.put_nowait(prompt)
            return
        async for text in prompt_texts(prompt):
            self._prompts.put_nowait(text)

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message, as it comes, until `disconnect()`."""
        self._connected()
        while True:
            item = await self._out.get()
            if isinstance(item, _Failed):
                raise item.error
            yield item

    async def receive_response(self) -> AsyncIterator[Message]:
        """The messages up to and including the next `ResultMessage`."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    async def interrupt(self) -> None:
        """Stop the running turn; its response ends with an `error_during_execution`
        result, and the conversation goes on with the next prompt."""
        self._connected().interrupt()

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode now (also for the turn that is running)."""
        await self._connected().set_permission_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """Use `model` (None: the default) from the next prompt on."""
        self._connected().set_model(model)

    async def rewind_files(self, user_message_id: str) -> None:
        """Put the files back as they were before the prompt whose message has this uuid
        (queryloop always keeps file checkpoints)."""
        agent = self._connected().agent
        assert agent is not None
        await agent.rewind(user_message_id, "code")

    async def get_context_usage(self) -> dict[str, Any]:
        """Tokens by category (system, tools, memory, messages, free) and the window."""
        agent = self._connected().agent
        assert agent is not None
        usage = agent.context_usage()
        window = usage.get("window", 0)
        used = sum(v for k, v in usage.items() if k not in ("free", "window"))
        return {
            "categories": [
                {"name": k, "tokens": v} for k, v in usage.items() if k not in ("window",)
            ],
            "totalTokens": used,
            "maxTokens": window,
            "rawMaxTokens": window,
            "percentage": 100.0 * used / window if window else 0.0,
            "model": agent.model,
        }

    async def get_mcp_status(self) -> dict[str, Any]:
        """`{"mcpServers": [...]}`: each server's name, `status` ("connected", "failed",
        "pending"), `error` when it failed, and its tools; in-process servers included."""
        agent = self._connected().agent
        assert agent is not None
        return {"mcpServers": mcp_status(agent)}

    async def stop_task(self, task_id: str) -> None:
        """Stop a background task (a shell or an agent the model started); its end is
        reported as a `TaskNotificationMessage` with status "stopped"."""
        agent = self._connected().agent
        assert agent is not None and agent.tasks is not None
        await agent.tasks.stop(task_id)

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Connect MCP server `server_name` afresh (`Agent.mcp_reconnect`): one that failed,
        or one whose tokens a login stored meanwhile. A server that joins now brings its
        tools from the next request on. Raises `ClaudeSDKError` when the reconnection fails
        or the session has no such server (in-process servers have no connection)."""
        agent = self._connected().agent
        assert agent is not None
        try:
            status = await agent.mcp_reconnect(server_name)
        except ConfigError as exc:  # no such server
            raise ClaudeSDKError(str(exc)) from exc
        if status.state != "connected":
            raise ClaudeSDKError(
                f"MCP server {server_name!r} did not reconnect: {status.message or status.state}"
            )

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Not supported: a session's tools are fixed when it starts (an error says so)."""
        raise ClaudeSDKError(
            f"toggle_mcp_server({server_name!r}, {enabled}) is not supported by queryloop: a "
            "session's tools are fixed when it starts (the prompt cache depends on them); "
            "leave a server's tools out with disallowed_tools instead"
        )

    async def get_server_info(self) -> dict[str, Any] | None:
        """What the session runs with: the `init` message's data."""
        conversation = self._connected()
        assert conversation.agent is not None
        return conversation.init_message(conversation.agent).data

    async def disconnect(self) -> None:
        """Stop the running turn and the Agent (SessionEnd hooks, MCP servers closed)."""
        conversation, self._conversation = self._conversation, None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if conversation is not None:
            await conversation.close()

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        await self.disconnect()
        return False

    # ---- the background work ----------------------------------------------------------

    def _connected(self) -> Conversation:
        if self._conversation is None:
            raise CLIConnectionError("Not connected. Call connect() first.")
        return self._conversation

    async def _run(self) -> None:
        conversation = self._connected()
        while True:
            prompt = await self._prompts.get()
            try:
                async for message in conversation.run(prompt):
                    self._out.put_nowait(message)
            except asyncio.CancelledError:
                raise
            except (ConfigError, ClaudeSDKError) as exc:  # raised as they are: fix and retry
                self._out.put_nowait(_Failed(exc))
            except Exception as exc:
                failed = ProcessError(f"the run failed: {exc}", exit_code=1, stderr=repr(exc))
                failed.__cause__ = exc
                self._out.put_nowait(_Failed(failed))

    async def _feed(self, prompt: Prompt) -> None:
        try:
            await self.query(prompt)
        except Exception as exc:  # a message that cannot be read: the reader is told
            self._out.put_nowait(_Failed(exc))
