"""Where a call writes: a protected path (ask), outside the working folders (block), and
whether an allow rule *names* a protected path (the narrow way through).

The file tools (Write, Edit, MultiEdit, NotebookEdit) write their `file_path`; a Bash line
writes what `shell_writes` finds, relative to the working folder and to every static `cd`
(`pushd`, `env -C`, `git -C`) target in the line, globs and braces expanded there, `~` taken
from the session's home and from every `HOME=` the line sets. Where the line leaves the
folder or the home to run time (`cd "$D"`, `HOME=$X`, `CDPATH=…`), a relative (or `~`)
target fails closed: it is taken as a protected path. Archives, patches and xargs lists are
read from disk (`write_contents`); one whose content is unknown (a pipe) changes everything
below the folder it lands in.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from .. import paths
from ..protected import GIT_DIR, ProtectedEntry, ProtectedPaths
from . import bash
from .write_contents import listed_paths
from .write_links import hard_link_entry
from .write_model import TreeChange, tokens_of
from .write_trees import changed_paths
from .writes import (
    Contents,
    ShellWrites,
    WriteTarget,
    bases,
    expand,
    session_fixed,
    shell_writes,
)

GLOB_CHARS = frozenset("*?[")
_SAMPLE_NAMES = (
    "config",
    "pre-commit",
    "pre-push",
    "commit-msg",
    "post-checkout",
    "post-merge",
    "settings.json",
    "settings.local.json",
    ".mcp.json",
    "SKILL.md",
    "agent.md",
    "hook.sh",
    "hook.py",
    "hook.js",
)
"""Names that may live inside a protected folder: a `find -delete -name PAT` whose pattern
matches none of them (`*.pyc`) cannot remove what makes the folder matter."""
_UNKNOWN_FOLDER = "a path relative to a folder known only at run time"
_UNKNOWN_HOME = "a path in a home folder known only at run time"
_UNKNOWN_TARGET = "a path known only at run time, which may be any file"
_BLANKS = frozenset(" \t\n")


@dataclass(frozen=True, slots=True)
class ProtectedWrite:
    """A write that reaches a protected path."""

    path: str
    """The absolute path written (or the folder whose contents change)."""
    entry: ProtectedEntry
    how: str
    """What writes it: `Edit`, `redirection`, `cp`, `python3 -c`, …"""


def file_tool_write(protected: ProtectedPaths, path: Path) -> ProtectedWrite | None:
    """The protected path a file tool's write reaches (by its name, a symbolic link, or a
    hard link: another name of a protected file's inode), or None."""
    entry = protected.find(path)
    if entry is None:
        entry = hard_link_entry(protected, path)
        return (
            None if entry is None else ProtectedWrite(str(path), entry, "file tool (a hard link)")
        )
    return ProtectedWrite(str(path), entry, "file tool")


@dataclass(frozen=True, slots=True)
class _Where:
    """The folders and homes a Bash line's relative and `~` paths may be relative to."""

    folders: list[str]
    homes: list[str]
    unknown_folder: bool
    unknown_home: bool

    @classmethod
    def of(cls, command: str, cwd: Path, home: Path) -> _Where:
        analysis = bash.analyze(command)
        homes, unknown_home = [str(home)], False
        unknown_folder = False
        for name, value in analysis.assignments:
            if name == "HOME" and value.value:
                homes.append(os.path.normpath(os.path.join(cwd, value.value)))
            elif name == "HOME":
                unknown_home = True
            unknown_folder = unknown_folder or name in ("CDPATH", "PWD", "OLDPWD")
        # `read HOME`, `eval …`: set by other means than an assignment
        unknown_home = unknown_home or not session_fixed(command, "HOME", assignments=False)
        directories = bash.directories(command)
        unknown_folder = unknown_folder or None in directories
        folders: list[str] = []
        for one in homes:
            folders += [f for f in bases(directories, str(cwd), home=one) if f not in folders]
        return cls(folders, homes, unknown_folder, unknown_home)

    def expand(self, word: str, is_glob: bool = False) -> list[str]:
        found: list[str] = []
        for one in self.homes if word.startswith("~") else self.homes[:1]:
            found += expand(word, is_glob, self.folders, home=one)
        return list(dict.fromkeys(found))

    def unknown(self, word: str) -> str | None:
        """Why `word` may be a path the analysis cannot place, or None."""
        if word.startswith("~"):
            return _UNKNOWN_HOME if self.unknown_home else None
        if self.unknown_folder and not os.path.isabs(word):
            return _UNKNOWN_FOLDER
        return None


def bash_write(
    protected: ProtectedPaths,
    command: str,
    *,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> ProtectedWrite | None:
    """The first protected path a Bash line writes, or names while the analysis cannot see
    what it does, or a write target known only at run time; None when it reaches none.
    `env`: the environment the command runs with (`$TMPDIR`; default this process's)."""
    writes = shell_writes(command)
    where = _Where.of(command, cwd, home)
    targets, unknown = _completed(writes, command, home, os.environ if env is None else env)
    found = _protected_writes(protected, writes, targets, where, command, cwd)
    return next(found, None) or next((_unknown(t) for t in unknown), None)


def _protected_writes(
    protected: ProtectedPaths,
    writes: ShellWrites,
    targets: list[WriteTarget],
    where: _Where,
    command: str,
    cwd: Path,
) -> Iterator[ProtectedWrite]:
    for target in targets:
        doubt = where.unknown(target.word)
        if doubt is not None:
            yield _doubtful(target.word, where, doubt, target.program)
        for path in where.expand(target.word, target.is_glob):
            entry = _target_entry(protected, target, path)
            if entry is not None:
                yield ProtectedWrite(path, entry, target.program)
            elif not target.names and not target.existing:
                linked = hard_link_entry(protected, path)
                if linked is not None:
                    yield ProtectedWrite(path, linked, f"{target.program} (a hard link)")
    for source, dest in writes.copies:
        hit = _merged_copy(protected, source, dest, where)
        if hit is not None:
            yield hit
    made = Counter(p for t in targets for p in where.expand(t.word, t.is_glob))
    for contents in writes.contents:
        yield from _contents_writes(protected, contents, where, command, made)
    for change in writes.trees:
        yield from _tree_writes(protected, change, where)
    for token in writes.named:
        for path in where.expand(token, _is_glob(token)):
            entry = _named_entry(protected, path, cwd)
            if entry is not None:
                yield ProtectedWrite(path, entry, "a program the analysis cannot see through")


def _completed(
    writes: ShellWrites, command: str, home: Path, env: Mapping[str, str]
) -> tuple[list[WriteTarget], list[WriteTarget]]:
    """The line's write targets with the late ones completed from the session (`$TMPDIR`,
    `$HOME`), and the late ones no check can know."""
    targets, unknown = list(writes.targets), []
    for target in writes.late:
        done = _complete(target, command, home, env)
        if done is None:
            unknown.append(target)
        else:
            targets.append(done)
    return targets, unknown


def _complete(
    target: WriteTarget, command: str, home: Path, env: Mapping[str, str]
) -> WriteTarget | None:
    if target.template is None:
        return None
    parts: list[str] = []
    glob = target.is_glob
    for part in target.template:
        if isinstance(part, str):
            parts.append(part)
            continue
        value = _session_value(part.name, home, env)
        if value is None or not session_fixed(command, part.name):
            return None
        if not part.quoted:  # split and globbed by the shell
            if _BLANKS & set(value):
                return None
            glob = glob or _is_glob(value)
        parts.append(value)
    word = "".join(parts)
    return dataclasses.replace(target, word=word, is_glob=glob, template=None) if word else None


def _session_value(name: str, home: Path, env: Mapping[str, str]) -> str | None:
    """A variable the line leaves alone, as the command will see it (None: not placed)."""
    if name == "HOME":
        return str(home)
    if name == "TMPDIR":
        return env.get("TMPDIR", "")
    if name == "HISTFILE":  # bash's default outside an interactive shell
        return env.get("HISTFILE") or "~/.history"
    return None  # `$PWD` not at the start of a word


def _unknown(target: WriteTarget) -> ProtectedWrite:
    entry = ProtectedEntry(Path(target.word), False, _UNKNOWN_TARGET)
    return ProtectedWrite(target.word, entry, target.program)


def _doubtful(word: str, where: _Where, why: str, program: str) -> ProtectedWrite:
    path = where.expand(word)[0]
    return ProtectedWrite(path, ProtectedEntry(Path(path), False, why), program)


def bash_outside(
    command: str,
    working_dirs: list[Path],
    *,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """The first write target of a Bash line outside the working folders, or None (a
    target known only at run time is left to the protected-path check)."""
    writes = shell_writes(command)
    where = _Where.of(command, cwd, home)
    targets, _ = _completed(writes, command, home, os.environ if env is None else env)
    for target in targets:
        for path in where.expand(target.word, target.is_glob):
            if not paths.is_within(Path(path), working_dirs):
                return path
    return None


def _contents_writes(
    protected: ProtectedPaths,
    contents: Contents,
    where: _Where,
    command: str,
    made: Counter[str],
) -> Iterator[ProtectedWrite]:
    """What an archive, a patch or an xargs list makes the program write. Unknown contents
    (a pipe, an unreadable file) change everything below the folder they land in; for a
    patch or a list from a pipe, the files the line names are read as one might be."""
    how = contents.program
    for folder in where.expand(contents.folder):
        listed = _listed(contents, folder, where, command, made)
        if listed is None:
            entry = protected.inside(folder) or _layout_entry(protected, folder)
            if entry is not None:
                yield ProtectedWrite(folder, entry, f"{how} (what it writes is not known)")
            continue
        for name in listed:
            for path in _landing(contents, folder, name, where):
                entry = protected.find(path)
                if entry is not None:
                    yield ProtectedWrite(path, entry, how)


def _tree_writes(
    protected: ProtectedPaths, change: TreeChange, where: _Where
) -> Iterator[ProtectedWrite]:
    """The protected files a git rewrite changes, listed by git in each folder the command
    may run in; where git cannot say (or the folder is known only at run time), the
    protected paths that folder holds."""
    for folder in where.folders:
        changed = None if where.unknown_folder else changed_paths(change, folder, protected.find)
        if changed is None:
            entry = protected.inside(folder) or _layout_entry(protected, folder)
            if entry is not None:
                yield ProtectedWrite(
                    folder, entry, f"{change.program} (what it writes is not known)"
                )
            continue
        for path in changed:
            entry = protected.find(path)
            if entry is not None:
                yield ProtectedWrite(path, entry, change.program)


def _listed(
    contents: Contents, folder: str, where: _Where, command: str, made: Counter[str]
) -> list[str] | None:
    """The paths the contents name, or None when they cannot be known (no such file yet:
    something may make it before the command runs, as the line itself or a background
    task can)."""
    if contents.source is not None:
        for file in where.expand(contents.source):
            found = listed_paths(contents.kind, file)
            # `gunzip -N F.gz` itself removes F.gz: made by another command only if twice
            if found is not None and made[file] <= (1 if contents.kind == "gzip" else 0):
                return found
        return None
    if contents.kind not in ("patch", "list"):
        return None
    found, folders = [], []
    for token in tokens_of(command):  # `patch -p1 < x.diff`, `xargs rm < list.txt`
        for path in where.expand(token):
            if os.path.isfile(path):
                found += listed_paths(contents.kind, path) or []
            elif os.path.isdir(path) and contents.kind == "list":
                folders.append(path)  # `grep -rl x DIR | xargs sed -i`: files below DIR
    if contents.kind == "list":
        found += [os.path.join(f, "**") for f in folders] or [os.path.join(folder, "**")]
    return found or None


def _landing(contents: Contents, folder: str, name: str, where: _Where) -> list[str]:
    """Where one listed path lands: an archive member below the folder (after
    `--strip-components`; by its last component when the program junks paths), and at
    itself when absolute (`tar -P`, a link member pointing out); every strip level of a
    patch's path (`-p0`, `-p1`, …); a list's word as the shell's path (`**`: anything below
    a folder)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if contents.kind == "list":
        if name.endswith("/**"):
            return [name[:-3]]
        return where.expand(name)
    if contents.kind == "patch":
        prefix = contents.prefix.strip("/").split("/") if contents.prefix else []
        suffixes = [parts[i:] for i in range(len(parts))]
        return [os.path.normpath(os.path.join(folder, *prefix, *s)) for s in suffixes]
    kept = parts[-1:] if contents.flat else parts[contents.strip :]
    found = [os.path.normpath(os.path.join(folder, *kept))] if kept else []
    return [*found, os.path.normpath(name)] if os.path.isabs(name) else found


def _target_entry(
    protected: ProtectedPaths, target: WriteTarget, path: str
) -> ProtectedEntry | None:
    if target.names:
        return _narrow_delete(protected, path, target.names)
    if target.existing:
        return _existing_inside(protected, path)
    if target.tree or (target.dest and not os.path.isdir(path)):
        entry = protected.inside(path)
    else:
        entry = protected.find(path)
    if entry is None and target.is_glob:
        entry = _glob_entry(protected, path)
    return entry


def _layout_entry(protected: ProtectedPaths, folder: str) -> ProtectedEntry | None:
    """The project layout a folder below a working folder may hold (`sub/.claude/…`): what
    lands there unknown may create it."""
    for path, _is_dir in protected.layout_below(folder):
        entry = protected.find(path)
        if entry is not None:
            return entry
    return None


def _existing_inside(protected: ProtectedPaths, folder: str) -> ProtectedEntry | None:
    """A protected path that exists at or below `folder`, other than a git folder (`git
    clean` removes files that exist, and never touches the repository's own `.git`)."""
    for entry in protected.entries:
        if entry.path.name == GIT_DIR or not os.path.lexists(entry.path):
            continue
        entry_path = str(entry.path)
        if entry_path == folder or entry_path.startswith(folder.rstrip("/") + "/"):
            return entry
    return None


def _named_entry(protected: ProtectedPaths, path: str, cwd: Path) -> ProtectedEntry | None:
    """A token of an opaque program: it names a protected path, or a folder holding one
    (not the working folder itself or a folder above it: `pytest .` names no file)."""
    entry = protected.find(path)
    if entry is not None:
        return entry
    literal = os.path.normpath(path)
    for root in (*protected.roots, cwd):
        root_text = str(root)
        if literal == root_text or root_text.startswith(literal.rstrip("/") + "/"):
            return None
    return protected.inside(literal) if os.path.isabs(literal) else None


def _narrow_delete(
    protected: ProtectedPaths, folder: str, names: tuple[str, ...]
) -> ProtectedEntry | None:
    """`find FOLDER -name PAT -delete` (or `-exec rm`): a protected file below FOLDER whose
    name matches, a protected folder below it that may hold a matching name, or a project
    layout that any folder below it may hold (`src/.mcp.json`)."""
    for entry in protected.entries:
        entry_path = str(entry.path)
        if not (entry_path == folder or entry_path.startswith(folder.rstrip("/") + "/")):
            if protected.find(folder) is not entry:
                continue
        candidates = _SAMPLE_NAMES if entry.is_dir else (entry.path.name,)
        if any(_name_matches(name, names) for name in candidates):
            return entry
    for path, is_dir in protected.layout_below(folder):
        candidates = _SAMPLE_NAMES if is_dir else (os.path.basename(path),)
        if any(_name_matches(name, names) for name in candidates):
            return protected.find(path)
    return None


def _name_matches(name: str, patterns: tuple[str, ...]) -> bool:
    """`-name PAT`, or `-iname PAT` (stored case-folded after a NUL)."""
    for pattern in patterns:
        if pattern.startswith("\0"):
            if fnmatchcase(name.casefold(), pattern[1:]):
                return True
        elif fnmatchcase(name, pattern):
            return True
    return False


def _glob_entry(protected: ProtectedPaths, pattern: str) -> ProtectedEntry | None:
    """A glob that matched nothing yet may still name a protected path (`.git/hooks/*`)."""
    literal = pattern.split("/")
    cut = next((i for i, part in enumerate(literal) if GLOB_CHARS & set(part)), len(literal))
    prefix = "/".join(literal[:cut]) or "/"
    entry = protected.find(prefix) if cut < len(literal) else None
    if entry is not None:
        return entry
    for entry in protected.entries:
        if fnmatchcase(str(entry.path), pattern):
            return entry
    return None


def _merged_copy(
    protected: ProtectedPaths, source: str, dest: str, where: _Where
) -> ProtectedWrite | None:
    """A recursive copy of a folder merges its contents into the destination: a protected
    path that exists below the source lands on the protected path below the destination."""
    src = where.expand(source)[0]
    if not os.path.isdir(src):
        return None
    for base in where.expand(dest):
        for into in (base, os.path.join(base, os.path.basename(src.rstrip("/")))):
            for entry in protected.entries:
                entry_path = str(entry.path)
                if not entry_path.startswith(into.rstrip("/") + "/"):
                    continue
                if os.path.lexists(os.path.join(src, os.path.relpath(entry_path, into))):
                    return ProtectedWrite(entry_path, entry, "a recursive copy")
    return None


def _is_glob(token: str) -> bool:
    return bool(GLOB_CHARS & set(token))
