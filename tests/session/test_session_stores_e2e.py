"""Sessions in a database, end to end through the real Agent over HTTP (issue 33, item 2).

With `QUERYLOOP_SESSION_STORE=sqlite:///...` nothing is written as a JSONL transcript, and
resume (by id prefix), `continue_latest`, rewind, the report, the listing and subagent
sidechains all read from the database. The store is chosen by the option, the variable or a
trusted settings file (an untrusted project's `sessionStore` is ignored). Forks remap every
uuid; resuming at a message continues from it, now and after any later load.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_support import MODEL, NO_RETRY, agent_on, messages_json
from queryloop import Agent
from queryloop.cli.commands import print_sessions
from queryloop.messages.serialization import message_to_dict
from queryloop.session import list_sessions, load_transcript
from queryloop.session.sqlite_store import SqliteSessionStore
from queryloop.session.store import project_key
from queryloop.session.store_api import SessionListSubkeysKey
from queryloop.session.stores import TranscriptRef
from queryloop.sessions import fork_session, get_session_info, get_session_messages
from queryloop.testing import MessagesServer, text, tool_use, turn


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_key: None) -> Path:
    """`QUERYLOOP_SESSION_STORE` names a SQLite file."""
    path = tmp_path / "db" / "sessions.db"
    monkeypatch.setenv("QUERYLOOP_SESSION_STORE", f"sqlite:///{path}")
    return path


def _jsonl_files(home: Path) -> list[Path]:
    return sorted((home / "projects").rglob("*.jsonl")) if (home / "projects").is_dir() else []


async def test_a_session_in_sqlite_resumes_continues_rewinds_and_reports(
    db: Path, tmp_path: Path
) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    cwd.mkdir()
    script = [
        turn(text("Listing."), tool_use("Bash", {"command": "echo FIRST-TOOL-OUTPUT"})),
        turn(text("FIRST-ANSWER")),
        turn(text("SECOND-ANSWER")),
        turn(text("THIRD-ANSWER")),
        turn(text("FOURTH-ANSWER")),
    ]
    with MessagesServer(script) as server:
        async with agent_on(server, cwd, home, permission_mode="bypassPermissions") as agent:
            await agent.run("FIRST-PROMPT")
            session_id = agent.session_id
        assert _jsonl_files(home) == []  # the transcript went to the database
        store = SqliteSessionStore(db)
        entries = store.load({"project_key": project_key(cwd), "session_id": session_id})
        assert entries is not None and any(e.get("record") == "message" for e in entries)

        async with Agent.continue_latest(
            MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, home=home
        ) as agent:
            assert agent.session_id == session_id
            await agent.run("SECOND-PROMPT")
        assert "FIRST-TOOL-OUTPUT" in messages_json(server.requests[-1])

        async with Agent.resume(
            session_id[:8], MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, home=home
        ) as agent:
            outcome = await agent.rewind(2, "conversation")
            assert outcome.removed
            page = agent.report(tmp_path / "report.html")
        assert session_id in page.read_text(encoding="utf-8")

        async with Agent.resume(
            session_id, MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, home=home
        ) as agent:
            await agent.run("THIRD-PROMPT")
        sent = messages_json(server.requests[-1])
        assert "FIRST-PROMPT" in sent and "SECOND-PROMPT" not in sent  # the rewind held

    shown = io.StringIO()
    print_sessions(cwd, shown)  # `queryloop sessions`: the configured store
    assert session_id in shown.getvalue() and "FIRST-PROMPT" in shown.getvalue()
    listed = list_sessions(cwd, store=store)
    assert [s.id for s in listed] == [session_id]
    assert listed[0].first_prompt == "FIRST-PROMPT" and listed[0].prompts == 3
    assert listed[0].path is None and "sqlite:///" in listed[0].location
    store.close()
    assert _jsonl_files(home) == []


async def test_a_subagent_transcript_is_a_subkey_in_the_database(db: Path, tmp_path: Path) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    cwd.mkdir()
    call = {"description": "look", "prompt": "Say SUB-ANSWER", "subagent_type": "general-purpose"}
    script = [
        turn(tool_use("Agent", call)),
        turn(text("SUB-ANSWER")),
        turn(text("MAIN-DONE")),
    ]
    with MessagesServer(script) as server:
        async with agent_on(server, cwd, home, permission_mode="bypassPermissions") as agent:
            await agent.run("delegate")
            session_id = agent.session_id
    store = SqliteSessionStore(db)
    key = SessionListSubkeysKey(project_key=project_key(cwd), session_id=session_id)
    subkeys = store.list_subkeys(key)
    assert len(subkeys) == 1 and subkeys[0].startswith("subagents/agent-")
    side = load_transcript(TranscriptRef.of(store, project_key(cwd), session_id, subkeys[0]))
    assert side.metadata["sidechain"] is True
    assert "SUB-ANSWER" in json.dumps([message_to_dict(m) for m in side.messages])
    store.close()
    assert _jsonl_files(home) == []


async def test_the_store_is_chosen_by_option_then_trusted_settings_only(
    tmp_path: Path, api_key: None
) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    (cwd / ".queryloop").mkdir(parents=True)
    project_db, user_db, option_db = (tmp_path / f"{n}.db" for n in ("project", "user", "opt"))
    (cwd / ".queryloop" / "settings.json").write_text(
        json.dumps({"sessionStore": f"sqlite:///{project_db}"})
    )
    with MessagesServer([turn(text("one")), turn(text("two")), turn(text("three"))]) as server:
        async with agent_on(server, cwd, home) as agent:  # untrusted project: ignored
            await agent.run("p1")
            first = agent.session_id
        assert [p.stem for p in _jsonl_files(home)] == [first] and not project_db.exists()

        home.mkdir(exist_ok=True)
        (home / "settings.json").write_text(json.dumps({"sessionStore": f"sqlite:///{user_db}"}))
        async with agent_on(server, cwd, home) as agent:  # the user's own file counts
            await agent.run("p2")
            second = agent.session_id
        in_user_db = SqliteSessionStore(user_db)
        assert [e["session_id"] for e in in_user_db.list_sessions(project_key(cwd))] == [second]
        in_user_db.close()

        mine = SqliteSessionStore(option_db)
        async with agent_on(server, cwd, home, session_store=mine) as agent:  # the option wins
            await agent.run("p3")
            third = agent.session_id
        assert [e["session_id"] for e in mine.list_sessions(project_key(cwd))] == [third]
        mine.load({"project_key": project_key(cwd), "session_id": third})  # still open: ours
        mine.close()


async def test_a_fork_has_new_ids_and_resuming_at_a_message_continues_from_it(
    tmp_path: Path, home: Path
) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    script: list[Any] = [turn(text(f"ANSWER-{n}")) for n in range(1, 6)]
    with MessagesServer(script) as server:
        async with agent_on(server, cwd, home) as agent:
            await agent.run("PROMPT-1")
            await agent.run("PROMPT-2")
            source = agent.session_id
        original = get_session_messages(source, directory=cwd)
        assert [m.type for m in original] == ["user", "assistant", "user", "assistant"]
        cut = original[1].uuid  # the first answer

        fork = fork_session(source, directory=cwd, up_to_message_id=cut)
        forked = get_session_messages(fork.session_id, directory=cwd)
        assert fork.session_id != source
        assert [m.message["content"] for m in forked] == [
            m.message["content"] for m in original[:2]
        ]
        assert not {m.uuid for m in forked} & {m.uuid for m in original}
        assert {m.session_id for m in forked} == {fork.session_id}
        info = get_session_info(fork.session_id, directory=cwd)
        assert info is not None and info.custom_title == "PROMPT-1 (fork)"
        assert get_session_messages(source, directory=cwd) == original  # untouched

        async with Agent.resume(
            fork.session_id, MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, home=home
        ) as agent:
            await agent.run("PROMPT-FORK")
        sent = messages_json(server.requests[-1])
        assert "ANSWER-1" in sent and "PROMPT-2" not in sent

        async with Agent.resume(
            source, MODEL, at=cut, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, home=home
        ) as agent:
            await agent.run("PROMPT-AT")
        sent = messages_json(server.requests[-1])
        assert "ANSWER-1" in sent and "PROMPT-2" not in sent and "ANSWER-2" not in sent
    again = [m.uuid for m in get_session_messages(source, directory=cwd)]
    assert again[:2] == [m.uuid for m in original[:2]] and len(again) == 4  # it held
    with pytest.raises(ValueError, match="no message"):
        fork_session(source, directory=cwd, up_to_message_id="not-a-message")
    with pytest.raises(FileNotFoundError):
        fork_session("no-such-session", directory=cwd)
