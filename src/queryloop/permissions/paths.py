"""gitignore-style path patterns for `Read(...)` / `Edit(...)` rules and working-folder checks.

Pattern forms (Claude Code's):

| pattern      | anchored at                                                      |
|--------------|------------------------------------------------------------------|
| `//abs/path` | the filesystem root                                              |
| `~/path`     | the user's home directory                                        |
| `/path`      | the folder the rule's settings file belongs to (its *root*)     |
| `./path`     | the current working directory                                    |
| `path`       | the working directory; without a `/` inside it matches at any depth |

`*` matches within one path segment, `**` across segments; a pattern that names a directory
covers everything below it. Paths are compared both as written (normalised, `..` folded) and
with symlinks resolved: a deny rule matches if either form matches, an allow rule only if the
resolved form does, so a symlink cannot smuggle a path past a deny or into an allow.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A pattern resolved against its base folder."""

    base: Path
    regex: re.Pattern[str]
    covering: re.Pattern[str] | None = None
    """`regex` or any folder above: matches a relative path the pattern covers."""


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, *, root: Path, cwd: Path, home: Path) -> PathPattern:
    """Resolve the pattern's anchor and compile it to a regex over `/`-joined relative paths."""
    text = pattern.strip()
    if text.startswith("//"):
        base, rel, anchored = Path("/"), text[2:], True
    elif text == "~" or text.startswith("~/"):
        base, rel, anchored = home, text[2:], True
    elif text.startswith("/"):
        base, rel, anchored = root, text[1:], True
    elif text.startswith("./"):
        base, rel, anchored = cwd, text[2:], True
    else:
        base, rel, anchored = cwd, text, "/" in text.rstrip("/")
    rel = rel.rstrip("/") or "**"
    prefix = "" if anchored else "(?:.*/)?"
    if rel.endswith("/**"):  # `dir/**` also covers `dir` itself (listing a protected folder)
        body = _glob_to_regex(rel[:-3]) + "(?:/.*)?"
    else:
        body = _glob_to_regex(rel)
    regex = re.compile(f"^{prefix}{body}$", re.DOTALL)
    return PathPattern(base, regex, re.compile(f"^{prefix}{body}(?:/.*)?$", re.DOTALL))


@lru_cache(maxsize=512)
def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 1)) > i:
            body = glob[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def literal_path(path: Path) -> Path:
    """Absolute and normalised (`..` folded) without resolving symlinks."""
    return Path(os.path.normpath(os.path.abspath(path)))


def real_path(path: Path) -> Path:
    """Absolute with every symlink resolved (works for paths that do not exist yet)."""
    return Path(os.path.realpath(path))


def matches(pattern: PathPattern, path: Path, *, resolved_only: bool) -> bool:
    """True when the path (or a directory above it, gitignore-style) matches the pattern."""
    forms = [(real_path(pattern.base), real_path(path))]
    if not resolved_only:
        forms.append((literal_path(pattern.base), literal_path(path)))
    return any(_matches_under(base, p, pattern.regex) for base, p in forms)


def matches_literal(pattern: PathPattern, path: str) -> bool:
    """Like `matches`, for an absolute, normalised path string as written (no filesystem
    access, string operations only: the Bash guard checks every word of a command)."""
    return covers(pattern, _literal_base(pattern.base), path)


def covers(pattern: PathPattern, base: str, path: str) -> bool:
    """Does the pattern, anchored at the folder `base` (a string), cover `path`?"""
    base = base.rstrip("/") or "/"
    if path == base:
        rel = ""
    elif path.startswith(base + "/") or base == "/":
        rel = path[len(base) + 1 :] if base != "/" else path[1:]
    else:
        return False
    covering = pattern.covering or pattern.regex
    return covering.match(rel) is not None


@lru_cache(maxsize=256)
def _literal_base(base: Path) -> str:
    return str(literal_path(base)).rstrip("/") or "/"


def _matches_under(base: Path, path: Path, regex: re.Pattern[str]) -> bool:
    try:
        rel = path.relative_to(base)
    except ValueError:
        return False
    parts = rel.parts
    if not parts:
        return bool(regex.match(""))
    return any(regex.match("/".join(parts[:n])) for n in range(len(parts), 0, -1))


def is_within(path: Path, folders: list[Path]) -> bool:
    """True when `path`, symlinks resolved, lies inside one of `folders` (also resolved)."""
    target = real_path(path)
    for folder in folders:
        base = real_path(folder)
        if target == base or base in target.parents:
            return True
    return False
