"""The bubblewrap command line of one sandboxed command: `bwrap_argv`.

Inside: the whole filesystem read-only (`--ro-bind / /`), a fresh `/dev` and `/proc`, a
private empty `/tmp`, then the writable folders bound read-write on top (the working folder
is often under /tmp), the read-only paths (`denyWrite`, protected paths) bound read-only
over them, and the `denyRead` paths hidden (an empty read-only folder over a folder,
/dev/null over a file). Mounts apply in order of depth, shallow first, so the deeper path
decides: `denyRead: ["~"]` with the project in `~/project` leaves the project usable, and a
protected `.git/hooks` inside the writable project stays read-only. The folders between a
read-only path and its writable folder are bound onto themselves (`_pins`): a mount point
cannot be renamed, so the path's folder cannot be moved away and recreated. A read-only path whose
nearest mounted folder is a hidden one stays hidden (mounting it would show it again).

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

from .policy import SandboxPolicy

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
    """An empty read-only folder where a read-only path does not exist yet, so the command
    cannot create it (bwrap makes the mount point; `Sandbox` removes it afterwards)."""
    DENY_READ = 4


@dataclass(frozen=True, slots=True, order=True)
class Mount:
    """One mount of the plan, sortable in the order bwrap must apply them."""

    depth: int
    kind: MountKind
    path: str
    is_dir: bool = True

    def args(self) -> list[str]:
        """The bwrap arguments of this mount."""
        p = self.path
        match self.kind:
            case MountKind.PRIVATE:
                return ["--tmpfs", p]
            case MountKind.WRITABLE:
                return ["--bind", p, p]
            case MountKind.READ_ONLY:
                return ["--ro-bind", p, p]
            case _ if self.is_dir:  # PLACEHOLDER, or DENY_READ of a folder
                return ["--perms", "0555", "--tmpfs", p, "--remount-ro", p]
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
) -> MountPlan:
    """The mounts for `policy` with `working_dirs` writable, `files` (existing files, such
    as the shell's cwd record) writable and `binds` (the proxy's folder) read-only."""
    writable = _existing([*working_dirs, *policy.allow_write, *files])
    denied = [_real(p) for p in policy.deny_read]
    mounts = [Mount(1, MountKind.PRIVATE, "/tmp")]
    mounts += [_mount(MountKind.WRITABLE, p) for p in writable]
    mounts += [_mount(MountKind.READ_ONLY, p) for p in _existing(binds)]
    placeholders: list[Path] = []
    for path in map(_real, policy.read_only):
        if _hidden(path, denied, writable):
            continue
        exists = path.exists()
        if exists and not _inside_any(path, writable):
            continue  # already read-only under `--ro-bind / /`: one mount fewer
        target = path if exists else _first_missing(path)
        if not exists and not _inside_any(target.parent, writable):
            continue  # it cannot be created anyway
        if not exists and target not in placeholders:
            placeholders.append(target)
        mounts.append(_mount(MountKind.READ_ONLY if exists else MountKind.PLACEHOLDER, target))
        mounts += [_mount(MountKind.WRITABLE, p) for p in _pins(target, writable)]
    mounts += [_mount(MountKind.DENY_READ, p) for p in denied if p.exists() and p != Path("/")]
    return MountPlan(tuple(sorted(set(mounts))), tuple(placeholders))


def bwrap_argv(bwrap: str, plan: MountPlan, inner: Sequence[str], *, cwd: Path) -> list[str]:
    """The full command line: bwrap, its namespaces and mounts, then `inner` in `cwd`."""
    argv = [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for mount in plan.mounts:
        argv += mount.args()
    return [*argv, "--chdir", str(cwd), "--", *inner]


def probe_argv(bwrap: str) -> list[str]:
    """A command that succeeds exactly when bwrap can make the namespaces we use."""
    return [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--proc", "/proc", "true"]


def _mount(kind: MountKind, path: Path) -> Mount:
    is_dir = kind is MountKind.PLACEHOLDER or path.is_dir()
    return Mount(len(path.parts), kind, str(path), is_dir)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _existing(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in map(_real, paths):
        if path.exists() and path not in found:
            found.append(path)
    return found


def _inside_any(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def _pins(path: Path, writable: Sequence[Path]) -> list[Path]:
    """The folders between `path` and the writable folder around it, each bound onto itself
    so that it is a mount point: a mount point cannot be renamed or removed, so
    `mv .git .git2 && mkdir .git && …` cannot swap a protected path's folder for a new one."""
    roots = [w for w in writable if path.is_relative_to(w) and path != w]
    if not roots:
        return []
    root = max(roots, key=lambda w: len(w.parts))
    return [p for p in path.parents if p.is_relative_to(root) and p != root]


def _hidden(path: Path, denied: Sequence[Path], writable: Sequence[Path]) -> bool:
    """True when the deepest folder around `path` that is mounted is a hidden one."""
    deny = max((len(f.parts) for f in denied if _inside_any(path, [f])), default=-1)
    write = max((len(f.parts) for f in writable if _inside_any(path, [f])), default=-1)
    return deny >= 0 and deny >= write


def _first_missing(path: Path) -> Path:
    """The shallowest component of `path` that does not exist (`path` itself at most)."""
    for candidate in reversed(path.parents):
        if not candidate.exists():
            return candidate
    return path
