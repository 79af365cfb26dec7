"""Resuming a session too large for the window compacts instead of failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import project, run_cli

from queryloop.messages import SystemMessage, SystemSubtype, assistant_message, user_message
from queryloop.session import Transcript, load_transcript, session_path
from queryloop.testing import MessagesServer, Turn, text, turn


def _model(body: dict[str, Any]) -> Turn:
    if "summar" in json.dumps(body["messages"][-1]).lower():
        return turn(text("<summary>We went through 40 questions; all answered.</summary>"))
    return turn(text("Continuing after the resume."))


def test_resume_of_an_oversized_session_compacts_and_continues(tmp_path: Path) -> None:
    path = session_path("big-session", project(tmp_path), tmp_path / "home")
    with Transcript(path, "big-session") as writer:
        for i in range(40):
            writer.append(user_message(f"question {i} " + "lorem ipsum dolor " * 120))
            writer.append(assistant_message(f"answer {i} " + "sit amet consectetur " * 120))
    # 24k: the window must hold the tool schemas (Agent, TaskOutput, TaskStop included) and
    # the kept tail after compaction.
    with MessagesServer(_model, context_window=24_000) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "go on", "--continue", "--output-format", "json"
        )
        assert all(v == [] for v in server.violations)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Continuing after the resume."
    assert result["session_id"] == "big-session"
    # The compaction is in the transcript: the next resume starts from its boundary.
    loaded = load_transcript(path)
    first = loaded.messages[0]
    assert isinstance(first, SystemMessage) and first.subtype == SystemSubtype.COMPACT_BOUNDARY
    assert len(loaded.messages) < 20
