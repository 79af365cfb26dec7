"""Where transcripts live and how a session is found by id, prefix or recency.

Layout: `$QUERYLOOP_HOME/projects/<project-key>/<session-id>.jsonl`, where the project key is
the absolute working folder with every non-alphanumeric character replaced by `-`, so that
`--continue` finds the latest session of the folder the user is in. A session's subagents
write theirs beside it (Claude Code's layout):
`<project-key>/<session-id>/subagents/agent-<agent-id>.jsonl`, the subkey
`subagents/agent-<id>` of the JSONL store (`jsonl_store`); `agents.sidechain` writes and
resumes them, `report` draws them. `latest_session` and `find_session` find a session's file
in the JSONL layout; every store is searched with `stores.find_transcript`.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from ..errors import QueryloopError

TRANSCRIPT_SUFFIX = ".jsonl"
SUBAGENTS_DIR = "subagents"
"""The folder of a session's subagent transcripts, inside the session's own folder."""
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


class SessionError(QueryloopError):
    """A session could not be found or read."""


class SessionNotFoundError(SessionError):
    """No transcript matches the id or prefix given; the message says where we looked."""


class AmbiguousSessionError(SessionError):
    """A prefix matches more than one session; `matches` lists their ids."""

    def __init__(self, message: str, matches: list[str]) -> None:
        super().__init__(message)
        self.matches = matches


def queryloop_home(home: Path | str | None = None) -> Path:
    """The state folder: `home` if given, else `$QUERYLOOP_HOME`, else `~/.queryloop`."""
    if home is not None:
        return Path(home).expanduser()
    env = os.environ.get("QUERYLOOP_HOME")
    return Path(env).expanduser() if env else Path.home() / ".queryloop"


def project_key(cwd: Path | str) -> str:
    """The folder name for a project: its absolute path with non-alphanumerics as `-`."""
    return _NON_ALNUM.sub("-", str(Path(cwd).expanduser().resolve()))


def project_dir(cwd: Path | str, home: Path | str | None = None) -> Path:
    """The folder holding the transcripts of the project at `cwd`."""
    return queryloop_home(home) / "projects" / project_key(cwd)


def new_session_id() -> str:
    """A fresh session id (a uuid4 string)."""
    return str(uuid.uuid4())


def session_path(session_id: str, cwd: Path | str, home: Path | str | None = None) -> Path:
    """The transcript path of `session_id` in the project at `cwd`."""
    return project_dir(cwd, home) / f"{session_id}{TRANSCRIPT_SUFFIX}"


def transcripts_in(folder: Path) -> list[Path]:
    """The transcripts in one project folder, newest first (by modification time)."""
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if p.suffix == TRANSCRIPT_SUFFIX and p.is_file()]
    return sorted(files, key=_mtime, reverse=True)


def latest_session(cwd: Path | str, home: Path | str | None = None) -> Path | None:
    """The most recently written transcript of the project at `cwd` (for `--continue`)."""
    files = transcripts_in(project_dir(cwd, home))
    return files[0] if files else None


def find_session(
    id_or_prefix: str, cwd: Path | str | None = None, home: Path | str | None = None
) -> Path:
    """The transcript for a session id, a unique id prefix, or a path to a `.jsonl` file.

    The project at `cwd` is searched first, then every project. Raises SessionNotFoundError
    or AmbiguousSessionError.
    """
    as_path = Path(id_or_prefix).expanduser()
    if as_path.suffix == TRANSCRIPT_SUFFIX and as_path.is_file():
        return as_path
    needle = id_or_prefix.strip()
    if not needle:
        raise SessionNotFoundError("an empty session id was given; run `queryloop sessions`")
    root = queryloop_home(home) / "projects"
    folders = [project_dir(cwd, home)] if cwd is not None else []
    folders.append(root)
    for folder in folders:
        matches = _matches(folder, needle, recursive=folder == root)
        if len(matches) == 1:
            return matches[0]
        exact = [m for m in matches if m.stem == needle]
        if len(exact) >= 1:
            return exact[0]
        if len(matches) > 1:
            ids = sorted(m.stem for m in matches)
            raise AmbiguousSessionError(
                f"session prefix {needle!r} matches {len(ids)} sessions "
                f"({', '.join(i[:12] for i in ids[:5])}); give more characters",
                ids,
            )
    raise SessionNotFoundError(
        f"no session {needle!r} under {root}; "
        "run `queryloop sessions` to list this project's sessions"
    )


def _matches(folder: Path, needle: str, *, recursive: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    pattern = f"{glob_escape(needle)}*{TRANSCRIPT_SUFFIX}"
    found = folder.glob(f"*/{pattern}") if recursive else folder.glob(pattern)
    return sorted(found, key=_mtime, reverse=True)


def glob_escape(text: str) -> str:
    """`text` with glob metacharacters made literal."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
