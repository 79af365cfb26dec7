"""Channel one: context appended to the end of the system prompt (a git status snapshot).

The snapshot is taken once per session (`config.memory.SessionContext` memoizes it) and never
refreshed:
it is labelled a snapshot, and a stable system prompt keeps the session's cache prefix intact.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..messages.api_types import ApiSystemBlock

logger = logging.getLogger(__name__)

MAX_STATUS_CHARS = 2_000
GIT_TIMEOUT_SECONDS = 5.0
RECENT_COMMITS = 5
GIT_STATUS_HEADER = (
    "This is the git status at the start of the conversation. Note that this status is "
    "a snapshot in time, and will not update during the conversation."
)


def append_system_context(
    system: Sequence[ApiSystemBlock], context: Mapping[str, str]
) -> list[ApiSystemBlock]:
    """`system` plus one text block of `key: value` lines; unchanged when context is empty.

    Returns a new list; the input blocks are not modified.
    """
    text = "\n".join(f"{key}: {value}" for key, value in context.items() if value)
    blocks = list(system)
    if text.strip():
        blocks.append({"type": "text", "text": text})
    return blocks


def get_system_context(cwd: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> dict[str, str]:
    """`{"gitStatus": ...}` for a git work tree at `cwd`, `{}` elsewhere or when git fails.

    Runs real `git` subprocesses, each bounded by `timeout` seconds. Not memoized: use
    `config.SessionContext.system_context()` for the once-per-session snapshot.
    """
    if _git(cwd, timeout, "rev-parse", "--is-inside-work-tree") != "true":
        return {}
    branch = _git(cwd, timeout, "branch", "--show-current") or "(detached HEAD)"
    main = _main_branch(cwd, timeout)
    status = _git(cwd, timeout, "status", "--short") or "(clean)"
    commits = _git(cwd, timeout, "log", "--oneline", "-n", str(RECENT_COMMITS)) or "(no commits)"
    return {"gitStatus": format_git_status(branch, main, status, commits)}


def format_git_status(branch: str, main_branch: str, status: str, commits: str) -> str:
    """The snapshot text; `status` is cut to `MAX_STATUS_CHARS` with a note saying so."""
    if len(status) > MAX_STATUS_CHARS:
        status = (
            status[:MAX_STATUS_CHARS]
            + "\n... (truncated because it exceeds 2k characters. If you need more "
            + "information, run `git status` using the Bash tool)"
        )
    return (
        f"{GIT_STATUS_HEADER}\n"
        f"Current branch: {branch}\n\n"
        f"Main branch (you will usually use this for PRs): {main_branch}\n\n"
        f"Status:\n{status}\n\n"
        f"Recent commits:\n{commits}"
    )


def _main_branch(cwd: Path, timeout: float) -> str:
    remote_head = _git(cwd, timeout, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
    if remote_head:
        return remote_head.removeprefix("origin/")
    for candidate in ("main", "master"):
        if _git(cwd, timeout, "rev-parse", "--verify", "--quiet", f"refs/heads/{candidate}"):
            return candidate
    return _git(cwd, timeout, "branch", "--show-current") or "main"


def _git(cwd: Path, timeout: float, *args: str) -> str:
    """stdout of `git args`, or "" when git is missing, fails or times out.

    Only right-stripped: `git status --short` lines may start with a space.
    """
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("git %s in %s failed: %s", " ".join(args), cwd, exc)
        return ""
    return done.stdout.rstrip() if done.returncode == 0 else ""
