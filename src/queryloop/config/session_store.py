"""Which session store a run uses: the program's choice, else `QUERYLOOP_SESSION_STORE`, else
the settings' `sessionStore`, else the JSONL files under `$QUERYLOOP_HOME`.

The setting counts only in files a person trusts (the user's, managed, a trusted project's):
a repository's `.queryloop/settings.json` that sent every transcript (prompts, tool output,
file contents) to a database of its choosing would leak them, so an untrusted project's
value is ignored and listed like its hooks (docs/sessions.md, "Choosing a store").
"""

from __future__ import annotations

import os
from pathlib import Path

from ..session.store_api import SessionStore
from ..session.stores import SESSION_STORE_ENV, open_session_store
from .discovery import SettingSources
from .settings import load_settings
from .trust import is_trusted


def configured_spec(settings_value: str | None) -> str | None:
    """The spec from the environment (it wins), else the settings' value."""
    from_env = os.environ.get(SESSION_STORE_ENV, "").strip()
    return from_env or settings_value


def settings_spec(
    cwd: Path,
    home: Path,
    *,
    trust: bool | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> str | None:
    """The settings files' `sessionStore` for `cwd` (trusted files only): for commands that
    find a session before an Agent reads its workspace (`--resume`, `queryloop sessions`)."""
    trusted = is_trusted(cwd, home) if trust is None else trust
    return load_settings(cwd, user_home=home, trusted=trusted, sources=sources).session_store


def open_store(
    choice: SessionStore | str | Path | None, settings_value: str | None, home: Path
) -> tuple[SessionStore, bool]:
    """The store to use and whether the caller opened it (and so closes it): `choice` (a
    store, used as it is, or a spec), else the environment's or the settings' spec."""
    if choice is not None and not isinstance(choice, str | Path):
        return choice, False
    spec = choice if choice is not None else configured_spec(settings_value)
    return open_session_store(spec, home=home), True


def open_configured_store(
    choice: SessionStore | str | Path | None,
    cwd: Path,
    home: Path,
    *,
    trust: bool | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> tuple[SessionStore, bool]:
    """`open_store`, reading the settings only when neither `choice` nor the environment
    decides."""
    decided = choice is not None or bool(os.environ.get(SESSION_STORE_ENV, "").strip())
    value = None if decided else settings_spec(cwd, home, trust=trust, sources=sources)
    return open_store(choice, value, home)
