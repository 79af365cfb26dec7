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

from ..errors import ConfigError
from ..session.store_api import SessionStore
from ..session.stores import SESSION_STORE_ENV, check_store_spec, open_session_store
from .discovery import SettingSources
from .locations import settings_paths
from .settings_file import read_source

SETTING = "sessionStore"


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
    """The settings files' `sessionStore` for `cwd`, as `load_settings` merges it (the last
    file that sets it wins; a project's file only in a trusted folder): for commands that
    find a session before an Agent reads its workspace (`--resume`, `queryloop sessions`),
    which must not load the whole configuration to learn one value. A value of the wrong
    form is an error here as there."""
    value: str | None = None
    trusted = trust
    for source in settings_paths(cwd, home):
        if not sources.reads(source.scope.value):
            continue
        file, _ = read_source(source)  # an unreadable file stops the Agent when it starts
        if file is None or SETTING not in file.data:
            continue
        if source.is_project:
            if trusted is None:
                from .trust import is_trusted  # loads the permissions package: only now

                trusted = is_trusted(cwd, home)
            if not trusted:
                continue
        raw = file.data[SETTING]
        if not isinstance(raw, str):
            raise ConfigError(f"{source.path}: '{SETTING}' must be a string")
        value = check_store_spec(raw)
    return value


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
