"""The protocol's methods (`acp.interfaces.Agent`) over queryloop sessions, and `serve`.

Capabilities are what is implemented, no more: `session/load` (and list, resume, fork,
close), text prompts with linked and embedded resources (no images or audio: the Agent's
prompt is text), MCP servers from the client over stdio and streamable HTTP. Authentication
is the environment's API key (`ANTHROPIC_API_KEY`, or `OPENAI_API_KEY` for an OpenAI
model), so no method is advertised.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from acp import PROTOCOL_VERSION, RequestError

from .host import AcpHost, AgentSpec
from .session import MODE_CONFIG_ID, MODEL_CONFIG_ID, AcpSession, mcp_servers
from .transport import StrictNdjsonTransport, claim_stdio, open_streams

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

    from .updates import PromptBlock

    McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

log = logging.getLogger("queryloop.acp")


class QueryloopAcpAgent:
    """The ACP agent: one `AcpSession` per session id."""

    def __init__(self, host: AcpHost) -> None:
        self.host = host
        self.sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None
        self.capabilities: ClientCapabilities | None = None
        """What the client offered in its latest `initialize`; sessions opened after it
        use its file system (`acp.files`)."""

    def on_connect(self, conn: Client) -> None:
        """The connection to the client (requests and updates go through it)."""
        self._client = conn

    @property
    def client(self) -> Client:
        """The client, once connected."""
        if self._client is None:
            raise RequestError.internal_error({"details": "no client connected"})
        return self._client

    # ---- setup --------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Our capabilities (see the module docstring) and who we are; the client's are
        kept for the sessions it opens."""
        from .. import __version__

        self.capabilities = client_capabilities

        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            mcp_capabilities=McpCapabilities(http=True, sse=False),
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities(),
                resume=SessionResumeCapabilities(),
                fork=SessionForkCapabilities(),
                close=SessionCloseCapabilities(),
            ),
        )
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=capabilities,
            auth_methods=[],
            agent_info=Implementation(name="queryloop", title="queryloop", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Nothing to do when the environment has a key; otherwise say which to set."""
        if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("OPENAI_API_KEY"):
            return AuthenticateResponse()
        raise RequestError.auth_required(
            {"details": "set ANTHROPIC_API_KEY (or OPENAI_API_KEY for an openai: model) in "
                        "the environment the editor starts `queryloop acp` with"}
        )  # fmt: skip

    # ---- sessions -----------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session in the client's folder, with its MCP servers beside the project's."""
        session = await self._open(AgentSpec(_folder(cwd), mcp_servers=_servers(mcp_servers)))
        return NewSessionResponse(
            session_id=session.session_id,
            modes=session.modes(),
            config_options=list(session.config_options()),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """A stored session, its conversation replayed as updates before the answer."""
        session = await self._resume(cwd, session_id, mcp_servers)
        await session.replay()
        return LoadSessionResponse(
            modes=session.modes(), config_options=list(session.config_options())
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """A stored session, continued without a replay."""
        session = await self._resume(cwd, session_id, mcp_servers)
        return ResumeSessionResponse(
            modes=session.modes(), config_options=list(session.config_options())
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """A new session that starts from a stored one's conversation."""
        from ..session import load_transcript

        folder = _folder(cwd)
        loaded = load_transcript(_stored(session_id, folder))
        session = await self._open(AgentSpec(folder, mcp_servers=_servers(mcp_servers)))
        session.adopt(loaded.messages)
        return ForkSessionResponse(
            session_id=session.session_id,
            modes=session.modes(),
            config_options=list(session.config_options()),
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        """The stored sessions of a folder, newest first (all in one page)."""
        from ..session import list_sessions

        folder = _folder(cwd) if cwd else self.host.cwd
        infos = [
            SessionInfo(
                session_id=summary.id,
                cwd=str(folder),
                title=summary.first_prompt or None,
                updated_at=summary.modified.isoformat(),
            )
            for summary in list_sessions(folder)
        ]
        return ListSessionsResponse(sessions=infos)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """Stop the session's prompt, close its Agent."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()
        return CloseSessionResponse()

    # ---- prompts, cancel, mode and model ------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        """Run the prompt, streaming `session/update`s; how it ended."""
        reason = await self._session(session_id).prompt(prompt)
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's prompt at once, as Ctrl-C does."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        """Switch the permission mode."""
        await self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """Set the mode or the model; answers with every option as it is now."""
        session = self._session(session_id)
        if config_id == MODE_CONFIG_ID and isinstance(value, str):
            await session.set_mode(value)
        elif config_id == MODEL_CONFIG_ID and isinstance(value, str):
            await session.set_model(value)
        else:
            raise RequestError.invalid_params(
                {"details": f"no option {config_id!r} taking {value!r}: "
                            f"{MODE_CONFIG_ID!r} and {MODEL_CONFIG_ID!r} take a value"}
            )  # fmt: skip
        return SetSessionConfigOptionResponse(config_options=list(session.config_options()))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored, as the protocol asks."""

    # ---- helpers ------------------------------------------------------------------------

    async def _open(self, spec: AgentSpec) -> AcpSession:
        session = AcpSession(self.host, self.client, spec, self.capabilities)
        try:
            await session.start()
        except RequestError:
            raise
        except Exception as exc:
            await session.agent.aclose()
            raise RequestError.internal_error({"details": str(exc)}) from None
        old = self.sessions.pop(session.session_id, None)
        if old is not None:
            await old.aclose()
        self.sessions[session.session_id] = session
        return session

    async def _resume(
        self, cwd: str, session_id: str, servers: list[McpServer] | None
    ) -> AcpSession:
        folder = _folder(cwd)
        _stored(session_id, folder)  # a wrong id fails before anything starts
        return await self._open(AgentSpec(folder, resume=session_id, mcp_servers=_servers(servers)))

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"details": f"no session {session_id!r}: create or load it first"}
            )
        return session

    async def aclose(self) -> None:
        """Close every session (at the end of input)."""
        for session in list(self.sessions.values()):
            await session.aclose()
        self.sessions.clear()


def _folder(cwd: str) -> Path:
    path = Path(cwd).expanduser()
    if not path.is_absolute() or not path.is_dir():
        raise RequestError.invalid_params(
            {"details": f"cwd {cwd!r} is not an absolute path to a folder"}
        )
    return path.resolve()


def _servers(servers: list[McpServer] | None) -> dict[str, dict[str, Any]]:
    return mcp_servers(servers or [])


def _stored(session_id: str, folder: Path) -> Path:
    """The transcript of a stored session; "resource not found" when there is none."""
    from ..session import SessionError, find_session

    try:
        return find_session(session_id, folder)
    except SessionError as exc:
        raise RequestError.resource_not_found(session_id) from exc


def serve(host: AcpHost) -> int:
    """Run the ACP agent on this process's stdin/stdout until the client closes it."""
    logging.basicConfig(level=logging.WARNING, format="queryloop acp: %(levelname)s: %(message)s")
    fds = claim_stdio()
    asyncio.run(_serve(host, fds))
    return 0


async def _serve(host: AcpHost, fds: Any) -> None:
    reader, writer = await open_streams(fds)
    transport = StrictNdjsonTransport(reader, writer)
    agent = QueryloopAcpAgent(host)
    conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    try:
        await conn.listen()
    finally:
        await agent.aclose()
        await asyncio.shield(conn.close())
