"""The bubblewrap command line of one sandboxed command: `bwrap_argv`.

Inside: the whole filesystem read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, a
private empty `/tmp`, then the writable folders bound read-write on top (the working folder
is often under /tmp), the read-only paths (`denyWrite`, protected paths) bound read-only
over them, and the `denyRead` paths hidden (an empty read-only folder over a folder,
/dev/null over a file). Mounts apply in order of depth, shallow first, so the deeper path
decides: `denyRead: ["~"]` with the project in `~/project` leaves the project usable, and a
protected `.git/hooks` inside the writable project stays read-only.

bwrap makes every mount point it lacks, so a mount point must never lie inside a read-only
mount (issue 31: `Can't mkdir .claude/CLAUDE.md: Read-only file system` in every project
with a `.claude` folder). A read-only path is therefore mounted only where the deepest mount
above it is writable: inside a read-only one it is read-only already, inside a hidden one
mounting it would show it again. A missing read-only path gets a stand-in at its first
missing part (`policy.StandIn`), and the empty folders (placeholders, hidden folders) are
made read-only only after every mount, as bwrap makes deeper mount points inside them. The
folders between a read-only path and its writable folder are bound onto themselves
(`_pins`): a mount point cannot be renamed, so the path's folder cannot be moved away and
recreated.

The network namespace is always new (`--unshare-net`): with no allowed domains there is no
network at all; with some, the command reaches only the proxy (`sandbox.proxy`) through the
bridge that `sandbox.bridge` starts inside. The pid namespace is new too: when bwrap dies
(the timeout or a cancel kills its process group), the kernel kills every process of the
sandbox with it, whatever session or group they moved to (`--die-with-parent` makes the
sandbox's init go when bwrap goes).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from .policy import ReadOnlyPath, SandboxPolicy, StandIn

NAMESPACE_FLAGS = (
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)
"""What every sandboxed command gets (and what the availability probe tries). Without
`--cap-drop ALL`, a command run by root keeps CAP_SYS_ADMIN inside and can simply `umount`
a read-only bind and write the protected file under it."""


class MountKind(IntEnum):
    """What a mount does; for one path, a later kind is applied after (and wins over) an
    earlier one."""

    PRIVATE = 0
    """An empty tmpfs (the private /tmp)."""
    WRITABLE = 1
    READ_ONLY = 2
    PLACEHOLDER = 3
    """A stand-in where a read-only path does not exist yet, so the command cannot create
    it (bwrap makes the mount point; `Sandbox` removes it afterwards)."""
    DENY_READ = 4


STAND_IN_FILES = {StandIn.FILE: ("empty", ""), StandIn.SAME_GIT_DIR: ("commondir", ".\n")}
"""The file each file stand-in binds, by name in the stand-in folder, and its content."""


@dataclass(frozen=True, slots=True, order=True)
class Mount:
    """One mount of the plan, sortable in the order bwrap must apply them."""

    depth: int
    kind: MountKind
    path: str
    is_dir: bool = True
    source: str | None = None
    """The file bound read-only over `path` (a file stand-in); None: `path` itself."""

    @property
    def is_tmpfs(self) -> bool:
        """An empty folder made read-only once every mount is made (`bwrap_argv`): bwrap
        makes the mount points of deeper mounts inside it, which a read-only one refuses."""
        return self.kind in (MountKind.PLACEHOLDER, MountKind.DENY_READ) and self.source is None

    def args(self) -> list[str]:
        """The bwrap arguments of this mount."""
        p = self.path
        match self.kind:
            case MountKind.PRIVATE:
                return ["--tmpfs", p]
            case MountKind.WRITABLE:
                return ["--bind", p, p]
            case _ if self.source is not None:
                return ["--ro-bind", self.source, p]
            case MountKind.READ_ONLY:
                return ["--ro-bind", p, p]
            case _ if self.is_dir:  # PLACEHOLDER, or DENY_READ of a folder
                return ["--perms", "0555", "--tmpfs", p]
            case _:
                return ["--ro-bind", "/dev/null", p]


@dataclass(frozen=True, slots=True)
class MountPlan:
    """The mounts of one command, and the placeholders bwrap will create on the host."""

    mounts: tuple[Mount, ...]
    placeholders: tuple[Path, ...]


def plan_mounts(
    policy: SandboxPolicy,
    working_dirs: Sequence[Path],
    files: Sequence[Path] = (),
    binds: Sequence[Path] = (),
    *,
    stand_ins: Path | None = None,
) -> MountPlan:
    """The mounts for `policy` with `working_dirs` writable, `files` (existing files, such
    as the shell's cwd record) writable and `binds` (the proxy's folder) read-only.
    `stand_ins` is the folder of the file stand-ins (`write_stand_ins`); without it every
    stand-in is an empty folder (a missing `commondir` then stops git: it fails closed).

    Every mount point bwrap must create lies in a writable region: a read-only path is
    mounted only where the deepest mount above it is writable (below a read-only mount it
    is read-only already, below a hidden one mounting it would show it again)."""
    planner = _Planner(stand_ins)
    planner.add(Mount(1, MountKind.PRIVATE, "/tmp"))
    for path in _existing([*working_dirs, *policy.allow_write, *files]):
        planner.add(_mount(MountKind.WRITABLE, path))
    for path in _existing(binds):
        planner.add(_mount(MountKind.READ_ONLY, path))
    for path in _existing(policy.deny_read):
        if path != Path("/"):
            planner.add(_mount(MountKind.DENY_READ, path))
    for entry in sorted(policy.guarded, key=lambda e: (len(_real(e.path).parts), str(e.path))):
        planner.guard(entry)
    return MountPlan(tuple(sorted(set(planner.mounts))), tuple(planner.placeholders))


def write_stand_ins(folder: Path) -> None:
    """Write the files `STAND_IN_FILES` names into `folder` (private to the session)."""
    for name, content in STAND_IN_FILES.values():
        (folder / name).write_text(content, encoding="utf-8")


def bwrap_argv(bwrap: str, plan: MountPlan, inner: Sequence[str], *, cwd: Path) -> list[str]:
    """The full command line: bwrap, its namespaces and mounts, then `inner` in `cwd`."""
    argv = [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for mount in plan.mounts:
        argv += mount.args()
    for mount in plan.mounts:
        if mount.is_tmpfs:
            argv += ["--remount-ro", mount.path]
    return [*argv, "--chdir", str(cwd), "--", *inner]


def probe_argv(bwrap: str) -> list[str]:
    """A command that succeeds exactly when bwrap can make the namespaces we use."""
    return [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--proc", "/proc", "true"]


def _mount(kind: MountKind, path: Path, source: str | None = None) -> Mount:
    is_dir = source is None and (kind is MountKind.PLACEHOLDER or path.is_dir())
    return Mount(len(path.parts), kind, str(path), is_dir, source)


class _Planner:
    """The mounts planned so far, and where a read-only path goes among them."""

    def __init__(self, stand_ins: Path | None) -> None:
        self.mounts: list[Mount] = []
        self.placeholders: list[Path] = []
        self._stand_ins = stand_ins
        self._at: dict[Path, MountKind] = {}
        """The strongest kind mounted at each path."""

    def add(self, mount: Mount) -> None:
        self.mounts.append(mount)
        path = Path(mount.path)
        self._at[path] = max(mount.kind, self._at.get(path, mount.kind))

    def guard(self, entry: ReadOnlyPath) -> None:
        """Mount `entry` read-only (or its stand-in, when missing) if it is writable now."""
        path = _real(entry.path)
        owner = self._owner(path)
        if owner is None or self._at[owner] is not MountKind.WRITABLE:
            return  # read-only, hidden or private already: nothing to mount, nothing to make
        target = _first_missing(path)
        if target.exists():  # the path, or a file where a folder above it should be
            self.add(_mount(MountKind.READ_ONLY, target))
        else:
            stand_in = entry.stand_in if target == path else StandIn.FOLDER
            self.add(_mount(MountKind.PLACEHOLDER, target, self._source(stand_in)))
            self.placeholders.append(target)
        path = target
        for pin in _pins(path, owner):
            self.add(_mount(MountKind.WRITABLE, pin))

    def _owner(self, path: Path) -> Path | None:
        """The deepest mounted path at or above `path`; None: only the read-only root."""
        for candidate in (path, *path.parents):
            if candidate in self._at and candidate != Path("/"):
                return candidate
        return None

    def _source(self, stand_in: StandIn) -> str | None:
        if stand_in is StandIn.FOLDER or self._stand_ins is None:
            return None
        return str(self._stand_ins / STAND_IN_FILES[stand_in][0])


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _existing(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in map(_real, paths):
        if path.exists() and path not in found:
            found.append(path)
    return found


def _pins(path: Path, owner: Path) -> list[Path]:
    """The folders between `path` and the writable folder `owner` above it, each bound onto
    itself so that it is a mount point: a mount point cannot be renamed or removed, so
    `mv .git .git2 && mkdir .git && …` cannot swap a protected path's folder for a new one."""
    return [p for p in path.parents if p.is_relative_to(owner) and p != owner]


def _first_missing(path: Path) -> Path:
    """The shallowest component of `path` that does not exist, or that is a file where a
    folder should be (held read-only, it cannot be swapped for a folder); `path` at most."""
    for candidate in reversed(path.parents):
        if not candidate.is_dir():
            return candidate
    return path
