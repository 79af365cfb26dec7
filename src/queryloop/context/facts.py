"""What a session's prefix is built from, kept for the life of the session.

A session's first request fixes the bytes every later request starts with: the system
prompt's environment section (working folder, platform, OS version, model, the git snapshot)
and the first message's user context (memory files and today's date). They are per-session
facts, so they are taken once; but a session lives on across processes (`--continue`,
`--resume`), and a process that took them afresh would move the prefix whenever the day, the
git state or a memory file had changed since -- and the whole cached conversation would be
written again (Claude Code does this: anthropics/claude-code#86299).

So `SessionFacts` is what the first request was built from. The transcript keeps it (the
`context` field of a `meta` record), a resumed session rebuilds exactly the same prefix from
it, and what differs now is told at the end of the conversation by a fact delta attachment
(`FACTS`: `date_change`, `memory_change`, `git_status_change`, `environment_change`), rebuilt
from the history like the listing deltas: the value the model was told last is that of the
newest earlier attachment of the kind, else the session's start. A compaction that drops
the attachments leaves the start value, which the first message still says, so the change
is told again.

A transcript written before the facts were kept has none: `derive_facts` takes the date of
its newest response (the versions that wrote it rebuilt the date at each process start, so
the last request carried the date of the process that sent it) and today's memory,
environment and git state (the same bytes when they did not change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..messages.types import AssistantMessage, Attachment, Message
from .kinds import AttachmentType
from .scan import attachments_of
from .system_context import GIT_STATUS_HEADER

if TYPE_CHECKING:
    from .attachments import AttachmentContext

GIT_STATUS_KEY = "gitStatus"
"""The label of the git snapshot in the system prompt (`gitStatus: ...`)."""


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """The per-session facts a session's prefix is built from (see the module docstring)."""

    date: str
    """The ISO date the first message announces (`Today's date is ...`)."""
    memory: str = ""
    """The rendered memory section (`context.user_context.render_memory`), "" without any."""
    environment: str = ""
    """The system prompt's environment section (`build_dynamic_suffix` without extras)."""
    git_status: str = ""
    """The git snapshot (`get_system_context`'s text), "" outside a repository."""

    def user_context(self) -> dict[str, str]:
        """The first message's context: `{"queryloopMd"?, "currentDate"}` (as
        `context.user_context.build_user_context` renders it)."""
        context = {"queryloopMd": self.memory} if self.memory else {}
        context["currentDate"] = f"Today's date is {self.date}."
        return context

    def dynamic_suffix(self) -> str:
        """The system prompt's session part: the environment, then the git snapshot."""
        sections = [self.environment]
        if self.git_status:
            sections.append(f"{GIT_STATUS_KEY}: {self.git_status}")
        return "\n\n".join(s for s in sections if s.strip())

    def to_dict(self) -> dict[str, str]:
        """The JSON form the transcript keeps."""
        return {
            "date": self.date,
            "memory": self.memory,
            "environment": self.environment,
            "git_status": self.git_status,
        }

    @classmethod
    def from_dict(cls, data: object) -> SessionFacts | None:
        """Facts read back from a transcript; None when `data` is not a facts record."""
        if not isinstance(data, Mapping) or not isinstance(data.get("date"), str):
            return None
        try:
            date.fromisoformat(data["date"])
        except ValueError:
            return None
        text = {k: data.get(k) for k in ("memory", "environment", "git_status")}
        return cls(data["date"], **{k: v if isinstance(v, str) else "" for k, v in text.items()})


def derive_facts(messages: Sequence[Message], current: SessionFacts) -> SessionFacts:
    """The facts of a transcript written before they were kept: the date of its newest
    response (else of its newest message), everything else as it is now (`current`)."""
    responses: list[Message] = [m for m in messages if isinstance(m, AssistantMessage)]
    stamped = responses or list(messages)
    for message in reversed(stamped):
        day = local_date(message.timestamp)
        if day is not None:
            return SessionFacts(day, current.memory, current.environment, current.git_status)
    return current


def local_date(timestamp: str | None) -> str | None:
    """The local calendar date of an ISO timestamp (transcripts store UTC), or None."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp).astimezone().date().isoformat()
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Fact:
    """One per-session fact told by difference: where its value comes from now and at the
    session's start, the attachment that tells a new value, and the words it reads as."""

    kind: AttachmentType
    key: str
    """The data key holding the value told."""
    now: Callable[[AttachmentContext], str | None]
    """Its value now (None: unknown here, nothing to tell)."""
    start: Callable[[AttachmentContext], str | None]
    """Its value in the session's prefix (None: unknown, nothing to compare to)."""
    render: Callable[[Mapping[str, Any]], str]
    previous_key: str | None = None
    """When set, the data also says the value it replaces (under this key)."""

    async def delta(self, ctx: AttachmentContext, messages: Sequence[Message]) -> list[Attachment]:
        """A `kind` attachment when the value now differs from the last one the model was
        told (the newest earlier attachment of the kind, else the session's start)."""
        told = self.start(ctx)
        earlier = attachments_of(messages, self.kind)
        if earlier:
            told = str(earlier[-1].attachment.data.get(self.key, ""))
        now = self.now(ctx)
        if told is None or now is None or now == told:
            return []
        data = {self.key: now}
        if self.previous_key is not None:
            data[self.previous_key] = told
        return [Attachment(self.kind, data)]


def render_date_change(data: Mapping[str, Any]) -> str:
    """The calendar moved on since the model was last told the date."""
    return (
        f"The date has changed. Today's date is now {data.get('date')}. "
        "DO NOT mention this to the user explicitly because they are already aware."
    )


def render_memory_change(data: Mapping[str, Any]) -> str:
    """The memory files are not what the conversation's first message says."""
    memory = str(data.get("memory") or "").strip()
    if not memory:
        return (
            "The memory files (QUERYLOOP.md, AGENTS.md) given at the start of this "
            "conversation have been removed; their instructions no longer apply."
        )
    return (
        "The memory files (QUERYLOOP.md, AGENTS.md) have changed since the start of this "
        "conversation. Their current contents below replace the ones given at the start:\n\n"
        f"{memory}"
    )


def render_git_status_change(data: Mapping[str, Any]) -> str:
    """The repository moved on since the snapshot the conversation started with."""
    status = str(data.get("git_status") or "").strip()
    if not status:
        return "The working directory is no longer a git repository."
    body = status.removeprefix(GIT_STATUS_HEADER).strip()
    return (
        "The git status has changed since the snapshot given earlier in this conversation. "
        "This is a new snapshot; it will not update during the conversation either.\n"
        f"{body}"
    )


def render_environment_change(data: Mapping[str, Any]) -> str:
    """The environment is not the one the system prompt describes."""
    return (
        "The environment has changed since the start of this conversation; the system "
        "prompt's environment section is out of date. It is now:\n"
        f"{str(data.get('environment') or '').strip()}"
    )


def _start_date(ctx: AttachmentContext) -> str | None:
    if ctx.initial_date is not None:
        return ctx.initial_date.isoformat()
    return ctx.session_facts.date if ctx.session_facts is not None else None


def _taken_once(kind: AttachmentType, key: str, render: Callable[[Mapping[str, Any]], str]) -> Fact:
    """A fact read when a process takes the session up: the `key` field of
    `ctx.current_facts` against that of `ctx.session_facts`."""
    pick = attrgetter(key)
    return Fact(
        kind,
        key,
        now=lambda ctx: pick(ctx.current_facts) if ctx.current_facts is not None else None,
        start=lambda ctx: pick(ctx.session_facts) if ctx.session_facts is not None else None,
        render=render,
    )


DATE = Fact(
    AttachmentType.DATE_CHANGE,
    "date",
    now=lambda ctx: ctx.now().date().isoformat(),
    start=_start_date,
    render=render_date_change,
    previous_key="previous_date",
)
"""Today's date: checked every turn (a session can run past midnight)."""

MEMORY = _taken_once(AttachmentType.MEMORY_CHANGE, "memory", render_memory_change)
"""The memory files, as read when this process took up the session."""

GIT_STATUS = _taken_once(AttachmentType.GIT_STATUS_CHANGE, "git_status", render_git_status_change)
"""The git snapshot, as taken when this process took up the session."""

ENVIRONMENT = _taken_once(
    AttachmentType.ENVIRONMENT_CHANGE, "environment", render_environment_change
)
"""Working folder, platform, OS version and model, as when this process took it up."""

FACTS: tuple[Fact, ...] = (DATE, MEMORY, GIT_STATUS, ENVIRONMENT)
"""Every fact, in the order their attachments are gathered."""
