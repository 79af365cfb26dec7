"""Which work-tree files a git rewrite changes, listed at check time (`write_model.TreeChange`).

The command line names a commit and a pathspec; the files are in git. This asks git's
plumbing, read-only, in the command's folder: `diff-tree -r --raw` between the empty tree (or
the current commit, or a stash's parent) and the tree the command reads, `ls-files -s` for
the index, `ls-files -o` for the untracked files a `stash -u` removes, `hash-object
--no-filters` for what the work tree holds now. Git's own pathspec rules decide what a
pathspec covers (globs, `:(glob)`, `:/`, `:(icase)`, relative to the folder), so nothing here
re-implements them. A file changes when what the tree holds differs from what the work tree
holds, or when the rewrite removes it.

Plumbing runs no hook, pager, external diff, textconv or clean filter; `core.fsmonitor` is
turned off and no optional lock is taken, so the check changes nothing and runs no code the
repository names. When git cannot say (a rev that does not resolve, a broken object store, a
timeout, more than `MAX_ENTRIES` files), the answer is None and the caller fails closed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from .write_model import TreeChange

MAX_ENTRIES = 200_000
TIMEOUT_SECONDS = 10.0
_NOT_A_REPO = b"not a git repository"
_HARDENED = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "--no-pager",
    "--no-optional-locks",
)


class _Unknown(Exception):
    """Git could not list what the command reads: the caller fails closed."""


Entries = dict[str, str | None]
"""Path from the top of the work tree → the blob it will hold (None: removed)."""


@dataclass(frozen=True, slots=True)
class _Repo:
    folder: str
    top: str

    def git(self, *args: str) -> bytes:
        return _run(self.folder, args)

    def resolve(self, rev: str, kind: str = "commit") -> str | None:
        try:
            out = self.git(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{{kind}}}"
            )
        except _Unknown:
            return None
        return out.decode().strip() or None

    def tree(self, rev: str, pathspecs: tuple[str, ...] = ()) -> Entries:
        """Every file `rev` holds under the pathspecs, with its blob."""
        empty = self.git("hash-object", "-t", "tree", "/dev/null").decode().strip()
        return self.diff(empty, rev, pathspecs)

    def diff(self, old: str, new: str, pathspecs: tuple[str, ...] = ()) -> Entries:
        """The files that differ between two trees, with the blob `new` holds."""
        raw = self.git("diff-tree", "-r", "--raw", "-z", "--no-renames", old, new, "--", *pathspecs)
        fields = raw.split(b"\0")
        entries: Entries = {}
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            parts = meta[1:].split()
            entries[path.decode("utf-8", "surrogateescape")] = (
                None if parts[4].startswith(b"D") else parts[3].decode()
            )
            _bounded(entries)
        return entries

    def index(self, pathspecs: tuple[str, ...] = ()) -> Entries:
        raw = self.git("ls-files", "-s", "-z", "--full-name", "--", *pathspecs)
        entries: Entries = {}
        for record in raw.split(b"\0"):
            if b"\t" in record:
                meta, path = record.split(b"\t", 1)
                entries[path.decode("utf-8", "surrogateescape")] = meta.split()[1].decode()
                _bounded(entries)
        return entries

    def untracked(self, pathspecs: tuple[str, ...], ignored: bool) -> Entries:
        standard = () if ignored else ("--exclude-standard",)
        raw = self.git("ls-files", "-o", "-z", "--full-name", *standard, "--", *pathspecs)
        entries: Entries = {
            p.decode("utf-8", "surrogateescape"): None for p in raw.split(b"\0") if p
        }
        return _bounded(entries)

    def hashes(self, paths: list[str]) -> list[str]:
        if not paths:
            return []
        return self.git("hash-object", "--no-filters", "--", *paths).decode().split()


def changed_paths(
    change: TreeChange, folder: str, keep: Callable[[str], object]
) -> list[str] | None:
    """The absolute paths `change`, run in `folder`, changes among those `keep` accepts;
    [] when the folder is in no repository (git refuses the command); None when git cannot
    say what the tree holds."""
    if not change.settled or not os.path.isdir(folder):
        return None
    try:
        top = _run(folder, ("rev-parse", "--show-toplevel")).decode().strip()
    except _NotARepo:
        return []
    except _Unknown:
        return None
    repo = _Repo(folder, top)
    try:
        entries = _entries(repo, change)
        if entries is None:
            return None
        return _differing(repo, entries, keep)
    except _Unknown:
        return None


def _entries(repo: _Repo, change: TreeChange) -> Entries | None:
    kind, specs = change.kind, change.pathspecs
    rev = change.revs[0] if change.revs else None
    if kind == "checkout":  # REV [PATHSPEC…] when REV is a commit, else all are pathspecs
        assert rev is not None
        if repo.resolve(rev) is None:
            return repo.index((rev, *specs))
        kind = "paths" if specs else "switch"
    if kind in ("paths", "restore"):
        if rev is None:
            return repo.index(specs) if specs else {}
        commit = repo.resolve(rev, "tree")
        if commit is None or not specs:
            return None if commit is None else {}
        found = repo.tree(commit, specs)
        if kind == "restore":  # no overlay: what the index has and the source lacks goes
            found = {**dict.fromkeys(repo.index(specs)), **found}
        return found
    if kind == "index":
        everything = specs == (":/",)
        listed = repo.index(() if everything else specs)
        return {change.prefix + path: blob for path, blob in listed.items()}
    return _whole(repo, change, rev)


def _whole(repo: _Repo, change: TreeChange, rev: str | None) -> Entries | None:
    """Rewrites of the whole tree: switch, reset, read-tree, stash."""
    kind = change.kind
    target = repo.resolve(rev or "HEAD", "tree" if kind == "read-tree" else "commit")
    if target is None:
        return None
    if kind == "switch" and not change.force:
        return repo.diff("HEAD", target)
    if kind == "read-tree" and change.prefix:
        prefix = change.prefix.rstrip("/") + "/"
        return {prefix + p: b for p, b in repo.tree(target).items()}
    if kind == "stash-apply":
        found = repo.diff(f"{target}^1", target)
        untracked = repo.resolve(f"{target}^3")
        return {**found, **(repo.tree(untracked) if untracked else {})}
    if kind == "stash-push":
        found = {
            **dict.fromkeys(repo.index(change.pathspecs)),
            **repo.tree(target, change.pathspecs),
        }
        if change.untracked:
            found |= repo.untracked(change.pathspecs, change.untracked == "all")
        return found
    return {**dict.fromkeys(repo.index()), **repo.tree(target)}  # reset, read-tree, switch -f


def _differing(repo: _Repo, entries: Entries, keep: Callable[[str], object]) -> list[str]:
    """The kept paths whose work-tree content is not what the entry will make it."""
    changed: list[str] = []
    compare: list[tuple[str, str]] = []
    for path, blob in entries.items():
        full = os.path.normpath(os.path.join(repo.top, path))
        if keep(full) is None:
            continue
        if blob is None:
            if os.path.lexists(full):
                changed.append(full)
        elif os.path.isfile(full) and not os.path.islink(full):
            compare.append((full, blob))
        else:
            changed.append(full)
    hashes = repo.hashes([full for full, _ in compare])
    if len(hashes) != len(compare):
        raise _Unknown("hash-object")
    changed += [full for (full, blob), now in zip(compare, hashes, strict=True) if now != blob]
    return changed


class _NotARepo(_Unknown):
    """The folder is in no repository."""


def _run(folder: str, args: tuple[str, ...]) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_CONFIG")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        done = subprocess.run(
            ["git", *_HARDENED, *args],
            cwd=folder,
            env=env,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise _Unknown(str(exc)) from exc
    if done.returncode != 0:
        if _NOT_A_REPO in done.stderr:
            raise _NotARepo(done.stderr.decode(errors="replace"))
        raise _Unknown(done.stderr.decode(errors="replace"))
    return done.stdout


def _bounded(entries: Entries) -> Entries:
    if len(entries) > MAX_ENTRIES:
        raise _Unknown("too many files")
    return entries
