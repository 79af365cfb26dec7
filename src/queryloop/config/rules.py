"""Claude Code's rule files: `~/.claude/rules/**/*.md` (the user's; `$CLAUDE_CONFIG_DIR/rules`)
and `<project>/.claude/rules/**/*.md` (the project's), read as memory
(code.claude.com/docs/en/memory, "Organize rules with .claude/rules/").

- A rule without `paths:` in its front matter is memory the session starts with, beside
  `.claude/CLAUDE.md`: the user's rules after the user's CLAUDE.md, the project's after the
  project's (`config.memory`).
- A rule with `paths:` (a YAML list of glob patterns, or one string; commas and braces
  expand, `**` crosses folders) waits until the agent reads, edits or writes a file that
  matches, then is attached once as nested memory (`context.providers.files`). The patterns
  are relative to the folder holding `.claude/` (the project root); the user's to the
  working folder.
- The front matter is read by PyYAML (`config.front_matter`) and never reaches the model. A
  rule whose front matter does not parse, or whose `paths:` is not a pattern or a list of
  them, is not loaded and a warning names `file:line`: it is instructions, not a security
  policy, so the run goes on.
- Trust and setting sources as the other `.claude/` folders (`config.discovery`): the
  project's rules count only in a trusted folder (a notice names what was left out) and only
  when the project's files are read; the user's only when the user's are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bracex

from ..context.user_context import MemoryFile, PathRule, read_memory_file
from ..permissions.paths import PathPattern, compile_pattern, matches
from .discovery import FileScope, Layout, SettingSources, config_folders
from .front_matter import FrontMatterError, key_line, split_front_matter

RULES_DIR = "rules"
PATHS_KEY = "paths"
MAX_PATTERNS = 1000
"""Brace expansion's limit per pattern (`{a,b}{c,d}...` grows fast)."""


@dataclass(frozen=True)
class GlobMatcher:
    """`context.PathMatcher` over a rule's patterns, anchored at `base`, by the permission
    rules' own path matcher (`permissions.paths`: `*` within a folder, `**` across, a
    path matched as written and with symlinks resolved)."""

    patterns: tuple[PathPattern, ...]

    @classmethod
    def of(cls, globs: Sequence[str], base: Path) -> GlobMatcher:
        """The matcher of `globs` relative to `base`."""
        compiled = tuple(
            compile_pattern("./" + glob.lstrip("/").removeprefix("./"), root=base, cwd=base,
                            home=Path.home())
            for glob in globs
        )  # fmt: skip
        return cls(compiled)

    def matches(self, path: Path) -> bool:
        """True when `path` matches one of the patterns."""
        return any(matches(p, path, resolved_only=False) for p in self.patterns)


@dataclass(frozen=True)
class Rules:
    """The rule files of a session: those it starts with, per scope, and those with `paths:`."""

    user: tuple[MemoryFile, ...] = ()
    project: tuple[MemoryFile, ...] = ()
    conditional: tuple[PathRule, ...] = ()
    notices: tuple[str, ...] = ()
    """Rules left out and why: front matter that does not parse, an untrusted project."""


def discover_rules(
    cwd: Path,
    *,
    user_home: Path,
    trusted: bool,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    claude_dir: Path | None = None,
) -> Rules:
    """The rule files of Claude Code's user folder and `cwd`'s `.claude/rules/`, each folder
    walked in sorted order (subfolders included)."""
    folders = config_folders(
        cwd, RULES_DIR, user_home=user_home, trusted=trusted, claude_dir=claude_dir
    )
    user: list[MemoryFile] = []
    project: list[MemoryFile] = []
    conditional: list[PathRule] = []
    notices: list[str] = []
    for folder in sources.keep(folders.folders):
        if folder.layout is not Layout.CLAUDE:
            continue  # queryloop's own layout has no rules folder
        scope = folder.scope
        base = folder.path.parent.parent if scope is FileScope.PROJECT else cwd
        for path in rule_paths(folder.path):
            try:
                rule = read_rule(path, "user" if scope is FileScope.USER else "project", base)
            except FrontMatterError as exc:
                notices.append(f"{path}:{exc.line}: rule file not loaded: {exc}")
                continue
            if isinstance(rule, PathRule):
                conditional.append(rule)
            elif rule is not None:
                (user if scope is FileScope.USER else project).append(rule)
    # an untrusted project's rule files are counted in its one notice (`project_config`)
    return Rules(tuple(user), tuple(project), tuple(conditional), tuple(notices))


def rule_paths(folder: Path) -> list[Path]:
    """The `.md` files under `folder`, subfolders included, sorted; hidden ones skipped."""
    if not folder.is_dir():
        return []
    found = (p for p in folder.rglob("*.md") if p.is_file())
    return sorted(
        p for p in found if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def read_rule(path: Path, level: str, base: Path) -> MemoryFile | PathRule | None:
    """The rule at `path`: a `MemoryFile` (no `paths:`), a `PathRule`, or None (unreadable or
    empty). Raises `FrontMatterError` for front matter that does not parse or a bad `paths:`."""
    resolved = path.resolve()
    text = read_memory_file(resolved)
    if text is None:
        return None
    meta, body = split_front_matter(text)
    if not body.strip():
        return None
    file = MemoryFile(resolved, level, body)
    if PATHS_KEY not in meta:
        return file
    globs = _patterns(meta[PATHS_KEY])
    if not globs:
        raise FrontMatterError(
            "`paths:` must be a glob pattern or a list of them", key_line(text, PATHS_KEY)
        )
    return PathRule(file, globs, GlobMatcher.of(globs, base))


def _patterns(value: Any) -> tuple[str, ...]:
    """The patterns of a `paths:` value (a string or a list of strings; empty if anything
    else): braces expanded (bracex, bash's rules), then commas split (`src/**, lib/**`)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return ()
    found: list[str] = []
    for item in items:
        try:
            expanded = bracex.expand(item, limit=MAX_PATTERNS)
        except (bracex.ExpansionLimitException, ValueError):
            expanded = [item]
        found.extend(part.strip() for text in expanded for part in text.split(","))
    return tuple(dict.fromkeys(p for p in found if p))


__all__ = ["GlobMatcher", "Rules", "discover_rules", "read_rule", "rule_paths"]
