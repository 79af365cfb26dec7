"""What of a git folder a sandboxed command may write: `git_dir_read_only`.

A commit, a checkout, a stash, a fetch from a local remote and a merge write objects, refs,
logs, the index and the files git keeps at the top of its folder (HEAD, ORIG_HEAD,
FETCH_HEAD, MERGE_HEAD, COMMIT_EDITMSG, packed-refs, and the `*.lock` files it renames over
them). Those stay writable, and so does the top folder itself: git makes its lock files
there and renames them over the real ones. Everything else that exists is read-only, and the
names that make git run code or read another folder are held read-only even while missing
(a stand-in, `policy.StandIn`), so a command cannot create them: `config` (core.fsmonitor,
core.hooksPath, aliases, filters), `config.worktree`, `hooks/`, `info/` (attributes,
excludes), `commondir` (it points git at another folder's config: issue 31), the object
store's alternates, the legacy `remotes/` and `branches/`. Submodules' folders
(`modules/*`) and linked worktrees' (`worktrees/*`) get the same treatment.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .policy import ReadOnlyPath, StandIn

WRITABLE = frozenset(
    {
        "objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD",
        "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD",
        "REBASE_HEAD", "COMMIT_EDITMSG", "TAG_EDITMSG", "NOTES_EDITMSG", "SQUASH_MSG",
        "BISECT_LOG", "BISECT_START", "BISECT_TERMS", "BISECT_NAMES", "BISECT_EXPECTED_REV",
        "BISECT_ANCESTORS_OK", "BISECT_RUN", "packed-refs", "shallow", "rebase-merge",
        "rebase-apply", "sequencer", "rr-cache", "gc.pid", "gc.log", "lfs", "gitk.cache",
        "fsmonitor--daemon", "fsmonitor--daemon.ipc",
    }
)  # fmt: skip
"""What git writes at the top of its folder during everyday commands."""
NESTED = frozenset({"modules", "worktrees"})
"""Folders of other git folders (submodules, linked worktrees): each narrowed in turn."""
GUARDED = (
    ("config", StandIn.FILE),
    ("config.worktree", StandIn.FILE),
    ("commondir", StandIn.SAME_GIT_DIR),
    ("hooks", StandIn.FOLDER),
    ("info", StandIn.FOLDER),
    ("remotes", StandIn.FOLDER),
    ("branches", StandIn.FOLDER),
    ("objects/info/alternates", StandIn.FILE),
    ("objects/info/http-alternates", StandIn.FILE),
)
"""The names that run code or lead git elsewhere, read-only whether they exist or not."""


def is_git_dir(path: Path) -> bool:
    """True when `path` is a git folder (a `.git` folder, or any holding HEAD)."""
    return path.is_dir() and (path.name == ".git" or (path / "HEAD").is_file())


def git_dir_read_only(git_dir: Path) -> list[ReadOnlyPath]:
    """The read-only paths of `git_dir` (see the module docstring)."""
    return list(_narrowed(git_dir, depth=0))


def _narrowed(git_dir: Path, *, depth: int) -> Iterator[ReadOnlyPath]:
    yield from (ReadOnlyPath(git_dir / name, stand_in) for name, stand_in in GUARDED)
    guarded = {name for name, _ in GUARDED}
    for child in _children(git_dir):
        name = child.name
        if name in guarded or name in WRITABLE or name.endswith(".lock"):
            continue
        if name in NESTED and _is_folder(child) and depth < 4:
            yield from _nested(child, depth=depth + 1)
        else:
            yield ReadOnlyPath(child)


def _nested(folder: Path, *, depth: int) -> Iterator[ReadOnlyPath]:
    """The git folders in `folder` narrowed, anything else read-only (a submodule's name
    may hold slashes: `modules/a/b`)."""
    for child in _children(folder):
        if not _is_folder(child):
            yield ReadOnlyPath(child)
        elif (child / "HEAD").exists() or (child / "commondir").exists():
            yield from _narrowed(child, depth=depth)
        elif depth < 8:
            yield from _nested(child, depth=depth + 1)
        else:
            yield ReadOnlyPath(child)


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []
