"""Checkpoints and rewind: the store on real files, the Agent over the local server, and the
headless `queryloop rewind` on the session that Agent left."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from agent_support import agent_on as shared_agent_on
from queryloop import Agent
from queryloop.checkpoints import CheckpointStore, RewindError, RewindMode, rewind
from queryloop.messages import UserMessage
from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    return home


# ---- the store ----------------------------------------------------------------------------


def test_store_snapshots_once_per_prompt_and_restores(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    a, b = work / "a.txt", work / "b.txt"
    a.write_text("v0")
    store = CheckpointStore(tmp_path / "cp")
    store.begin("u1", "first")
    store.before_change(a)
    a.write_text("v1")
    store.before_change(a)  # the same prompt: the first snapshot stays
    store.begin("u2", "second")
    store.before_change(a)
    a.write_text("v2")
    store.before_change(b)  # did not exist
    b.write_text("new")
    report = store.restore_code(store.find(2))  # type: ignore[arg-type]
    assert (a.read_text(), b.exists()) == ("v1", False)
    assert report.restored == (str(a),) and report.deleted == (str(b),)
    store.restore_code(store.find("u1"))  # type: ignore[arg-type]
    assert a.read_text() == "v0"
    # A fresh store reads the same checkpoints back from disk.
    again = CheckpointStore(tmp_path / "cp")
    assert [(c.number, c.prompt_uuid, c.changed_paths) for c in again.checkpoints()] == [
        (1, "u1", [str(a)]),
        (2, "u2", [str(a), str(b)]),
    ]


def test_store_is_bounded(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 2048)
    store = CheckpointStore(tmp_path / "cp", max_checkpoints=3, max_file_bytes=1024)
    for i in range(5):
        store.begin(f"u{i}", f"prompt {i}")
        store.before_change(big)
    assert [c.number for c in store.checkpoints()] == [3, 4, 5]
    assert store.checkpoints()[0].files[0].too_large
    report = store.restore_code(store.checkpoints()[0])
    assert report.skipped == (str(big),)
    # Identical content is one blob; blobs of forgotten checkpoints go away.
    small = tmp_path / "small.txt"
    small.write_text("same")
    store2 = CheckpointStore(tmp_path / "cp2", max_checkpoints=2)
    for i in range(4):
        store2.begin(f"u{i}", "p")
        store2.before_change(small)
    assert len(list((tmp_path / "cp2" / "blobs").iterdir())) == 1


# ---- the Agent ----------------------------------------------------------------------------


def script() -> list[Turn]:
    return [
        turn(tool_use("Write", {"file_path": "a.txt", "content": "v1\n"})),
        turn(text("Wrote a.")),
        turn(
            tool_use("Edit", {"file_path": "a.txt", "old_string": "v1", "new_string": "v2"}),
            tool_use("Write", {"file_path": "b.txt", "content": "b\n"}),
        ),
        turn(text("Edited a, wrote b.")),
        turn(tool_use("Bash", {"command": "echo by-bash > c.txt"})),
        turn(text("Bash wrote c.")),
        turn(text("Fresh start after the rewind.")),
    ]


agent_on = partial(shared_agent_on, permission_mode="bypassPermissions")


async def test_rewind_code_then_both_then_resume(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    a, b, c = project / "a.txt", project / "b.txt", project / "c.txt"
    with MessagesServer(script()) as server:
        agent = agent_on(server, project, home)
        await agent.run("write a")
        await agent.run("edit a and write b")
        await agent.run("bash writes c")
        checkpoints = agent.checkpoints()
        assert [(cp.number, cp.prompt) for cp in checkpoints] == [
            (1, "write a"), (2, "edit a and write b"), (3, "bash writes c")]  # fmt: skip
        assert [len(cp.files) for cp in checkpoints] == [1, 2, 0]  # Bash is not tracked
        # Code only: the files go back to before prompt 2; the conversation stays.
        before = len(agent.messages)
        outcome = await agent.rewind(2, "code")
        assert (a.read_text(), b.exists(), c.read_text()) == ("v1\n", False, "by-bash\n")
        assert len(agent.messages) == before and outcome.removed == ()
        # Both, to before prompt 2: the conversation ends with prompt 1's answer.
        a.write_text("changed by hand\n")
        outcome = await agent.rewind(2, RewindMode.BOTH)
        assert outcome.prompt == "edit a and write b"
        assert a.read_text() == "v1\n"
        prompts = [m.content for m in agent.messages if isinstance(m, UserMessage)
                   and not m.is_meta and isinstance(m.content, str)]  # fmt: skip
        assert prompts == ["write a"]
        assert [cp.number for cp in agent.checkpoints()] == [1]
        result = await agent.run("start over")
        session = agent.session_id
        await agent.aclose()
        last = server.requests[-1]
    assert result.text == "Fresh start after the rewind."
    sent = json.dumps(last["messages"])
    assert "write a" in sent and "start over" in sent
    assert "edit a and write b" not in sent and "bash writes c" not in sent
    assert all(not v for v in server.violations)
    # The transcript keeps everything, voided by tombstones: a resume sees the rewound story.
    resumed = Agent.resume(session, cwd=project, home=home)
    texts = [m.content for m in resumed.messages if isinstance(m, UserMessage)
             and not m.is_meta and isinstance(m.content, str)]  # fmt: skip
    assert texts == ["write a", "start over"]
    assert [cp.number for cp in resumed.checkpoints()] == [1, 2]


async def test_rewind_errors(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with MessagesServer([turn(text("hi"))]) as server:
        agent = agent_on(server, project, home)
        await agent.run("hello")
        with pytest.raises(RewindError, match="no checkpoint 7"):
            await agent.rewind(7)
        await agent.aclose()
    store = CheckpointStore(None)
    store.begin("gone", "compacted away")
    with pytest.raises(RewindError, match="compacted away"):
        rewind(store, [], 1, RewindMode.CONVERSATION)


def test_headless_rewind_lists_and_restores(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()

    async def two_prompts() -> str:
        with MessagesServer(script()[:4]) as server:
            agent = agent_on(server, project, home)
            await agent.run("write a")
            await agent.run("edit a and write b")
            await agent.aclose()
            return agent.session_id

    session = asyncio.run(two_prompts())
    env = {**os.environ, "QUERYLOOP_HOME": str(home)}
    command = [sys.executable, "-m", "queryloop.cli.main", "rewind"]
    listing = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                             timeout=60)  # fmt: skip
    assert listing.returncode == 0, listing.stderr
    assert "1  " in listing.stdout and "edit a and write b" in listing.stdout
    assert "Bash" in listing.stdout  # says that Bash changes are not tracked
    done = subprocess.run([*command, "2", "--session", session[:8]], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project / "a.txt").read_text() == "v1\n" and not (project / "b.txt").exists()
    assert "the prompt was: edit a and write b" in done.stdout
    path = next((home / "projects").rglob(f"{session}.jsonl"))
    loaded = load_transcript(path)
    texts = [m.content for m in loaded.messages if isinstance(m, UserMessage)
             and not m.is_meta and isinstance(m.content, str)]  # fmt: skip
    assert texts == ["write a"]
    bad = subprocess.run([*command, "9"], cwd=project, env=env, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert bad.returncode == 2 and "no checkpoint 9" in bad.stderr
