"""The Claude Agent SDK's session stores on ours: its async `SessionStore`s, adapted.

`InMemorySessionStore` is the SDK's in-memory store (async methods, its test helpers); a
`session_store` option's value becomes queryloop's synchronous store through
`queryloop.session.async_store.as_session_store` (an async store runs behind a
`SyncStoreAdapter`; this one hands over its synchronous store directly).
"""

from __future__ import annotations

from ..session.memory_store import InMemorySessionStore as _SyncMemoryStore
from ..session.store_api import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
)


class InMemorySessionStore:
    """The Claude Agent SDK's in-memory store (async methods, its test helpers), for tests
    and development: nothing survives the process."""

    def __init__(self) -> None:
        self.sync_store = _SyncMemoryStore()
        """The same sessions through queryloop's synchronous protocol."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Add the entries after the transcript's."""
        self.sync_store.append(key, entries)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries in order; None when there are none."""
        return self.sync_store.load(key)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's sessions with their last write time."""
        return self.sync_store.list_sessions(project_key)

    async def delete(self, key: SessionKey) -> None:
        """Remove a transcript (a main key: its subkeys too)."""
        self.sync_store.delete(key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The session's subpaths."""
        return self.sync_store.list_subkeys(key)

    def get_entries(self, key: SessionKey) -> list[SessionStoreEntry]:
        """Test helper: the entries of a key (empty when absent)."""
        return self.sync_store.load(key) or []

    @property
    def size(self) -> int:
        """Test helper: how many sessions (main transcripts) it holds."""
        return sum(len(self.sync_store.list_sessions(p)) for p in self.sync_store.list_projects())

    def clear(self) -> None:
        """Test helper: forget everything."""
        self.sync_store.clear()
