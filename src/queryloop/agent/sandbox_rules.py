"""The paths of `Read(...)` and `Edit(...)` deny rules, for the Bash sandbox: `denied_paths`.

Claude Code merges them into its sandbox: `filesystem.denyRead` is "also merged with paths
from `Read(...)` deny permission rules", `denyWrite` with `Edit(...)` deny rules
(code.claude.com/docs/en/settings#sandbox-settings, quoted in anthropics/claude-code#55288),
so `python3 -c "print(open('.e'+'nv').read())"` meets the rule the Read tool meets. The
rules are the session's own `RuleSet` (settings and `disallowed_tools`), the one the
permission checker reads, matched by the same patterns (`permissions.paths`).

A pattern names paths three ways here: a literal path (`Read(./.env)`, `Edit(//etc/x)`) is
that path, checked again before every command (a `.env` made later is hidden from the next
command on); `dir/**` is the folder itself, so files made in it later are covered too; any
other glob (`**/.env`, `*.pem`, `secrets/*.key`) is expanded once, at session start, over
the files that exist then, as Claude Code's sandbox runtime expands `denyRead` globs on Linux
(anthropic-experimental/sandbox-runtime, src/sandbox/read-deny-glob.ts). A file such a glob
matches that appears later is not covered by the sandbox (the permission rules still hold for
the file tools and for the command lines they can read).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from ..permissions import EDIT_TOOLS, PermissionRule, RuleSet
from ..permissions.paths import compile_pattern

_GLOB = frozenset("*?[")
DeniedKind = Literal["Read", "Edit"]


def denied_paths(rules: RuleSet, kind: DeniedKind, *, cwd: Path, home: Path) -> list[Path]:
    """The paths the deny rules of `kind` name (Edit: and Write, MultiEdit, NotebookEdit)."""
    tools = EDIT_TOOLS if kind == "Edit" else frozenset({"Read"})
    found: dict[Path, None] = {}
    for rule in rules.deny:
        if rule.tool in tools and rule.content is not None:
            found.update(dict.fromkeys(_rule_paths(rule, cwd=cwd, home=home)))
    return list(found)


def _rule_paths(rule: PermissionRule, *, cwd: Path, home: Path) -> Iterator[Path]:
    content = rule.content or ""
    pattern = compile_pattern(content, root=rule.root or cwd, cwd=cwd, home=home)
    text = content.strip()
    anchored = text.startswith(("/", "~", "./")) or "/" in text.rstrip("/")
    rel = text.lstrip("/").removeprefix("~").removeprefix("./").lstrip("/").rstrip("/")
    parts = rel.split("/") if rel else []
    literal = 0
    while literal < len(parts) and not _GLOB.intersection(parts[literal]):
        literal += 1
    start = pattern.base.joinpath(*parts[:literal]) if anchored else pattern.base
    rest = parts[literal:]
    if anchored and (not rest or rest == ["**"]):
        yield start  # the path itself; `dir/**` the whole folder
        return
    for path in _walk(start):
        if pattern.regex.match(path.relative_to(pattern.base).as_posix()):
            yield path


def _walk(start: Path) -> Iterator[Path]:
    """Every path below `start` (symlinks not followed), `start` first."""
    if not start.is_dir():
        return
    for folder, dirs, files in os.walk(start):
        base = Path(folder)
        for name in (*dirs, *files):
            yield base / name
