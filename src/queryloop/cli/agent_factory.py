"""The Agent a command line describes: new, resumed (`--resume`) or continued (`--continue`).

Print mode (`main`) and the REPL (`repl`, and its /model and /resume) build their Agent here,
so neither imports the other to make one. Nothing heavy is imported until `make_agent` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .args import CliOptions, UsageError

if TYPE_CHECKING:
    from ..agent import Agent
    from ..session.store_api import SessionStore


def make_agent(options: CliOptions, **extra: Any) -> Agent:
    """The Agent the options describe: new, resumed (--resume) or continued (--continue).
    `extra` are Agent keywords added to the options' own (callbacks, mostly)."""
    # Resolve the session first: a wrong id fails in milliseconds, before the SDKs load.
    session = None
    if options.resume or options.continue_latest:
        session = _stored_session(options)
    from ..agent import Agent

    kwargs = options.agent_kwargs()
    kwargs.update(extra)
    if session is not None:
        return Agent.resume(session, options.model, **kwargs)
    return Agent(options.model, **kwargs)


def open_cli_store(options: CliOptions) -> tuple[SessionStore, bool]:
    """The session store the command line chooses (`--session-store`, else
    `QUERYLOOP_SESSION_STORE`, else the settings' `sessionStore`, else the JSONL files), and
    whether it was opened here (then the caller closes it)."""
    from ..config.session_store import open_configured_store
    from ..session import queryloop_home

    return open_configured_store(
        options.session_store, options.cwd, queryloop_home(), trust=options.trust
    )


def _stored_session(options: CliOptions) -> str:
    """The id (or `.jsonl` path) of the session --resume or --continue names."""
    from ..session.store import TRANSCRIPT_SUFFIX
    from ..session.stores import close_store, find_transcript, latest_transcript

    if options.resume:
        path = Path(options.resume).expanduser()
        if path.suffix == TRANSCRIPT_SUFFIX and path.is_file():
            return str(path)
    store, opened = open_cli_store(options)
    try:
        if options.resume:
            return find_transcript(store, options.resume, options.cwd).session_id
        latest = latest_transcript(store, options.cwd)
        if latest is None:
            raise UsageError(
                f"no session to continue in {options.cwd}; start one without --continue"
            )
        return latest.session_id
    finally:
        if opened:
            close_store(store)
