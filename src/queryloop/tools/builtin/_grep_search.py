"""The two Grep backends: ripgrep (when installed) and a pure-Python fallback.

Both take a `GrepQuery` and return output lines in the same shapes:
- files_with_matches: absolute paths;
- count: `path:count` (matching lines per file);
- content: `path:line:text` for matches and `path-line-text` for context (line numbers
  only with `-n`), `--` between separate groups.
The fallback skips VCS and common cache folders but does not read .gitignore files.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..base import ToolError

OutputMode = Literal["content", "files_with_matches", "count"]
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
TYPE_GLOBS: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "go": ("*.go",),
    "rust": ("*.rs",),
    "java": ("*.java",),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.h"),
    "rb": ("*.rb",),
    "md": ("*.md", "*.markdown"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "html": ("*.html", "*.htm"),
    "css": ("*.css", "*.scss"),
    "sh": ("*.sh", "*.bash"),
    "txt": ("*.txt",),
}
RG_TIMEOUT_S = 60.0
SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """One search, backend-neutral."""

    pattern: str
    root: Path
    mode: OutputMode = "files_with_matches"
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    multiline: bool = False
    hidden: Callable[[Path], bool] | None = None
    """Files to leave out (what `Read` deny rules protect); set, Grep uses this backend."""


def split_globs(spec: str | None) -> tuple[str, ...]:
    """'*.{ts,tsx} *.js' -> ('*.{ts,tsx}', '*.js'): split on spaces and on commas outside
    braces."""
    if not spec:
        return ()
    parts, depth, current = [], 0, ""
    for ch in spec:
        depth += (ch == "{") - (ch == "}")
        if (ch.isspace() or ch == ",") and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return tuple(p for p in parts if p)


def expand_braces(pattern: str) -> list[str]:
    """'*.{ts,tsx}' -> ['*.ts', '*.tsx'] (fnmatch has no braces)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    head, tail = pattern[: m.start()], pattern[m.end() :]
    return [x for alt in m.group(1).split(",") for x in expand_braces(head + alt + tail)]


# -- ripgrep ------------------------------------------------------------------------------


def rg_args(q: GrepQuery) -> list[str]:
    """The ripgrep command line for a query."""
    args = ["--no-config", "--hidden", "--glob", "!.git", "--no-messages", "--color", "never"]
    if q.ignore_case:
        args.append("-i")
    if q.multiline:
        args += ["-U", "--multiline-dotall"]
    for g in q.globs:
        args += ["--glob", g]
    if q.file_type:
        args += ["--type", q.file_type]
    if q.mode == "files_with_matches":
        args.append("-l")
    elif q.mode == "count":
        args += ["-c", "--with-filename", "--sort", "path"]
    else:
        args += ["--no-heading", "--with-filename", "--sort", "path"]
        args.append("-n" if q.line_numbers else "--no-line-number")
        args += [f"-B{q.before}", f"-A{q.after}"]
    return [*args, "-e", q.pattern, "--", str(q.root)]


async def search_ripgrep(rg: str, q: GrepQuery) -> list[str]:
    """Run ripgrep; exit 1 means no match, exit 2 without output is an error."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *rg_args(q),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), RG_TIMEOUT_S)
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    lines = out.decode("utf-8", "replace").splitlines()
    if proc.returncode == 2 and not lines:
        raise ToolError(f"Grep failed: {err.decode('utf-8', 'replace').strip()}")
    return lines


# -- pure Python --------------------------------------------------------------------------


def compile_pattern(q: GrepQuery) -> re.Pattern[str]:
    """The query's regex; a bad one is a ToolError the model can fix."""
    flags = re.IGNORECASE if q.ignore_case else 0
    if q.multiline:
        flags |= re.DOTALL | re.MULTILINE
    try:
        return re.compile(q.pattern, flags)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {q.pattern!r}: {exc}") from exc


def _wanted(path: Path, root: Path, q: GrepQuery) -> bool:
    if q.file_type:
        if q.file_type not in TYPE_GLOBS:
            known = ", ".join(sorted(TYPE_GLOBS))
            raise ToolError(f"Unknown file type {q.file_type!r}. Known types: {known}")
        if not any(fnmatch.fnmatch(path.name, g) for g in TYPE_GLOBS[q.file_type]):
            return False
    rel = path.relative_to(root).as_posix() if path != root else path.name
    include = [g for g in q.globs if not g.startswith("!")]
    exclude = [g[1:] for g in q.globs if g.startswith("!")]
    if any(_glob_match(rel, path.name, g) for g in exclude):
        return False
    return not include or any(_glob_match(rel, path.name, g) for g in include)


def _glob_match(rel: str, name: str, pattern: str) -> bool:
    target = rel if "/" in pattern else name
    return any(fnmatch.fnmatch(target, p) for p in expand_braces(pattern))


def _walk(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath) / name


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:SNIFF_BYTES]:
        return None
    return data.decode("utf-8", "replace")


def _matching_lines(text: str, regex: re.Pattern[str], multiline: bool) -> list[int]:
    """0-based indices of lines that hold (part of) a match."""
    if not multiline:
        return [i for i, line in enumerate(text.splitlines()) if regex.search(line)]
    hit: set[int] = set()
    for m in regex.finditer(text):
        first = text.count("\n", 0, m.start())
        last = text.count("\n", 0, max(m.start(), m.end() - 1))
        hit.update(range(first, last + 1))
    return sorted(hit)


def _content_lines(path: Path, text: str, hits: list[int], q: GrepQuery) -> list[str]:
    lines = text.splitlines()
    hit_set = set(hits)
    out: list[str] = []
    last_shown = -2
    for i in hits:
        lo, hi = max(0, i - q.before), min(len(lines) - 1, i + q.after)
        if last_shown >= 0 and lo > last_shown + 1 and (q.before or q.after):
            out.append("--")
        for j in range(max(lo, last_shown + 1), hi + 1):
            sep = ":" if j in hit_set else "-"
            number = f"{j + 1}{sep}" if q.line_numbers else ""
            out.append(f"{path}{sep}{number}{lines[j]}")
        last_shown = max(last_shown, hi)
    return out


def search_python(q: GrepQuery) -> list[str]:
    """The pure-Python backend (same output shapes as ripgrep's)."""
    regex = compile_pattern(q)
    out: list[str] = []
    for path in _walk(q.root):
        if not _wanted(path, q.root, q) or (q.hidden is not None and q.hidden(path)):
            continue
        text = _read_text(path)
        hits = _matching_lines(text, regex, q.multiline) if text is not None else []
        if not hits or text is None:
            continue
        if q.mode == "files_with_matches":
            out.append(str(path))
        elif q.mode == "count":
            out.append(f"{path}:{len(hits)}")
        else:
            if out and (q.before or q.after):
                out.append("--")
            out.extend(_content_lines(path, text, hits, q))
    return out
