"""Choosing a store (`open_session_store`), addressing one transcript in it (`TranscriptRef`)
and finding a session by id, prefix or recency in any store.

Specs `open_session_store` understands (the `session_store` Agent option, the
`sessionStore` setting, `QUERYLOOP_SESSION_STORE`, `--session-store`):

- nothing (None or ""): the JSONL files under `$QUERYLOOP_HOME/projects` (the default);
- `sqlite:///abs/path.db` (or `sqlite://rel/path.db`, relative to the working folder,
  `sqlite://~/x.db`): one SQLite file (`SqliteSessionStore`);
- `postgresql://...` or `postgres://...`: a PostgreSQL database (`PostgresSessionStore`,
  psycopg 3; the DSN is libpq's);
- `memory:`: an `InMemorySessionStore` (gone with the process; for tests);
- a folder: JSONL files under it (it plays the part of `$QUERYLOOP_HOME/projects`).

Anything else is a `SessionError` naming the forms, never a silent fallback to the files: a
transcript meant for a shared database must not land on one machine's disk unnoticed.

Besides the protocol, a store may offer (each a small runtime-checkable protocol here):
`list_projects()` (finding a session in every project, not only the working folder's),
`sync(key)` / `release(key)` (the JSONL and SQLite stores: durability across an OS crash at
the end of a prompt; an open descriptor let go), `load_checked(key)` (the JSONL store: the
lines a kill cut, in words) and `describe(key)` (where a transcript is, for a person).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from .jsonl_store import JsonlSessionStore
from .memory_store import InMemorySessionStore
from .sqlite_store import SqliteSessionStore
from .store import (
    SUBAGENTS_DIR,
    AmbiguousSessionError,
    SessionError,
    SessionNotFoundError,
    project_key,
    queryloop_home,
)
from .store_api import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    subpath_of,
)

SESSION_STORE_ENV = "QUERYLOOP_SESSION_STORE"
"""The environment variable naming the store (a spec as above)."""

SIDECHAIN_PREFIX = f"{SUBAGENTS_DIR}/agent-"
"""Subagent transcripts are the subkeys `subagents/agent-<agent-id>` of their session's."""
POSTGRES_MODULE = "queryloop.session.postgres_store"
_SQLITE = "sqlite://"
_POSTGRES = ("postgresql://", "postgres://")
_MEMORY = "memory:"


@runtime_checkable
class ListsProjects(Protocol):
    """A store that can name every project it holds."""

    def list_projects(self) -> list[str]:
        """Every project key with a session."""
        ...


@runtime_checkable
class SyncsTranscripts(Protocol):
    """A store with per-transcript durability and resources (JSONL, SQLite)."""

    def sync(self, key: SessionKey) -> None:
        """Make what was appended to `key` durable across an OS crash."""
        ...

    def release(self, key: SessionKey) -> None:
        """Let go of what is held open for `key`."""
        ...


@runtime_checkable
class ChecksLines(Protocol):
    """A store that can say what it skipped while loading (the JSONL files)."""

    def load_checked(self, key: SessionKey) -> tuple[list[SessionStoreEntry], list[str]] | None:
        """`load`, and in words each record that could not be read."""
        ...


@runtime_checkable
class Describes(Protocol):
    """A store that can say where a transcript is."""

    def describe(self, key: SessionKey) -> str:
        """A file path, or a URL and the session id."""
        ...


@runtime_checkable
class Closes(Protocol):
    """A store that holds connections or descriptors."""

    def close(self) -> None:
        """Let go of them."""
        ...


def open_session_store(
    spec: str | Path | None, *, home: Path | str | None = None, fsync: bool = False
) -> SessionStore:
    """The store `spec` names (see the module docstring); None or "" the JSONL files under
    `home` (`$QUERYLOOP_HOME`). `fsync` applies to JSONL stores: True fsyncs every append,
    False (the live session's choice) at `sync()`."""
    text = str(spec).strip() if spec is not None else ""
    if not text:
        return JsonlSessionStore(queryloop_home(home) / "projects", fsync=fsync)
    if text.startswith(_SQLITE):
        where = text.removeprefix(_SQLITE)
        if not where or where == "/":
            raise SessionError(f"{text!r}: name the database file, e.g. sqlite:///var/ql.db")
        return SqliteSessionStore(Path(where).expanduser().resolve())
    if text.startswith(_POSTGRES):
        return _postgres(text)
    if text == _MEMORY:
        return InMemorySessionStore()
    if "://" in text or text.split(":", 1)[0] in {"sqlite", "postgresql", "postgres"}:
        raise SessionError(
            f"unknown session store {text.split(':', 1)[0]!r}: use sqlite:///PATH, "
            "postgresql://..., memory: or a folder for JSONL files"
        )
    return JsonlSessionStore(Path(text).expanduser().resolve(), fsync=fsync)


def check_store_spec(spec: str) -> str:
    """`spec` if `open_session_store` understands its form (nothing is opened)."""
    text = spec.strip()
    if text.startswith(_SQLITE) and text.removeprefix(_SQLITE) in {"", "/"}:
        raise SessionError(f"{text!r}: name the database file, e.g. sqlite:///var/ql.db")
    known = text.startswith((_SQLITE, *_POSTGRES)) or text == _MEMORY
    if not known and ("://" in text or text.split(":", 1)[0] in {"sqlite", "postgres"}):
        raise SessionError(f"unknown session store {text!r}: use sqlite:///PATH or postgresql://")
    return text


def _postgres(dsn: str) -> SessionStore:
    try:
        module = importlib.import_module(POSTGRES_MODULE)
    except ImportError as exc:
        raise SessionError(
            f"the PostgreSQL session store cannot be loaded ({exc}); "
            "install queryloop with psycopg 3 (pip install 'queryloop[postgres]')"
        ) from None
    store: SessionStore = module.PostgresSessionStore(dsn)
    return store


def close_store(store: SessionStore) -> None:
    """Close `store` if it holds anything open."""
    if isinstance(store, Closes):
        store.close()


@dataclass(frozen=True, eq=False)
class TranscriptRef:
    """One transcript: a store and the key of a session's main transcript or a subkey."""

    store: SessionStore
    key: SessionKey

    @classmethod
    def of(
        cls, store: SessionStore, project: str, session_id: str, subpath: str = ""
    ) -> TranscriptRef:
        """The transcript `session_id` (its `subpath`, if any) of project key `project`."""
        key = SessionKey(project_key=project, session_id=session_id)
        if subpath:
            key["subpath"] = subpath
        return cls(store, key)

    @classmethod
    def for_file(cls, path: Path | str, *, fsync: bool = True) -> TranscriptRef:
        """The transcript file at `path`, through a JSONL store of its own."""
        store, key = JsonlSessionStore.for_file(path, fsync=fsync)
        return cls(store, key)

    @property
    def session_id(self) -> str:
        """The session's id (a subkey's parent session)."""
        return self.key["session_id"]

    @property
    def project_key(self) -> str:
        """The project key."""
        return self.key["project_key"]

    @property
    def subpath(self) -> str:
        """`MAIN_SUBPATH` for the main transcript, else e.g. `subagents/agent-<id>`."""
        return subpath_of(self.key)

    def sub(self, subpath: str) -> TranscriptRef:
        """A subkey of this session (`subagents/agent-<id>`)."""
        return TranscriptRef.of(self.store, self.project_key, self.session_id, subpath)

    def main(self) -> TranscriptRef:
        """The session's main transcript."""
        return TranscriptRef.of(self.store, self.project_key, self.session_id)

    @property
    def path(self) -> Path | None:
        """The file, for the JSONL store (None for a database)."""
        return self.store.path_of(self.key) if isinstance(self.store, JsonlSessionStore) else None

    @property
    def location(self) -> str:
        """Where it is, for a person: a file path, or the store and session id."""
        if isinstance(self.store, Describes):
            return self.store.describe(self.key)
        return f"{type(self.store).__name__}:{self.session_id}"

    def append(self, entries: Sequence[SessionStoreEntry]) -> None:
        """Append, durable on return."""
        self.store.append(self.key, entries)

    def load_checked(self) -> tuple[list[SessionStoreEntry], list[str]] | None:
        """The entries and, from a store that can tell, the records it could not read."""
        if isinstance(self.store, ChecksLines):
            return self.store.load_checked(self.key)
        entries = self.store.load(self.key)
        return None if entries is None else (entries, [])

    def exists(self) -> bool:
        """Whether the transcript has any entry."""
        return self.store.load(self.key) is not None

    def subkeys(self) -> list[str]:
        """The session's subpaths."""
        key = SessionListSubkeysKey(project_key=self.project_key, session_id=self.session_id)
        return self.store.list_subkeys(key)

    def sync(self) -> None:
        """Durable across an OS crash (stores that can tell the difference)."""
        if isinstance(self.store, SyncsTranscripts):
            self.store.sync(self.key)

    def release(self) -> None:
        """Let go of what the store holds open for it."""
        if isinstance(self.store, SyncsTranscripts):
            self.store.release(self.key)


def as_ref(source: Path | str | TranscriptRef) -> TranscriptRef:
    """A transcript given as a `TranscriptRef` or as a `.jsonl` file's path."""
    if isinstance(source, TranscriptRef):
        return source
    path = Path(source).expanduser()
    if not path.is_file():
        raise SessionNotFoundError(f"no transcript at {path}")
    return TranscriptRef.for_file(path)


def sidechain_subpath(agent_id: str) -> str:
    """The subkey of subagent `agent_id`'s transcript (`subagents/agent-<id>`)."""
    return f"{SIDECHAIN_PREFIX}{agent_id}"


def sidechain_agent_ids(session: TranscriptRef) -> list[str]:
    """The agent ids of a session's subagent transcripts, sorted."""
    subs = session.subkeys()
    return sorted(s.removeprefix(SIDECHAIN_PREFIX) for s in subs if s.startswith(SIDECHAIN_PREFIX))


def session_folder(ref: TranscriptRef, home: Path | str | None = None) -> Path:
    """The session's own folder on this machine (spilled tool results, task output,
    checkpoints): beside its JSONL file, `<project-key>/<session-id>/`; for a database,
    the same place under `$QUERYLOOP_HOME/projects` (`home`)."""
    path = ref.main().path
    if path is not None:
        return path.parent / ref.session_id
    return queryloop_home(home) / "projects" / ref.project_key / ref.session_id


def project_keys(store: SessionStore, cwd: Path | str | None) -> list[str]:
    """The project of `cwd` first, then (when the store can list them) every other one."""
    first = [project_key(cwd)] if cwd is not None else []
    rest = store.list_projects() if isinstance(store, ListsProjects) else []
    return first + [p for p in rest if p not in first]


def latest_transcript(store: SessionStore, cwd: Path | str) -> TranscriptRef | None:
    """The most recently written session of the project at `cwd` (`--continue`)."""
    project = project_key(cwd)
    sessions = store.list_sessions(project)
    return TranscriptRef.of(store, project, sessions[0]["session_id"]) if sessions else None


def find_transcript(
    store: SessionStore, id_or_prefix: str, cwd: Path | str | None
) -> TranscriptRef:
    """The session with this id or unique id prefix: the project at `cwd` first, then every
    project the store can list. Raises SessionNotFoundError or AmbiguousSessionError."""
    needle = id_or_prefix.strip()
    if not needle:
        raise SessionNotFoundError("an empty session id was given; run `queryloop sessions`")
    keys = project_keys(store, cwd)
    if cwd is not None:
        found = _pick(store, [keys[0]], needle)
        if found is not None:
            return found
    found = _pick(store, keys, needle)
    if found is not None:
        return found
    raise SessionNotFoundError(
        f"no session {needle!r} in {_where(store)}; "
        "run `queryloop sessions` to list this project's sessions"
    )


def _pick(store: SessionStore, projects: list[str], needle: str) -> TranscriptRef | None:
    matches: list[tuple[str, str]] = []
    for project in projects:
        for entry in store.list_sessions(project):
            if entry["session_id"] == needle:
                return TranscriptRef.of(store, project, needle)
            if entry["session_id"].startswith(needle):
                matches.append((project, entry["session_id"]))
    if len(matches) == 1:
        return TranscriptRef.of(store, *matches[0])
    if matches:
        ids = sorted(m[1] for m in matches)
        raise AmbiguousSessionError(
            f"session prefix {needle!r} matches {len(ids)} sessions "
            f"({', '.join(i[:12] for i in ids[:5])}); give more characters",
            ids,
        )
    return None


def _where(store: SessionStore) -> str:
    if isinstance(store, JsonlSessionStore):
        return str(store.root)
    if isinstance(store, SqliteSessionStore):
        return f"sqlite:///{store.path}"
    return type(store).__name__
