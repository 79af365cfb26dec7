"""`@path` imports in memory files (Claude Code's CLAUDE.md syntax, code.claude.com/docs/en/memory,
"Import additional files").

A memory file may pull in other files with `@path/to/file` anywhere in its text. The rules, as
Claude Code documents them:

- a relative path is relative to the file that contains the import (not the working folder);
  `@~/…` is in the home folder; `@/…` is absolute;
- imported files may import others, at most five hops deep;
- an `@…` inside a Markdown code span or code block is not an import.

Each imported file becomes a memory file of its own, right after the file that imports it (the
`@path` line stays in the importer's text, as in Claude Code), with the same level; a file
already read (a cycle, or a file imported twice) is read once. A missing file is no import:
`@someone` in prose names nothing. Which imports are followed at all is the caller's
`ImportPolicy`: a project's memory may reach outside the project only in a trusted folder
(Claude Code asks once per project before it loads such "external imports"), and no memory
file imports a file a Read deny rule covers.

Code spans and blocks are found by a real Markdown parse: markdown-it-py (CommonMark, the
parser `rich` already brings), not by counting backticks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .user_context import MemoryFile, read_memory_file

MAX_IMPORT_DEPTH = 5
"""Hops from a discovered memory file (Claude Code: "a maximum depth of five hops")."""
_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")
_PATH_START = re.compile(r"^[A-Za-z0-9._-]")
_BINARY_PROBE = 8192


def _never(_path: Path) -> bool:
    return False


@dataclass(frozen=True)
class ImportPolicy:
    """Which `@path` imports are followed.

    `project_root`: the repository (git root, else the working folder); a project's memory
    file importing from outside it is an external import, followed only when `external`
    (the folder is trusted). `denied(path)`: True when a Read deny rule covers the file.
    User and managed memory (the user's own files) may import from anywhere.
    """

    project_root: Path
    external: bool
    denied: Callable[[Path], bool] = field(default=_never)

    def refusal(self, importer: MemoryFile, target: Path) -> str | None:
        """Why `importer` may not import `target`, or None when it may."""
        skipped = f"{target} is not imported into memory (from {importer.path})"
        if self.denied(target):
            return f"{skipped}: a deny rule covers it"
        if importer.level in ("user", "managed") or self.external:
            return None
        if target == self.project_root or self.project_root in target.parents:
            return None
        return f"{skipped}: it is outside the project and {self.project_root} is not trusted"


def import_paths(text: str) -> list[str]:
    """The `@path` imports written in `text`, in order, outside code spans and blocks."""
    if "@" not in text:
        return []  # most memory files: no parse, no parser import
    from markdown_it import MarkdownIt

    found: list[str] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "inline" or not token.children:
            continue  # fences, indented code and HTML blocks hold no imports
        for child in token.children:
            if child.type == "text":
                found.extend(_paths_in(child.content))
    return found


def resolve_import(raw: str, importer: Path) -> Path:
    """Where `@raw` in `importer` points: `~/` the home folder, `/` absolute, anything else
    relative to the importer's folder."""
    if raw.startswith("~/"):
        return Path.home() / raw[2:]
    path = Path(raw)
    return path if path.is_absolute() else importer.parent / path


def expand_imports(
    file: MemoryFile,
    policy: ImportPolicy,
    seen: set[Path],
    notices: list[str],
    depth: int = 0,
) -> Iterator[MemoryFile]:
    """The files `file` imports, depth first, each followed by its own imports; `seen` holds
    the resolved paths already read (and gets these), `notices` hears of refused imports."""
    if depth >= MAX_IMPORT_DEPTH:
        return
    for raw in import_paths(file.content):
        target = _existing(resolve_import(raw, file.path))
        if target is None or target in seen:
            continue
        refusal = policy.refusal(file, target)
        if refusal is not None:
            notices.append(refusal)
            continue
        content = _text(target)
        if content is None:
            continue
        seen.add(target)
        imported = MemoryFile(target, file.level, content, parent=file.path)
        yield imported
        yield from expand_imports(imported, policy, seen, notices, depth + 1)


def _paths_in(text: str) -> Iterator[str]:
    for match in _IMPORT.finditer(text):
        raw = match.group(1).split("#", 1)[0].replace("\\ ", " ")
        if _looks_like_path(raw):
            yield raw


def _looks_like_path(raw: str) -> bool:
    if raw.startswith(("./", "../", "~/")):
        return True
    if raw.startswith("/"):
        return raw != "/"
    return bool(_PATH_START.match(raw))


def _existing(path: Path) -> Path | None:
    try:
        resolved = path.resolve()
        return resolved if resolved.is_file() else None
    except OSError:
        return None


def _text(path: Path) -> str | None:
    """The file's text, or None for a binary file (NUL bytes) or an unreadable one."""
    try:
        with path.open("rb") as fh:
            if b"\x00" in fh.read(_BINARY_PROBE):
                return None
    except OSError:
        return None
    content = read_memory_file(path)
    return content if content is not None and content.strip() else None
