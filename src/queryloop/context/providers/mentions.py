"""Phase one: attachments the user's input asks for (@-mentioned files, folders, MCP resources).

Syntax: `@path`, `@path#L10-20`, `@path#L7`, `@"path with spaces"`, `@"path with spaces"#L3-5`,
and `@server:uri` for an MCP resource when the context has a resolver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...messages.types import Attachment
from ..kinds import AttachmentType

if TYPE_CHECKING:
    from ..attachments import AttachmentContext

MAX_FILE_LINES = 2_000
MAX_FILE_CHARS = 256_000
MAX_DIRECTORY_ENTRIES = 200

_MENTION = re.compile(
    r'(?<![\w@])@(?:"(?P<quoted>[^"\n]+)"(?P<qrange>#L\d+(?:-\d+)?)?|(?P<plain>[^\s"]+))'
)
_RANGE = re.compile(r"#L(?P<start>\d+)(?:-(?P<end>\d+))?$")
_MCP = re.compile(r"^(?P<server>[A-Za-z0-9_.-]+):(?P<uri>\S+)$")
_TRAILING = ".,;:!?)]}'"


@dataclass(frozen=True, slots=True)
class Mention:
    """One @-mention: the path as written and an optional 1-based inclusive line range."""

    raw: str
    path: str
    start_line: int | None = None
    end_line: int | None = None


def parse_mentions(text: str) -> list[Mention]:
    """Every @-mention in `text`, in order, without duplicates."""
    found: list[Mention] = []
    for m in _MENTION.finditer(text):
        if m.group("quoted") is not None:
            mention = _with_range(m.group(0), m.group("quoted") + (m.group("qrange") or ""))
        else:
            plain = m.group("plain")
            if not _RANGE.search(plain) and _RANGE.search(plain.rstrip(_TRAILING)):
                plain = plain.rstrip(_TRAILING)  # "see @a.py#L3-5." ends a sentence
            mention = _with_range(m.group(0), plain)
        if mention.path and mention not in found:
            found.append(mention)
    return found


async def at_mentioned_files(input: str, ctx: AttachmentContext) -> list[Attachment]:
    """A `file` attachment per mentioned file, a `directory` attachment per mentioned folder."""
    out: list[Attachment] = []
    for mention in parse_mentions(input):
        path = _existing_path(mention, ctx)
        if path is None:
            continue
        if path.is_dir():
            out.append(directory_attachment(path))
        else:
            attachment = file_attachment(path, mention.start_line, mention.end_line)
            if attachment is not None:
                out.append(attachment)
    return out


async def mcp_resources(input: str, ctx: AttachmentContext) -> list[Attachment]:
    """An `mcp_resource` attachment per `@server:uri` mention the resolver can read."""
    resolver = ctx.mcp_resource_resolver
    if resolver is None:
        return []
    out: list[Attachment] = []
    for mention in parse_mentions(input):
        ref = _MCP.match(mention.path)
        if ref is None or ctx.resolve(mention.path).exists():
            continue
        server, uri = ref.group("server"), ref.group("uri")
        content = await resolver(server, uri)
        out.append(
            Attachment(
                AttachmentType.MCP_RESOURCE, {"server": server, "uri": uri, "content": content}
            )
        )
    return out


def file_attachment(
    path: Path, start_line: int | None = None, end_line: int | None = None
) -> Attachment | None:
    """The lines of a text file (all, or the 1-based inclusive range), capped; None if binary."""
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        return None
    lines = raw.decode("utf-8", errors="replace").splitlines()
    first = max(1, start_line or 1)
    last = min(len(lines), end_line or first) if start_line else len(lines)
    selected = lines[first - 1 : last]
    truncated = len(selected) > MAX_FILE_LINES
    selected = selected[:MAX_FILE_LINES]
    content = "\n".join(selected)
    if len(content) > MAX_FILE_CHARS:
        content, truncated = content[:MAX_FILE_CHARS], True
    data: dict[str, Any] = {
        "path": str(path),
        "content": content,
        "start_line": first,
        "num_lines": len(selected),
        "total_lines": len(lines),
        "truncated": truncated,
    }
    if start_line is not None:  # only a requested range becomes Read's offset/limit
        data["end_line"] = first + len(selected) - 1
    return Attachment(AttachmentType.FILE, data)


def directory_attachment(path: Path) -> Attachment:
    """A sorted listing of a folder (subfolders end in `/`), capped."""
    entries = sorted(path.iterdir(), key=lambda p: p.name)
    names = [e.name + ("/" if e.is_dir() else "") for e in entries[:MAX_DIRECTORY_ENTRIES]]
    return Attachment(
        AttachmentType.DIRECTORY,
        {
            "path": str(path),
            "listing": "\n".join(names),
            "truncated": len(entries) > MAX_DIRECTORY_ENTRIES,
        },
    )


def _with_range(raw: str, spec: str) -> Mention:
    m = _RANGE.search(spec)
    if m is None:
        return Mention(raw=raw, path=spec)
    start = int(m.group("start"))
    end = int(m.group("end")) if m.group("end") else start
    return Mention(raw=raw, path=spec[: m.start()], start_line=start, end_line=max(start, end))


def _existing_path(mention: Mention, ctx: AttachmentContext) -> Path | None:
    """The mentioned path if it exists, also trying without trailing punctuation."""
    candidates = [mention.path]
    stripped = mention.path.rstrip(_TRAILING)
    if stripped and stripped != mention.path:
        candidates.append(stripped)
    for candidate in candidates:
        path = ctx.resolve(candidate)
        if path.exists():
            return path.resolve()
    return None
