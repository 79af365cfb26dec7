"""`queryloop acp` end to end: the real command as a subprocess, driven over stdio by the
`agent-client-protocol` package's own client, against the scripted Messages API server
(strict: a request that breaks an API rule is refused, as the real API would).

One server process serves the whole module (it starts in about a second); each test opens
its own session in it, so they share nothing but the process and the model's script.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileEditToolCallContent,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionConfigOptionSelect,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process

from acp import PROTOCOL_VERSION, text_block
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Script:
    """The model's turns: each test queues the ones it needs."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []

    def __call__(self, body: dict[str, Any]) -> Turn:
        if not self.turns:
            raise AssertionError("the model was called more often than the test scripted")
        return self.turns.pop(0)


@dataclass
class Editor:
    """The client side: records what the agent sends and answers permission questions."""

    updates: list[Any] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    """Option ids to choose, in order (a question with none left fails the test)."""
    asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    asking: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while a question answered "hold" waits (until `cancelled` is set)."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    buffers: dict[str, str] = field(default_factory=dict)
    """Unsaved text of open files, by path (`fs/read_text_file`; the disk for the rest)."""
    written: dict[str, str] = field(default_factory=dict)
    """What `fs/write_text_file` put into buffers (never saved to the disk)."""
    read: list[str] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.arrived.set()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        choice = self.answers.pop(0)
        if choice == "hold":  # the user has not answered yet; the prompt is cancelled
            self.asking.set()
            await self.cancelled.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.read.append(path)
        text = self.buffers.get(path)
        return ReadTextFileResponse(content=Path(path).read_text() if text is None else text)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.written[path] = self.buffers[path] = content

    def take(self) -> list[Any]:
        """The updates so far, forgotten."""
        taken, self.updates = self.updates, []
        return taken


@dataclass
class World:
    server: MessagesServer
    script: Script
    editor: Editor
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    project: Path
    incoming: list[dict[str, Any]]


@pytest.fixture(scope="module")
def model_server() -> Iterator[tuple[MessagesServer, Script]]:
    script = Script()
    with MessagesServer(script, strict=True) as server:
        yield server, script


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(
    model_server: tuple[MessagesServer, Script], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[World]:
    server, script = model_server
    root = tmp_path_factory.mktemp("acp")
    project = root / "proj"
    project.mkdir()
    home = root / "home"
    env = {
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "QUERYLOOP_HOME": str(home),
        "QUERYLOOP_MANAGED_SETTINGS": str(home / "managed-settings.json"),
        "CLAUDE_CONFIG_DIR": str(root / "claude"),
        "QUERYLOOP_CLAUDE_MANAGED_DIR": str(root / "claude-managed"),
        "QUERYLOOP_TOOL_USE_SUMMARIES": "0",
        "PYTHONUNBUFFERED": "1",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    editor = Editor()
    incoming: list[dict[str, Any]] = []

    def observe(event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            incoming.append(event.message)

    spawned = spawn_agent_process(
        cast(Client, editor),
        sys.executable, "-m", "queryloop.cli.main", "acp",
        env=env, cwd=project, transport_kwargs={"stderr": None}, observers=[observe],
    )  # fmt: skip
    async with spawned as (conn, process):
        yield World(server, script, editor, conn, process, project, incoming)


async def new_session(world: World) -> str:
    response = await world.conn.new_session(cwd=str(world.project), mcp_servers=[])
    world.editor.take()
    return response.session_id


def texts(updates: list[Any]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and u.content.type == "text"
    )


async def test_initialize_says_what_it_supports(world: World) -> None:
    response = await world.conn.initialize(protocol_version=PROTOCOL_VERSION)

    assert response.protocol_version == PROTOCOL_VERSION
    capabilities = response.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.image is False  # the Agent's prompt is text
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.mcp_capabilities is not None and capabilities.mcp_capabilities.http is True
    assert response.auth_methods == []  # the environment's API key
    assert response.agent_info is not None and response.agent_info.name == "queryloop"


async def test_a_prompt_streams_text_tool_calls_diffs_the_plan_and_asks_both_ways(
    world: World,
) -> None:
    (world.project / "a.txt").write_text("old line\n")
    session = await new_session(world)
    todos = [
        {"content": "Edit a.txt", "status": "completed", "activeForm": "Editing a.txt"},
        {"content": "Write b.txt", "status": "in_progress", "activeForm": "Writing b.txt"},
    ]
    world.script.turns += [
        turn(text("Reading it first."), tool_use("Read", {"file_path": "a.txt"})),
        turn(
            tool_use(
                "Edit", {"file_path": "a.txt", "old_string": "old line", "new_string": "new line"}
            )
        ),
        turn(
            tool_use("TodoWrite", {"todos": todos}),
            tool_use("Write", {"file_path": "b.txt", "content": "hi\n"}),
        ),
        turn(text("Done.")),
    ]
    world.editor.answers += ["allow", "reject"]

    response = await world.conn.prompt(session_id=session, prompt=[text_block("Fix a.txt")])

    assert response.stop_reason == "end_turn"
    updates = world.editor.take()
    assert texts(updates) == "Reading it first.Done."
    starts = {u.title.split()[0]: u for u in updates if isinstance(u, ToolCallStart)}
    assert starts["Read"].kind == "read"
    edit = starts["Edit"]
    assert edit.kind == "edit" and edit.status == "pending"
    assert edit.locations is not None and edit.locations[0].path == str(world.project / "a.txt")
    diff = edit.content[0] if edit.content else None
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.old_text, diff.new_text) == ("old line", "new line")
    ends = {u.tool_call_id: u.status for u in updates if isinstance(u, ToolCallProgress)}
    edit_statuses = [
        u.status
        for u in updates
        if isinstance(u, ToolCallProgress) and u.tool_call_id == edit.tool_call_id
    ]
    assert edit_statuses == ["in_progress", "completed"]  # allowed, then done
    assert ends[starts["Write"].tool_call_id] == "failed"
    assert (world.project / "a.txt").read_text() == "new line\n"  # allowed
    assert not (world.project / "b.txt").exists()  # rejected
    [plan] = [u for u in updates if isinstance(u, AgentPlanUpdate)]
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Edit a.txt", "completed"),
        ("Write b.txt", "in_progress"),
    ]
    # Both questions went to the editor, with Claude Code's choices.
    (edit_call, edit_options), (write_call, _) = world.editor.asked
    assert edit_call.tool_call_id == edit.tool_call_id and write_call.title is not None
    assert [o.kind for o in edit_options] == ["allow_always", "allow_once", "reject_once"]
    assert world.server.violations == [[] for _ in world.server.violations]


async def test_cancel_mid_stream_stops_and_the_session_takes_the_next_prompt(world: World) -> None:
    session = await new_session(world)
    world.script.turns += [turn(text("word " * 400)), turn(text("Back again."))]
    world.server.event_delay = 0.02
    world.editor.arrived.clear()
    try:
        running = asyncio.create_task(
            world.conn.prompt(session_id=session, prompt=[text_block("Write a lot")])
        )
        await asyncio.wait_for(world.editor.arrived.wait(), 30)  # the first chunk is here
        await world.conn.cancel(session_id=session)
        response = await asyncio.wait_for(running, 30)
    finally:
        world.server.event_delay = 0.0
    assert response.stop_reason == "cancelled"
    streamed = texts(world.editor.take())
    assert 0 < len(streamed) < len("word " * 400)

    again = await world.conn.prompt(session_id=session, prompt=[text_block("Go on")])

    assert again.stop_reason == "end_turn"
    assert texts(world.editor.take()) == "Back again."
    # The strict server accepted the request after the cancel: the array stayed valid, and
    # it carries what was streamed before the cancel.
    last = world.server.requests[-1]
    assert world.server.violations[-1] == []
    assert "Go on" in json.dumps(last["messages"])


async def test_load_replays_a_past_session_and_set_mode_takes_effect(world: World) -> None:
    (world.project / "c.txt").write_text("one\n")
    session = await new_session(world)
    world.script.turns += [
        turn(text("Looking."), tool_use("Read", {"file_path": "c.txt"})),
        turn(text("It says one.")),
    ]
    await world.conn.prompt(session_id=session, prompt=[text_block("What is in c.txt?")])
    world.editor.take()

    loaded = await world.conn.load_session(
        cwd=str(world.project), session_id=session, mcp_servers=[]
    )

    replayed = world.editor.take()
    assert [u.content.text for u in replayed if isinstance(u, UserMessageChunk)] == [
        "What is in c.txt?"
    ]
    assert texts(replayed) == "Looking.It says one."
    [read] = [u for u in replayed if isinstance(u, ToolCallStart)]
    assert read.kind == "read"
    assert [u.status for u in replayed if isinstance(u, ToolCallProgress)] == ["completed"]
    assert loaded is not None and loaded.modes is not None
    assert loaded.modes.current_mode_id == "default"

    # acceptEdits: the next edit runs without a question.
    await world.conn.set_session_mode(session_id=session, mode_id="acceptEdits")
    world.script.turns += [
        turn(tool_use("Edit", {"file_path": "c.txt", "old_string": "one", "new_string": "two"})),
        turn(text("Edited.")),
    ]
    asked_before = len(world.editor.asked)
    response = await world.conn.prompt(session_id=session, prompt=[text_block("Make it two")])
    assert response.stop_reason == "end_turn"
    assert (world.project / "c.txt").read_text() == "two\n"
    assert len(world.editor.asked) == asked_before


async def test_a_malformed_line_gets_an_error_and_the_server_goes_on(world: World) -> None:
    stdin = world.process.stdin
    assert stdin is not None
    stdin.write(b"this is not json\n")
    stdin.write(b'{"jsonrpc": "2.0", "id": 99}\n')
    await stdin.drain()

    session = await new_session(world)  # still serving

    errors = [m for m in world.incoming if "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in errors] == [(None, -32700), (99, -32600)]
    assert session


async def test_always_allow_saves_the_rule_as_the_repl_does(world: World) -> None:
    session = await new_session(world)
    world.script.turns += [
        turn(tool_use("Write", {"file_path": "new.txt", "content": "one\n"})),
        turn(tool_use("Read", {"file_path": "new.txt"})),
        turn(tool_use("Write", {"file_path": "new.txt", "content": "two\n"})),
        turn(text("Written twice.")),
    ]
    world.editor.answers += ["allow_always"]
    asked_before = len(world.editor.asked)

    response = await world.conn.prompt(session_id=session, prompt=[text_block("Write new.txt")])

    assert response.stop_reason == "end_turn"
    assert (world.project / "new.txt").read_text() == "two\n"
    assert len(world.editor.asked) == asked_before + 1  # the second Write did not ask
    _, options = world.editor.asked[-1]
    always = next(o for o in options if o.kind == "allow_always")
    rule = (always.field_meta or {})["queryloop"]["rule"]
    saved = json.loads((world.project / ".queryloop" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == [rule]


async def test_sessions_are_listed_resumed_and_forked(world: World) -> None:
    session = await new_session(world)
    world.script.turns += [turn(text("First answer."))]
    await world.conn.prompt(session_id=session, prompt=[text_block("Remember the word kiwi")])
    world.editor.take()

    listed = await world.conn.list_sessions(cwd=str(world.project))
    assert session in [s.session_id for s in listed.sessions]
    assert "Remember the word kiwi" in [s.title for s in listed.sessions]

    forked = await world.conn.fork_session(
        session_id=session, cwd=str(world.project), mcp_servers=[]
    )
    assert forked.session_id != session
    world.script.turns += [turn(text("Kiwi."))]
    await world.conn.prompt(session_id=forked.session_id, prompt=[text_block("Which word?")])
    assert "Remember the word kiwi" in json.dumps(world.server.requests[-1]["messages"])
    world.editor.take()
    # The fork is a session of its own on disk: loading it shows the history it started from.
    await world.conn.load_session(
        cwd=str(world.project), session_id=forked.session_id, mcp_servers=[]
    )
    replayed = [u.content.text for u in world.editor.take() if isinstance(u, UserMessageChunk)]
    assert replayed == ["Remember the word kiwi", "Which word?"]

    resumed = await world.conn.resume_session(
        session_id=session, cwd=str(world.project), mcp_servers=[]
    )
    assert resumed.modes is not None
    assert not any(isinstance(u, UserMessageChunk) for u in world.editor.take())  # no replay


async def test_the_model_is_a_session_option(world: World) -> None:
    session = await new_session(world)
    chosen = await world.conn.set_config_option(
        config_id="model", session_id=session, value="claude-haiku-5-5"
    )
    assert chosen is not None
    model = next(o for o in chosen.config_options if o.id == "model")
    assert isinstance(model, SessionConfigOptionSelect)
    assert model.current_value == "claude-haiku-5-5"
    world.script.turns += [turn(text("From haiku."))]
    await world.conn.prompt(session_id=session, prompt=[text_block("Hello")])
    assert world.server.requests[-1]["model"] == "claude-haiku-5-5"


async def test_cancel_while_a_question_is_open_refuses_the_call(world: World) -> None:
    session = await new_session(world)
    world.script.turns += [
        turn(tool_use("Write", {"file_path": "held.txt", "content": "no\n"})),
        turn(text("Fine.")),
    ]
    world.editor.answers += ["hold"]
    running = asyncio.create_task(
        world.conn.prompt(session_id=session, prompt=[text_block("Write held.txt")])
    )
    await asyncio.wait_for(world.editor.asking.wait(), 30)

    await world.conn.cancel(session_id=session)
    world.editor.cancelled.set()  # as the protocol asks of a client that cancels

    assert (await asyncio.wait_for(running, 30)).stop_reason == "cancelled"
    assert not (world.project / "held.txt").exists()
    updates = world.editor.take()
    assert [u.status for u in updates if isinstance(u, ToolCallProgress)] == ["failed"]
    again = await world.conn.prompt(session_id=session, prompt=[text_block("Never mind")])
    assert again.stop_reason == "end_turn"
    assert world.server.violations[-1] == []


async def test_an_editor_file_system_is_read_and_written_through_and_none_means_the_disk(
    world: World,
) -> None:
    path = world.project / "open.txt"
    path.write_text("text on disk\n")
    world.editor.buffers[str(path)] = "text in the buffer\n"  # unsaved in the editor
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    await world.conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs)
    )
    try:
        session = await new_session(world)
    finally:  # sessions opened later (and the other tests') use the disk
        await world.conn.initialize(protocol_version=PROTOCOL_VERSION)
    edit = {"file_path": "open.txt", "old_string": "in the buffer", "new_string": "edited"}
    world.script.turns += [
        turn(tool_use("Read", {"file_path": "open.txt"})),
        turn(tool_use("Edit", edit)),
        turn(text("Done.")),
    ]
    world.editor.answers += ["allow"]
    first = len(world.server.requests)

    response = await world.conn.prompt(session_id=session, prompt=[text_block("Edit it")])

    assert response.stop_reason == "end_turn"
    seen = json.dumps(world.server.requests[first + 1]["messages"][-1])
    assert "text in the buffer" in seen and "on disk" not in seen  # Read saw the buffer
    assert world.editor.written == {str(path): "text edited\n"}  # Edit wrote the buffer
    assert path.read_text() == "text on disk\n"  # and not the disk
    statuses = [u.status for u in world.editor.take() if isinstance(u, ToolCallProgress)]
    assert statuses.count("completed") == 2

    # A session of a client that offers no file system reads the disk, as the terminal does.
    world.editor.read.clear()
    plain = await new_session(world)
    world.script.turns += [turn(tool_use("Read", {"file_path": "open.txt"})), turn(text("Ok."))]
    first = len(world.server.requests)
    await world.conn.prompt(session_id=plain, prompt=[text_block("Read it")])
    assert "text on disk" in json.dumps(world.server.requests[first + 1]["messages"][-1])
    assert world.editor.read == []
