"""Session facts: what a session's prefix is built from, kept, and told by difference."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

from queryloop.config import SessionContext, get_user_context
from queryloop.context import AttachmentContext, AttachmentType, get_attachments
from queryloop.context.facts import FACTS, SessionFacts, derive_facts, local_date
from queryloop.context.system_context import GIT_STATUS_HEADER, get_system_context
from queryloop.context.system_prompt import build_dynamic_suffix
from queryloop.messages import (
    AttachmentMessage,
    assistant_message,
    normalize_messages_for_api,
    user_message,
)
from queryloop.messages.types import Attachment, Message

START = SessionFacts(
    date="2026-03-01",
    memory="Contents of /p/QUERYLOOP.md:\n\nuse make",
    environment="# Environment\n<env>\nModel: m\n</env>",
    git_status=f"{GIT_STATUS_HEADER}\nCurrent branch: main",
)


def at(facts_now: SessionFacts, day: int = 1, **kw: object) -> AttachmentContext:
    """The attachment context of a process that found `facts_now`, on day `day` of March."""
    return AttachmentContext(
        cwd=Path("/p"),
        session_facts=START,
        current_facts=facts_now,
        now=lambda: datetime(2026, 3, day, 9, 30),
        **kw,  # type: ignore[arg-type]
    )


def kinds(found: Sequence[Attachment]) -> list[str]:
    return [a.type for a in found]


def told(found: Sequence[Attachment]) -> list[Message]:
    return [AttachmentMessage(attachment=a, is_meta=True) for a in found]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


# -- the facts and their bytes ----------------------------------------------------------


def test_the_facts_rebuild_the_bytes_the_session_context_built(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "QUERYLOOP.md").write_text("use make\n")
    home = tmp_path / "home"
    home.mkdir()
    facts = SessionContext(tmp_path, user_home=home, today=date(2026, 3, 1)).facts("claude-x")
    # What earlier versions sent, built from the same parts: the same bytes, so a session
    # they wrote is resumed onto its own cached prefix.
    git_status = get_system_context(tmp_path)["gitStatus"]
    assert facts.git_status == git_status
    assert facts.dynamic_suffix() == build_dynamic_suffix(
        cwd=tmp_path, model="claude-x", extra_sections=[f"gitStatus: {git_status}"]
    )
    assert facts.user_context() == get_user_context(
        tmp_path, user_home=home, today=date(2026, 3, 1)
    )
    assert SessionFacts.from_dict(facts.to_dict()) == facts


def test_facts_outside_a_repository_and_without_memory(tmp_path: Path) -> None:
    facts = SessionContext(tmp_path, user_home=tmp_path, today=date(2026, 3, 1)).facts("m")
    assert facts.git_status == "" and facts.memory == ""
    assert facts.dynamic_suffix() == build_dynamic_suffix(cwd=tmp_path, model="m")
    assert facts.user_context() == {"currentDate": "Today's date is 2026-03-01."}


def test_a_record_that_is_not_facts_reads_as_none() -> None:
    assert SessionFacts.from_dict(None) is None
    assert SessionFacts.from_dict({"date": "yesterday"}) is None
    assert SessionFacts.from_dict({"memory": "x"}) is None
    partial = SessionFacts.from_dict({"date": "2026-03-01", "memory": 3})
    assert partial == SessionFacts("2026-03-01")


def test_facts_of_an_older_transcript_take_the_date_of_its_newest_response() -> None:
    def stamped(message: Message, when: datetime) -> Message:
        return replace(message, timestamp=when.isoformat())

    now = replace(START, date="2026-03-09")
    history = [
        stamped(user_message("q"), datetime(2026, 3, 1, 12, tzinfo=UTC)),
        stamped(assistant_message("a"), datetime(2026, 3, 2, 12, tzinfo=UTC)),
        stamped(user_message("q2"), datetime(2026, 3, 4, 12, tzinfo=UTC)),
    ]
    derived = derive_facts(history, now)
    assert derived.date == local_date(datetime(2026, 3, 2, 12, tzinfo=UTC).isoformat())
    assert (derived.memory, derived.environment, derived.git_status) == (
        now.memory,
        now.environment,
        now.git_status,
    )
    only_prompts = derive_facts(history[:1], now)
    assert only_prompts.date == local_date(history[0].timestamp)
    assert derive_facts([], now) == now


# -- the deltas -------------------------------------------------------------------------


async def test_nothing_is_told_while_the_facts_hold() -> None:
    assert await get_attachments(None, at(START), []) == []
    assert await get_attachments(None, AttachmentContext(cwd=Path("/p")), []) == []


async def test_each_changed_fact_is_told_once_at_the_end() -> None:
    now = SessionFacts(
        date="2026-03-02",
        memory="Contents of /p/QUERYLOOP.md:\n\nuse ninja",
        environment="# Environment\n<env>\nModel: n\n</env>",
        git_status=f"{GIT_STATUS_HEADER}\nCurrent branch: feature",
    )
    found = await get_attachments(None, at(now, day=2), [])
    assert kinds(found) == [
        AttachmentType.DATE_CHANGE,
        AttachmentType.MEMORY_CHANGE,
        AttachmentType.GIT_STATUS_CHANGE,
        AttachmentType.ENVIRONMENT_CHANGE,
    ]
    assert found[0].data == {"date": "2026-03-02", "previous_date": "2026-03-01"}
    history = [user_message("go on"), *told(found)]
    assert await get_attachments(None, at(now, day=2), history) == []
    text = "\n".join(str(m["content"]) for m in normalize_messages_for_api(history))
    assert "Today's date is now 2026-03-02" in text
    assert "use ninja" in text and "replace the ones given at the start" in text
    assert "Current branch: feature" in text and GIT_STATUS_HEADER not in text
    assert "Model: n" in text


async def test_a_compaction_that_drops_the_deltas_tells_them_again() -> None:
    now = replace(START, git_status=f"{GIT_STATUS_HEADER}\nCurrent branch: feature")
    [change] = await get_attachments(None, at(now), [])
    assert change.type == AttachmentType.GIT_STATUS_CHANGE
    # The first message still shows the start: after the summary replaced the history, the
    # model has to be told again.
    assert kinds(await get_attachments(None, at(now), [user_message("summary")])) == [
        AttachmentType.GIT_STATUS_CHANGE
    ]


async def test_the_date_moves_mid_session_with_the_clock() -> None:
    history: list[Message] = [user_message("hi")]
    assert await get_attachments(None, at(START, day=1), history) == []
    [second] = await get_attachments(None, at(START, day=2), history)
    history += told([second])
    assert await get_attachments(None, at(START, day=2), history) == []
    [third] = await get_attachments(None, at(START, day=3), history)
    assert third.data == {"date": "2026-03-03", "previous_date": "2026-03-02"}


async def test_a_fact_back_to_its_start_value_is_told_too() -> None:
    moved = replace(START, memory="")
    [removed] = await get_attachments(None, at(moved), [])
    assert "have been removed" in FACTS[1].render(removed.data)
    history = [user_message("x"), *told([removed])]
    [back] = await get_attachments(None, at(START), history)
    assert back.type == AttachmentType.MEMORY_CHANGE and back.data["memory"] == START.memory


async def test_subagents_and_sessions_without_facts_tell_nothing() -> None:
    bare = AttachmentContext(cwd=Path("/p"), now=lambda: datetime(2026, 3, 5))
    assert await get_attachments(None, bare, []) == []
    assert await get_attachments(None, at(START, is_main_thread=False), []) == []
