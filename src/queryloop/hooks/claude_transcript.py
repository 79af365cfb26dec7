"""The session as Claude Code writes its transcript, for hooks that read `transcript_path`.

Hooks written for Claude Code parse the transcript it keeps: one JSON object a line, written
compactly (`"role":"assistant"`, no spaces: the official plugins find the last assistant
message with `grep '"role":"assistant"' | tail -1 | jq …`). queryloop's own records have
another shape (`session.transcript`), so hooks are given this mirror instead, kept beside
the session (`$QUERYLOOP_HOME/projects/<project-key>/claude-code/<session-id>.jsonl`, the
layout of `~/.claude/projects/`), a local file whatever store keeps the session itself.

The lines (docs/hooks.md, "Transcripts hooks read"), every one with `parentUuid`,
`isSidechain`, `userType`, `cwd`, `sessionId`, `version`, `gitBranch`, `type`, `uuid` and
`timestamp`:

- `user`: `message: {"role": "user", "content": …}` (a string, or blocks); a line of tool
  results carries `toolUseResult` (the result's text); `isMeta` marks text queryloop added,
  `isCompactSummary` a compaction's summary.
- `assistant`: one line per content block, as Claude Code streams them, each with the
  response's `message` (`id`, `type`, `role`, `model`, `content: [block]`, `stop_reason`,
  `stop_sequence`, `usage`); an API error's line has `isApiErrorMessage`.
- `system`: `subtype`, `content`, `level` (a compaction's boundary: `compact_boundary`, with
  `compactMetadata`).

Attachments, progress, tombstones and tool-use summaries are not written (Claude Code's
attachment lines carry its own payloads, which queryloop's do not match).

`ClaudeTranscript.update(messages)` appends the lines of the messages not written yet, so
the file is current whenever a hook is about to read it; lines are never rewritten.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..messages.blocks import TextBlock, ToolResultBlock, block_to_api
from ..messages.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    UserMessage,
)

log = logging.getLogger(__name__)

CLAUDE_CODE_DIR = "claude-code"
"""The folder, beside a project's transcripts, of the transcripts hooks read."""


@dataclass(frozen=True, slots=True)
class LineContext:
    """What every line says about where it was written."""

    session_id: str
    cwd: str
    version: str
    git_branch: str = ""
    agent_id: str | None = None
    """A subagent's lines: `isSidechain` true and its `agentId`."""


def claude_lines(
    message: Message, parent: str | None, context: LineContext
) -> list[dict[str, Any]]:
    """The Claude Code lines of one message, the first chained to `parent` and each later
    one to the line before it (none for messages Claude Code's transcript has no line for)."""
    lines: list[dict[str, Any]] = []
    for line_uuid, body in _bodies(message):
        lines.append({
            "parentUuid": parent,
            "isSidechain": context.agent_id is not None,
            **({"agentId": context.agent_id} if context.agent_id is not None else {}),
            "userType": "external",
            "cwd": context.cwd,
            "sessionId": context.session_id,
            "version": context.version,
            "gitBranch": context.git_branch,
            **body,
            "uuid": line_uuid,
            "timestamp": message.timestamp,
        })  # fmt: skip
        parent = line_uuid
    return lines


def _bodies(message: Message) -> Iterator[tuple[str, dict[str, Any]]]:
    match message:
        case UserMessage():
            yield message.uuid, _user(message)
        case AssistantMessage():
            for index, block in enumerate(message.content):
                yield block_uuid(message.uuid, index), _assistant(message, block_to_api(block))
        case SystemMessage():
            yield message.uuid, _system(message)
        case _:
            return


def block_uuid(message_uuid: str, index: int) -> str:
    """The line uuid of a message's `index`th block: the message's own for the first, a
    stable one derived from it for the others (a resumed session finds them again)."""
    if index == 0:
        return message_uuid
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"queryloop:{message_uuid}/{index}"))


def _user(message: UserMessage) -> dict[str, Any]:
    content = message.content
    body: dict[str, Any] = {
        "type": "user",
        "message": {
            "role": "user",
            "content": content if isinstance(content, str) else [block_to_api(b) for b in content],
        },
    }
    results = (
        [] if isinstance(content, str) else [b for b in content if isinstance(b, ToolResultBlock)]
    )
    if results:
        body["toolUseResult"] = "\n".join(_result_text(r) for r in results)
    if message.is_meta:
        body["isMeta"] = True
    if message.is_compact_summary:
        body["isCompactSummary"] = True
    return body


def _result_text(result: ToolResultBlock) -> str:
    content = result.content
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


def _assistant(message: AssistantMessage, block: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "assistant",
        "message": {
            "id": message.message_id,
            "type": "message",
            "role": "assistant",
            "model": message.model,
            "content": [dict(block)],
            "stop_reason": message.stop_reason,
            "stop_sequence": None,
            "usage": message.usage.to_dict() if message.usage is not None else None,
        },
    }
    if message.is_api_error:
        body["isApiErrorMessage"] = True
    return body


def _system(message: SystemMessage) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "system",
        "subtype": message.subtype.value,
        "content": message.content,
        "level": message.level,
        "isMeta": message.is_meta,
    }
    if message.subtype is SystemSubtype.COMPACT_BOUNDARY:
        body["compactMetadata"] = dict(message.metadata)
    return body


class ClaudeTranscript:
    """One session's Claude Code transcript at `path`, appended to by `update`."""

    def __init__(self, path: Path, context: LineContext) -> None:
        self.path = path
        self.context = context
        self._written: set[str] = set()
        self._last: str | None = None
        self._loaded = False

    def update(self, messages: Sequence[Message]) -> Path:
        """Append the lines of `messages` not in the file yet (an assistant message seen
        first as a draft gets the blocks it gained); returns the path."""
        self._load()
        new: list[dict[str, Any]] = []
        for message in messages:
            if _has_lines(message) and not self._has_all(message):
                for line in claude_lines(message, self._last, self.context):
                    if line["uuid"] not in self._written:
                        line["parentUuid"] = self._last
                        new.append(line)
                        self._written.add(line["uuid"])
                        self._last = line["uuid"]
        if new or not self.path.exists():
            try:
                self._append(new)
            except OSError as exc:  # a hook must still run; it reads what is there
                log.warning("could not write the hooks' transcript %s: %s", self.path, exc)
        return self.path

    def _has_all(self, message: Message) -> bool:
        count = len(message.content) if isinstance(message, AssistantMessage) else 1
        return all(block_uuid(message.uuid, i) in self._written for i in range(max(count, 1)))

    def _load(self) -> None:
        """A resumed session's file: its lines are not written again."""
        if self._loaded:
            return
        self._loaded = True
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:  # none yet (or unreadable: it is written anew)
            return
        for raw in text.splitlines():
            try:
                line = json.loads(raw)
            except ValueError:  # a line cut by a kill
                continue
            if isinstance(line, dict) and isinstance(line.get("uuid"), str):
                self._written.add(line["uuid"])
                self._last = line["uuid"]

    def _append(self, lines: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
            for line in lines
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            data = text.encode("utf-8")
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)


def _has_lines(message: Message) -> bool:
    if isinstance(message, AssistantMessage):
        return bool(message.content)
    return isinstance(message, UserMessage | SystemMessage)


class LiveSession(Protocol):
    """What the transcripts follow of a live session (`session.Session` is one)."""

    @property
    def session_id(self) -> str: ...

    @property
    def messages(self) -> Sequence[Message]: ...


class HookTranscripts:
    """The Claude Code transcripts of whichever session is current (a new one after /clear),
    kept in `folder` as Claude Code lays them out: `<session-id>.jsonl`, and a subagent's
    as `<session-id>/subagents/agent-<agent-id>.jsonl`."""

    def __init__(self, folder: Path, cwd: Path, version: str) -> None:
        self.folder = folder
        self.cwd = cwd
        self.version = version
        self._open: dict[tuple[str, str | None], ClaudeTranscript] = {}
        self._branch: str | None = None

    def current(self, session_id: str, messages: Sequence[Message]) -> Path:
        """The session's transcript, brought up to date with `messages`."""
        return self._transcript(session_id, None).update(messages)

    def sidechain(self, session_id: str, agent_id: str, messages: Sequence[Message]) -> Path:
        """A subagent's transcript (`isSidechain`, its `agentId`), up to date with its
        `messages`."""
        return self._transcript(session_id, agent_id).update(messages)

    def follow(self, session: LiveSession) -> Callable[[], Path]:
        """`current` for whatever `session` is when called (a new id after /clear)."""
        return lambda: self.current(session.session_id, session.messages)

    def follow_sidechains(self, session: LiveSession) -> Callable[[str, Sequence[Message]], Path]:
        """`sidechain` for the subagents of whatever `session` is when called."""
        return lambda agent_id, messages: self.sidechain(session.session_id, agent_id, messages)

    def _transcript(self, session_id: str, agent_id: str | None) -> ClaudeTranscript:
        key = (session_id, agent_id)
        if key not in self._open:
            if self._branch is None:
                self._branch = git_branch(self.cwd)
            context = LineContext(session_id, str(self.cwd), self.version, self._branch, agent_id)
            path = self.folder / f"{session_id}.jsonl"
            if agent_id is not None:
                path = self.folder / session_id / "subagents" / f"agent-{agent_id}.jsonl"
            self._open[key] = ClaudeTranscript(path, context)
        return self._open[key]


def git_branch(cwd: Path) -> str:
    """The checked-out branch of the repository around `cwd` ("" outside one, or detached),
    read from `HEAD` without running git."""
    try:
        for folder in (cwd, *cwd.parents):
            dot_git = folder / ".git"
            if dot_git.is_file():  # a worktree or submodule: `gitdir: <path>`
                text = dot_git.read_text(errors="replace").strip()
                dot_git = (folder / text.removeprefix("gitdir:").strip()).resolve()
            head = dot_git / "HEAD"
            if head.is_file():
                ref = head.read_text(errors="replace").strip()
                return ref.removeprefix("ref: refs/heads/") if ref.startswith("ref: ") else ""
    except OSError:  # an unreadable repository: no branch, as outside one
        return ""
    return ""
