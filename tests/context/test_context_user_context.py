"""Channel two: project memory and the date in one meta user message at the front."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from queryloop.config import SessionContext, get_user_context
from queryloop.context import prepend_user_context
from queryloop.messages import UserMessage, user_message

EXPECTED = """<system-reminder>
As you answer the user's questions, you can use the following context:
# a
one
# b
two

      IMPORTANT: this context may or may not be relevant to your tasks.
      You should not respond to this context unless it is highly relevant to your task.
</system-reminder>
"""


def test_prepend_user_context_is_one_meta_message_first() -> None:
    history = [user_message("hello")]
    out = prepend_user_context(history, {"a": "one", "b": "two"})
    assert len(out) == 2 and out[1] is history[0]
    first = out[0]
    assert isinstance(first, UserMessage) and first.is_meta
    assert first.content == EXPECTED
    assert prepend_user_context(history, {}) == history


def test_memory_from_repo_root_down_to_cwd_and_user_level(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    repo = outside / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    (outside / "QUERYLOOP.md").write_text("ABOVE THE REPO")
    (repo / "QUERYLOOP.md").write_text("root rules")
    (repo / "AGENTS.md").write_text("agents rules")
    (repo / "pkg" / "AGENTS.md").write_text("pkg rules")
    (cwd / "QUERYLOOP.md").write_text("sub rules")
    home = tmp_path / "home"
    home.mkdir()
    (home / "QUERYLOOP.md").write_text("user rules")

    ctx = get_user_context(cwd, user_home=home, today=date(2026, 1, 2))
    memory = ctx["queryloopMd"]
    order = [
        memory.index(s)
        for s in ("user rules", "root rules", "agents rules", "pkg rules", "sub rules")
    ]
    assert order == sorted(order)
    assert "ABOVE THE REPO" not in memory
    assert "OVERRIDE any default behavior" in memory
    assert f"Contents of {(cwd / 'QUERYLOOP.md').resolve()} (project instructions" in memory
    assert ctx["currentDate"] == "Today's date is 2026-01-02."


def test_without_memory_only_the_date(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    ctx = get_user_context(tmp_path, user_home=tmp_path / "nohome", today=date(2026, 3, 4))
    assert ctx == {"currentDate": "Today's date is 2026-03-04."}


def test_session_context_reads_memory_once(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("v1")
    session = SessionContext(tmp_path, user_home=tmp_path / "h")
    assert "v1" in session.user_context()["queryloopMd"]
    (tmp_path / "AGENTS.md").write_text("v2")
    assert "v1" in session.user_context()["queryloopMd"]
