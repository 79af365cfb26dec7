"""Phase two, file-based: files that changed on disk since the agent read them, memory
files (CLAUDE.md, .claude/CLAUDE.md, QUERYLOOP.md, AGENTS.md, CLAUDE.local.md, with their
`@path` imports when the context carries an import policy) in folders below the working
directory the agent touched, and rule files whose `paths:` match a file the agent worked with
(Claude Code's `.claude/rules/`).

Both are stateless in the delta style: what was already announced is read back from earlier
attachments in the history, so nothing is announced twice and a compaction that removed the
old attachments simply allows a fresh announcement.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...messages.blocks import ToolResultBlock, ToolUseBlock
from ...messages.types import AssistantMessage, Attachment, AttachmentMessage, Message, UserMessage
from ...tools.services import FileTextSnapshot
from ..kinds import AttachmentType
from ..memory_imports import expand_imports
from ..scan import attachments_of
from ..user_context import FOLDER_MEMORY_FILES, MemoryFile, read_memory_file

if TYPE_CHECKING:
    from ..attachments import AttachmentContext

# `ToolContext.file_snapshots`: path -> the text the agent last saw. A changed file is
# announced as a diff against the snapshot when the snapshot is of the version the agent last
# saw, otherwise as a snippet of the new content. The provider stores a snapshot of what it
# announced, so the next change to that file is a diff.


MAX_DIFF_LINES = 60
MAX_CHANGED_FILE_BYTES = 512 * 1024
MAX_SNIPPET_LINES = 40
PATH_INPUT_KEYS = ("file_path", "path", "notebook_path")
FILE_INPUT_KEYS = ("file_path", "notebook_path")
"""The inputs naming one file (Read, Write, Edit, MultiEdit, NotebookEdit): what a rule's
`paths:` is matched against (a folder Glob or Grep searched is not a file worked with)."""


async def edited_files(ctx: AttachmentContext, messages: Sequence[Message]) -> list[Attachment]:
    """An `edited_file` attachment per read file whose mtime or size moved since last seen."""
    tc = ctx.tool_context
    if tc is None:
        return []
    announced = _announced_versions(messages)
    snapshots = tc.file_snapshots
    out: list[Attachment] = []
    for key, record in list(tc.read_files.items()):
        seen = max((record.mtime_ns, record.size), announced.get(key, (0, 0)))
        attachment = _changed_file(key, ctx.resolve(key), seen, snapshots)
        if attachment is not None:
            out.append(attachment)
    return out


async def nested_memory(
    ctx: AttachmentContext, messages: Sequence[Message], triggers: Sequence[str]
) -> list[Attachment]:
    """A `nested_memory` attachment per unannounced memory file between `cwd` and a touched path.

    Touched paths: the @-mentions of this turn (`triggers`) and the path inputs of the tool
    calls made since the user's last prompt. Memory at `cwd` and above is in the user context.
    None when the session reads no project files (`ctx.nested_memory` off).
    Before them, each rule of `ctx.path_rules` not announced yet whose patterns match one of
    the files named (`_path_rules`).
    A file's `@path` imports follow it, each announced once (with `parent`), under
    `ctx.memory_imports` (none without one).
    """
    announced = {
        Path(str(m.attachment.data.get("path"))).resolve()
        for m in _attachments(messages, AttachmentType.NESTED_MEMORY)
    }
    files = [*triggers, *_recent_tool_paths(messages, FILE_INPUT_KEYS)]
    out = _path_rules(ctx, files, announced)
    if not ctx.nested_memory:
        return out
    cwd = ctx.cwd.resolve()
    for folder in _touched_folders(ctx, [*triggers, *_recent_tool_paths(messages)], cwd):
        for name, level in FOLDER_MEMORY_FILES:
            path = (folder / name).resolve()
            if path in announced or not path.is_file():
                continue
            content = read_memory_file(path)
            if content and content.strip():
                announced.add(path)
                out.append(_memory_attachment(MemoryFile(path, level, content)))
                out.extend(_imports(ctx, MemoryFile(path, level, content), announced))
    return out


def _path_rules(
    ctx: AttachmentContext, files: Sequence[str], announced: set[Path]
) -> list[Attachment]:
    """A `nested_memory` attachment (with `globs` and `trigger`) per rule not announced yet
    whose `paths:` match one of `files`, with its imports; announced once, like a folder's."""
    out: list[Attachment] = []
    targets = [ctx.resolve(raw) for raw in files]
    for rule in ctx.path_rules:
        path = rule.file.path
        if path in announced:
            continue
        trigger = next((t for t in targets if rule.matcher.matches(t)), None)
        if trigger is None:
            continue
        announced.add(path)
        extra = {"globs": list(rule.globs), "trigger": str(trigger), "level": rule.file.level}
        out.append(_memory_attachment(rule.file, **extra))
        out.extend(_imports(ctx, rule.file, announced))
    return out


def _memory_attachment(file: MemoryFile, **extra: Any) -> Attachment:
    data: dict[str, Any] = {"path": str(file.path), "content": file.content, **extra}
    if file.parent is not None:
        data["parent"] = str(file.parent)
    return Attachment(AttachmentType.NESTED_MEMORY, data)


def _imports(ctx: AttachmentContext, file: MemoryFile, announced: set[Path]) -> list[Attachment]:
    """The files `file` imports, not announced before (refusals are not repeated here: the
    nested file is instructions, the skipped import says nothing to the model)."""
    if ctx.memory_imports is None:
        return []
    refused: list[str] = []
    found = expand_imports(file, ctx.memory_imports, announced, refused)
    return [_memory_attachment(imported) for imported in found]


def _changed_file(
    key: str, path: Path, seen: tuple[int, int], snapshots: dict[str, FileTextSnapshot]
) -> Attachment | None:
    try:
        stat = path.stat()
        version = (stat.st_mtime_ns, stat.st_size)
        # An mtime older than the last one seen is not announced: with no stored state that
        # would repeat every turn (the newer read record would keep "winning").
        if version == seen or version[0] < seen[0]:
            return None
        data: dict[str, Any] = {"path": key, "mtime_ns": version[0], "size": version[1]}
        if version[1] > MAX_CHANGED_FILE_BYTES:
            data["too_large"] = True  # a growing log, say: say so, do not read it every turn
            return Attachment(AttachmentType.EDITED_FILE, data)
        raw = path.read_bytes()
    except FileNotFoundError:
        return None  # deleted files are the tools' business: Read reports them when asked
    if b"\x00" in raw[:8192]:
        return None
    text = raw.decode("utf-8", errors="replace")
    old = snapshots.get(key)
    if old is not None and (old.mtime_ns, old.size) == seen:
        data["diff"] = _short_diff(old.text, text, key)
    else:
        lines = text.splitlines()
        data["snippet"] = "\n".join(lines[:MAX_SNIPPET_LINES])
        data["truncated"] = len(lines) > MAX_SNIPPET_LINES
    snapshots[key] = FileTextSnapshot(version[0], version[1], text)
    return Attachment(AttachmentType.EDITED_FILE, data)


def _short_diff(old: str, new: str, name: str) -> str:
    diff = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"{name} (before)", f"{name} (now)", lineterm=""
        )
    )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(diff)


def _announced_versions(messages: Sequence[Message]) -> dict[str, tuple[int, int]]:
    versions: dict[str, tuple[int, int]] = {}
    for m in _attachments(messages, AttachmentType.EDITED_FILE):
        data = m.attachment.data
        key = str(data.get("path"))
        version = (int(data.get("mtime_ns", 0)), int(data.get("size", 0)))
        versions[key] = max(versions.get(key, (0, 0)), version)
    return versions


def _attachments(messages: Sequence[Message], kind: str) -> list[AttachmentMessage]:
    return attachments_of(messages, kind)


def _recent_tool_paths(
    messages: Sequence[Message], keys: Sequence[str] = PATH_INPUT_KEYS
) -> list[str]:
    """Path inputs (`keys`) of tool calls since the last real user prompt (newest turn
    only)."""
    paths: list[str] = []
    for m in reversed(messages):
        if isinstance(m, UserMessage) and not _is_tool_result_message(m) and not m.is_meta:
            break
        if isinstance(m, AssistantMessage):
            for block in m.content:
                if isinstance(block, ToolUseBlock):
                    paths.extend(
                        str(block.input[k]) for k in keys if isinstance(block.input.get(k), str)
                    )
    return paths


def _is_tool_result_message(m: UserMessage) -> bool:
    return not isinstance(m.content, str) and any(isinstance(b, ToolResultBlock) for b in m.content)


def _touched_folders(ctx: AttachmentContext, paths: Sequence[str], cwd: Path) -> list[Path]:
    """Folders strictly below `cwd` on the way to each path, outermost first, no repeats."""
    folders: list[Path] = []
    for raw in paths:
        target = ctx.resolve(raw).resolve()
        folder = target if target.is_dir() else target.parent
        if folder == cwd or cwd not in folder.parents:
            continue
        chain = [f for f in (folder, *folder.parents) if cwd in f.parents]
        for f in reversed(chain):
            if f not in folders:
                folders.append(f)
    return folders
