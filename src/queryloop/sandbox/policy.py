"""What a sandboxed command may touch: `SandboxPolicy`, built once per session from the
`sandbox` settings (`config.settings`) by `agent.assembly_guards`, and the error raised when the
sandbox is required but cannot start."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..errors import QueryloopError

INSTALL_HINT = "install bubblewrap (`apt-get install bubblewrap`)"

_COMPOUND = frozenset(";&|<>`$(){}\n")
"""Characters that make a command more than one simple command: an excluded command must
be the whole command line, or `docker ps; rm -rf ~` would leave the sandbox with it."""


class SandboxUnavailableError(QueryloopError):
    """The sandbox is enabled with `failIfUnavailable` and cannot start; says why and the fix."""


class StandIn(Enum):
    """What stands in place of a read-only path that does not exist yet, so that a command
    cannot create it. Only the path's own stand-in is used when it is the first missing part;
    a missing folder above it gets an empty folder."""

    FOLDER = "folder"
    """An empty read-only folder: git ignores it (`git add .` does not stage it), which an
    empty file in a work tree would not be."""
    FILE = "file"
    """An empty read-only file: for names a program reads as a file, inside a git folder
    (`config`, `objects/info/alternates`): git reads it as empty."""
    SAME_GIT_DIR = "same-git-dir"
    """A git folder's `commondir` reading `.`: git dies on a `commondir` it cannot read or
    that is empty, and `.` names the git folder itself, as no file would."""


@dataclass(frozen=True, slots=True)
class ReadOnlyPath:
    """A path mounted read-only, and what stands in for it while it does not exist."""

    path: Path
    stand_in: StandIn = StandIn.FOLDER


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The boundary of every sandboxed Bash command (absolute paths, already resolved).

    The working folders of the call are writable too; they are given per call (a `cd`
    moves the shell, not the boundary), see `bwrap.bwrap_argv`.
    """

    allow_write: tuple[Path, ...] = ()
    """`sandbox.filesystem.allowWrite` and `permissions.additionalDirectories`: writable
    beyond the working folders."""
    read_only: tuple[Path | ReadOnlyPath, ...] = ()
    """`sandbox.filesystem.denyWrite`, the paths of `Edit(...)` deny rules and the protected
    paths (settings files, .git/hooks, ...): read-only even inside a writable folder (a bare
    `Path` stands in as a folder while missing)."""
    deny_read: tuple[Path, ...] = ()
    """`sandbox.filesystem.denyRead` and the paths of `Read(...)` deny rules: unreadable (an
    empty folder, or /dev/null, over them)."""
    allowed_domains: tuple[str, ...] = ()
    """`sandbox.network.allowedDomains`; empty: no network at all."""
    denied_domains: tuple[str, ...] = ()
    """`sandbox.network.deniedDomains`: refused even when an allowed pattern matches."""
    allow_unix_sockets: tuple[str, ...] = ()
    """`sandbox.network.allowUnixSockets`: the unix sockets (by path) a sandboxed command
    may connect to; any other is refused (seccomp, `sandbox.supervisor`)."""
    allow_all_unix_sockets: bool = False
    """`sandbox.network.allowAllUnixSockets`: unix sockets are not checked."""
    excluded_commands: tuple[str, ...] = ()
    """`sandbox.excludedCommands`: commands that run outside the sandbox (and then ask as
    any other command would)."""
    fail_if_unavailable: bool = False
    """`sandbox.failIfUnavailable`: stop the call instead of running it unsandboxed."""
    auto_allow: bool = True
    """`sandbox.autoAllowBashIfSandboxed`: a sandboxed command that would ask is allowed."""

    @property
    def guarded(self) -> tuple[ReadOnlyPath, ...]:
        """`read_only` with every entry's stand-in said."""
        return tuple(p if isinstance(p, ReadOnlyPath) else ReadOnlyPath(p) for p in self.read_only)

    @property
    def network(self) -> bool:
        """True when some host may be reached (through the proxy)."""
        return bool(self.allowed_domains)

    def excludes(self, command: str) -> bool:
        """True when `command` is one simple command that an `excludedCommands` entry names:
        `docker` or `docker *` (or `docker:*`) match `docker ...`; `git push` matches
        `git push ...`. A compound command, or one that does not parse, stays sandboxed."""
        if not self.excluded_commands or _COMPOUND.intersection(command):
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return any(_prefix_matches(entry, words) for entry in self.excluded_commands)


def _prefix_matches(entry: str, words: list[str]) -> bool:
    pattern = entry.strip().removesuffix(":*").removesuffix(" *").removesuffix("*").split()
    return bool(pattern) and words[: len(pattern)] == pattern
