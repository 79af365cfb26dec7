"""`InMemorySessionStore`: sessions in a dict, for tests and short-lived programs.

Nothing survives the process. Entries are copied through JSON on the way in and out, so the
store keeps what another store would (no shared mutable objects, no non-JSON values).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from .jsonl_store import now_ms
from .store_api import (
    MAIN_SUBPATH,
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    subpath_of,
)

_Address = tuple[str, str, str]


class InMemorySessionStore:
    """Sessions held in memory (thread-safe; gone when the process ends)."""

    def __init__(self) -> None:
        self._entries: dict[_Address, list[str]] = {}
        self._mtimes: dict[_Address, int] = {}
        self._order: dict[_Address, int] = {}
        self._clock = 0
        self._lock = threading.Lock()

    def describe(self, key: SessionKey) -> str:
        """Where the transcript is, for a person."""
        return f"memory:{key['session_id']}"

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """Add the entries after the transcript's."""
        if not entries:
            return
        texts = [json.dumps(e, ensure_ascii=False, default=str) for e in entries]
        address = _address(key)
        with self._lock:
            self._entries.setdefault(address, []).extend(texts)
            self._mtimes[address] = now_ms()
            self._clock += 1
            self._order[address] = self._clock

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Copies of the entries in order; None when there are none."""
        with self._lock:
            texts = list(self._entries.get(_address(key), ()))
        return [json.loads(t) for t in texts] if texts else None

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's sessions, the one written to last first."""
        with self._lock:
            mains = [a for a in self._entries if a[0] == project_key and a[2] == MAIN_SUBPATH]
            mains.sort(key=lambda a: self._order[a], reverse=True)
            return [SessionStoreListEntry(session_id=a[1], mtime=self._mtimes[a]) for a in mains]

    def delete(self, key: SessionKey) -> None:
        """Remove a transcript; a main key removes its subkeys too."""
        project, session, sub = _address(key)
        with self._lock:
            doomed = [
                a
                for a in self._entries
                if a[:2] == (project, session) and (sub == MAIN_SUBPATH or a[2] == sub)
            ]
            for address in doomed:
                del self._entries[address]
                del self._mtimes[address]
                del self._order[address]

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The session's subpaths, sorted."""
        with self._lock:
            return sorted(
                a[2]
                for a in self._entries
                if a[:2] == (key["project_key"], key["session_id"]) and a[2] != MAIN_SUBPATH
            )

    def clear(self) -> None:
        """Forget every session."""
        with self._lock:
            self._entries.clear()
            self._mtimes.clear()
            self._order.clear()

    def list_projects(self) -> list[str]:
        """Every project key with a session."""
        with self._lock:
            return sorted({a[0] for a in self._entries})


def _address(key: SessionKey) -> _Address:
    return (key["project_key"], key["session_id"], subpath_of(key))
