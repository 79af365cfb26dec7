"""Where a call writes: a protected path (ask), outside the working folders (block), and
whether an allow rule *names* a protected path (the narrow way through).

The file tools (Write, Edit, MultiEdit, NotebookEdit) write their `file_path`; a Bash line
writes what `shell_writes` finds, relative to the working folder and to every static `cd`
target in the line, globs expanded there, `~` taken from the session's home.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from . import bash, paths
from .protected import ProtectedEntry, ProtectedPaths
from .rules import MatchContext, PermissionRule
from .shell_writes import WriteTarget, bases, expand, shell_writes

_GLOB_CHARS = frozenset("*?[")
_SAMPLE_NAMES = (
    "config",
    "pre-commit",
    "pre-push",
    "commit-msg",
    "post-checkout",
    "post-merge",
    "settings.json",
    "SKILL.md",
    "agent.md",
    "hook.sh",
    "hook.py",
    "hook.js",
)
"""Names that may live inside a protected folder: a `find -delete -name PAT` whose pattern
matches none of them (`*.pyc`) cannot remove what makes the folder matter."""


@dataclass(frozen=True, slots=True)
class ProtectedWrite:
    """A write that reaches a protected path."""

    path: str
    """The absolute path written (or the folder whose contents change)."""
    entry: ProtectedEntry
    how: str
    """What writes it: `Edit`, `redirection`, `cp`, `python3 -c`, …"""


def file_tool_write(protected: ProtectedPaths, path: Path) -> ProtectedWrite | None:
    """The protected path a file tool's write reaches, or None."""
    entry = protected.find(path)
    return None if entry is None else ProtectedWrite(str(path), entry, "file tool")


def bash_write(
    protected: ProtectedPaths, command: str, *, cwd: Path, home: Path
) -> ProtectedWrite | None:
    """The first protected path a Bash line writes, or names while the analysis cannot see
    what it does; None when it reaches none."""
    writes = shell_writes(command)
    folders = bases(bash.directories(command), str(cwd))
    for target in writes.targets:
        for path in expand(target.word, target.is_glob, folders, home=str(home)):
            entry = _target_entry(protected, target, path)
            if entry is not None:
                return ProtectedWrite(path, entry, target.program)
    for source, dest in writes.copies:
        hit = _merged_copy(protected, source, dest, folders, str(home))
        if hit is not None:
            return hit
    for token in writes.named:
        for path in expand(token, _is_glob(token), folders, home=str(home)):
            entry = _named_entry(protected, path, cwd)
            if entry is not None:
                return ProtectedWrite(path, entry, "a program the analysis cannot see through")
    return None


def bash_outside(command: str, working_dirs: list[Path], *, cwd: Path, home: Path) -> str | None:
    """The first write target of a Bash line outside the working folders, or None."""
    writes = shell_writes(command)
    folders = bases(bash.directories(command), str(cwd))
    for target in writes.targets:
        for path in expand(target.word, target.is_glob, folders, home=str(home)):
            if not paths.is_within(Path(path), working_dirs):
                return path
    return None


def _target_entry(
    protected: ProtectedPaths, target: WriteTarget, path: str
) -> ProtectedEntry | None:
    if target.names:
        return _narrow_delete(protected, path, target.names)
    if target.tree or (target.dest and not os.path.isdir(path)):
        entry = protected.inside(path)
    else:
        entry = protected.find(path)
    if entry is None and target.is_glob:
        entry = _glob_entry(protected, path)
    return entry


def _named_entry(protected: ProtectedPaths, path: str, cwd: Path) -> ProtectedEntry | None:
    """A token of an opaque program: it names a protected path, or a folder holding one
    (not the working folder itself or a folder above it: `pytest .` names no file)."""
    entry = protected.find(path)
    if entry is not None:
        return entry
    literal = os.path.normpath(path)
    for root in (*protected.memory_roots, cwd):
        root_text = str(root)
        if literal == root_text or root_text.startswith(literal.rstrip("/") + "/"):
            return None
    return protected.inside(literal) if os.path.isabs(literal) else None


def _narrow_delete(
    protected: ProtectedPaths, folder: str, names: tuple[str, ...]
) -> ProtectedEntry | None:
    """`find FOLDER -name PAT -delete`: a protected file below FOLDER whose name matches, or
    a protected folder below it that may hold a matching name."""
    for entry in protected.entries:
        entry_path = str(entry.path)
        if not (entry_path == folder or entry_path.startswith(folder.rstrip("/") + "/")):
            if protected.find(folder) is not entry:
                continue
        candidates = _SAMPLE_NAMES if entry.is_dir else (entry.path.name,)
        if any(fnmatchcase(name, pattern) for name in candidates for pattern in names):
            return entry
    return None


def _glob_entry(protected: ProtectedPaths, pattern: str) -> ProtectedEntry | None:
    """A glob that matched nothing yet may still name a protected path (`.git/hooks/*`)."""
    literal = pattern.split("/")
    cut = next((i for i, part in enumerate(literal) if _GLOB_CHARS & set(part)), len(literal))
    prefix = "/".join(literal[:cut]) or "/"
    entry = protected.find(prefix) if cut < len(literal) else None
    if entry is not None:
        return entry
    for entry in protected.entries:
        if fnmatchcase(str(entry.path), pattern):
            return entry
    return None


def _merged_copy(
    protected: ProtectedPaths, source: str, dest: str, folders: list[str], home: str
) -> ProtectedWrite | None:
    """A recursive copy of a folder merges its contents into the destination: a protected
    path that exists below the source lands on the protected path below the destination."""
    src = expand(source, False, folders, home=home)[0]
    if not os.path.isdir(src):
        return None
    for base in expand(dest, False, folders, home=home):
        for into in (base, os.path.join(base, os.path.basename(src.rstrip("/")))):
            for entry in protected.entries:
                entry_path = str(entry.path)
                if not entry_path.startswith(into.rstrip("/") + "/"):
                    continue
                if os.path.lexists(os.path.join(src, os.path.relpath(entry_path, into))):
                    return ProtectedWrite(entry_path, entry, "a recursive copy")
    return None


def _is_glob(token: str) -> bool:
    return bool(_GLOB_CHARS & set(token))


def rule_names(rule: PermissionRule, write: ProtectedWrite, mc: MatchContext) -> bool:
    """Does the allow rule name the protected path `write` reaches? Its literal (glob-free)
    part must reach into the protected entry: `Edit(.queryloop/skills/**)` names the skills
    folder, `Edit(**)` and `Edit(src/**)` do not; a Bash rule names it when it is the exact
    command or one of its words is the path (or lies inside the protected entry)."""
    content = (rule.content or "").strip()
    if not content:
        return False
    if rule.tool == "Bash":
        return _bash_rule_names(content, write, mc)
    return _path_rule_names(rule, content, write, mc)


def _path_rule_names(
    rule: PermissionRule, content: str, write: ProtectedWrite, mc: MatchContext
) -> bool:
    pattern = paths.compile_pattern(content, root=rule.root or mc.cwd, cwd=mc.cwd, home=mc.home)
    text = content.rstrip("/")
    for prefix in ("//", "~/", "./", "/"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    parts = text.split("/") if text else []
    anchored = content.startswith(("/", "~", "./")) or "/" in content.rstrip("/")
    cut = next((i for i, part in enumerate(parts) if _GLOB_CHARS & set(part)), len(parts))
    if not anchored:  # `Edit(.mcp.json)`: a bare name names the entry called so
        return cut == len(parts) and parts[-1:] == [write.entry.path.name]
    literal = Path(os.path.normpath(os.path.join(pattern.base, *parts[:cut])))
    entry = write.entry.path
    return literal == entry or (entry in literal.parents and write.entry.is_dir)


def _bash_rule_names(content: str, write: ProtectedWrite, mc: MatchContext) -> bool:
    spec = content[:-2] if content.endswith(":*") else content
    tokens = [t for t in spec.replace("*", " ").split() if t]
    for token in tokens:
        for path in expand(token.strip("'\""), False, [str(mc.cwd)], home=str(mc.home)):
            literal = Path(os.path.normpath(path))
            entry = write.entry.path
            if literal == entry or (write.entry.is_dir and entry in literal.parents):
                return True
    return "*" not in content and not content.endswith(":*")  # an exact command line
