"""The Claude Agent SDK's sessions on queryloop: its `session_store` option with a store the
user wrote (async, as the SDK's protocol is), its session functions under its names, and its
`fork_session` and `resume_session_at` options."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    ClaudeAgentOptions,
    InMemorySessionStore,
    ResultMessage,
    SessionKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    fork_session,
    get_session_info,
    get_session_messages,
    list_sessions,
    query,
)
from queryloop.testing import MessagesServer, text, turn


class DictStore:
    """A session store as a user of the SDK writes one: async methods over a dict, and only
    the required `append` and `load` plus `list_sessions` (no `delete`, no subkeys)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], list[str]] = {}
        self.stamps: dict[tuple[str, str], int] = {}

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        await asyncio.sleep(0)  # a real await, as a network client has
        address = (key["project_key"], key["session_id"], key.get("subpath") or "")
        self.rows.setdefault(address, []).extend(json.dumps(e) for e in entries)
        if not key.get("subpath"):
            self.stamps[address[:2]] = len(self.stamps) + 1_000 * len(self.rows[address])

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        rows = self.rows.get((key["project_key"], key["session_id"], key.get("subpath") or ""))
        return [json.loads(r) for r in rows] if rows else None

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        return [
            {"session_id": session, "mtime": stamp}
            for (project, session), stamp in self.stamps.items()
            if project == project_key
        ]


async def _ask(prompt: str, **options: Any) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=ClaudeAgentOptions(**options))]


def _session_of(messages: list[Any]) -> str:
    return next(m for m in messages if isinstance(m, ResultMessage)).session_id


def _sent(server: MessagesServer) -> str:
    return json.dumps(server.requests[-1]["messages"])


async def test_a_users_async_store_holds_the_session_and_resume_and_fork_read_it(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    sdk_server.script([turn(text(f"ANSWER-{n}")) for n in range(1, 6)])
    store = DictStore()
    first = _session_of(await _ask("PROMPT-1", session_store=store))
    assert any(key[1] == first for key in store.rows)

    infos = list_sessions(directory=tmp_path, session_store=store)
    assert [i.session_id for i in infos] == [first] and infos[0].summary == "PROMPT-1"
    info = get_session_info(first, directory=tmp_path, session_store=store)
    assert info is not None and info.first_prompt == "PROMPT-1"

    again = _session_of(await _ask("PROMPT-2", resume=first, session_store=store))
    assert again == first and "ANSWER-1" in _sent(sdk_server)
    messages = get_session_messages(first, directory=tmp_path, session_store=store)
    assert [m.type for m in messages] == ["user", "assistant", "user", "assistant"]

    forked = _session_of(
        await _ask("PROMPT-FORK", resume=first, fork_session=True, session_store=store)
    )
    assert forked != first and "ANSWER-2" in _sent(sdk_server)
    assert len(get_session_messages(first, directory=tmp_path, session_store=store)) == 4

    at = _session_of(
        await _ask(
            "PROMPT-AT", resume=first, resume_session_at=messages[1].uuid, session_store=store
        )
    )
    assert at == first
    sent = _sent(sdk_server)
    assert "ANSWER-1" in sent and "PROMPT-2" not in sent


async def test_the_sdk_named_in_memory_store_and_fork_session_function(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    sdk_server.script([turn(text("ONE")), turn(text("TWO"))])
    store = InMemorySessionStore()
    first = _session_of(await _ask("HELLO", session_store=store))
    assert store.size == 1
    result = fork_session(first, directory=tmp_path, session_store=store)
    assert result.session_id != first and store.size == 2
    copied = get_session_messages(result.session_id, directory=tmp_path, session_store=store)
    assert [m.type for m in copied] == ["user", "assistant"]
    assert "ONE" in json.dumps(copied[-1].message)


async def test_fork_and_resume_at_need_a_session_to_resume(sdk_server: MessagesServer) -> None:
    from queryloop.claude_agent_sdk import UnsupportedOptionError

    with pytest.raises(UnsupportedOptionError, match="fork_session"):
        await _ask("x", fork_session=True)
    with pytest.raises(UnsupportedOptionError, match="resume_session_at"):
        await _ask("x", resume_session_at="some-uuid")
