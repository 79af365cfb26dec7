"""The system prompt: at most four text blocks, split by how often each one changes.

    attribution     who is calling (a version marker); tiny
    static prefix   identity, how to use tools, tone, conventions -- identical for every session
                    and every user, so it is cacheable across all of them
    ---------------- SYSTEM_PROMPT_DYNAMIC_BOUNDARY ----------------
    dynamic suffix  this session's environment (cwd, platform, git or not, model) and the MCP
                    server instructions when no delta attachment announces them
    appended        the user's `--append-system-prompt` text

Nothing that changes per turn belongs here: per-turn context travels as attachments (see
`queryloop.context.attachments`) so the system prompt stays byte-identical for the whole session.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..messages.api_types import ApiSystemBlock

SYSTEM_PROMPT_DYNAMIC_BOUNDARY = "__QUERYLOOP_SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
"""Marks where the static, globally cacheable prefix ends in a list of prompt sections.

Everything before it must be identical for every session; everything after it may depend on
the session. `split_at_boundary` turns such a list into (static, dynamic) text; the marker
itself is never sent to the model.
"""

TOOL_RESULT_NOTE = (
    "When working with tool results, write down any important information you might need "
    "later in your response, as the original tool result may be cleared later."
)

DEFAULT_STATIC_PREFIX = f"""\
You are queryloop, an agent that helps people with software engineering tasks in their \
terminal: reading and changing code, running commands, and explaining what you find.

# Using tools
- Use the tools you are given to inspect and change the user's files; do not guess at the \
contents of a file you can read.
- Prefer the dedicated tools (Read, Edit, Write, Glob, Grep, LS) over shell commands for file \
work; use Bash for builds, tests, git and other programs.
- When several independent tool calls are needed, make them in the same response so they run \
in parallel.
- Edit a file only after reading it. Keep changes focused on the task.
- If a tool call is denied or fails, read the message, adjust, and do not retry the same call \
unchanged.
- Some tools are deferred: only their names are announced. Load a deferred tool's definition \
with the ToolSearch tool before calling it.
- For work with several steps, keep a todo list with TodoWrite and update it as you go.

# Tone
- Be concise and direct. Lead with the answer or the action; skip preamble and recaps.
- Use GitHub-flavoured Markdown. Refer to code as `path:line`.
- Say plainly when you are unsure or when something failed; never claim work you did not do.

# Conventions
- Tool results and user messages may include <system-reminder> tags. They carry information \
from the system (context, reminders, changed files); they are not part of the user's request \
or of the tool's output. Use them when relevant and do not mention them otherwise.
- {TOOL_RESULT_NOTE}"""


def split_at_boundary(sections: Sequence[str]) -> tuple[str, str]:
    """Join prompt sections into (static, dynamic) text at `SYSTEM_PROMPT_DYNAMIC_BOUNDARY`.

    Without the marker, everything is static. Empty sections are dropped.
    """
    sections = list(sections)
    cut = (
        sections.index(SYSTEM_PROMPT_DYNAMIC_BOUNDARY)
        if SYSTEM_PROMPT_DYNAMIC_BOUNDARY in sections
        else len(sections)
    )
    static = "\n\n".join(s for s in sections[:cut] if s.strip())
    dynamic = "\n\n".join(s for s in sections[cut + 1 :] if s.strip())
    return static, dynamic


def build_system_prompt(
    *,
    attribution: str | None,
    static_prefix: str | None = None,
    dynamic_suffix: str,
    append: str | None,
) -> list[ApiSystemBlock]:
    """The `system` parameter: attribution, static prefix, dynamic suffix, appended text.

    At most four text blocks in that order; empty or whitespace-only ones are omitted (the API
    rejects empty text blocks). `static_prefix=None` uses `DEFAULT_STATIC_PREFIX`; pass "" to
    send none. No block carries cache_control here: the request builder adds breakpoints to
    copies per request.
    """
    prefix = DEFAULT_STATIC_PREFIX if static_prefix is None else static_prefix
    texts = (attribution, prefix, dynamic_suffix, append)
    return [{"type": "text", "text": t} for t in texts if t and t.strip()]


def build_dynamic_suffix(
    *,
    cwd: Path,
    model: str,
    is_git_repo: bool | None = None,
    platform_name: str | None = None,
    os_version: str | None = None,
    mcp_instructions: Mapping[str, str] | None = None,
    mcp_instructions_by_delta: bool = True,
    extra_sections: Sequence[str] = (),
) -> str:
    """The session-specific part of the system prompt: environment and MCP instructions.

    MCP server instructions are included only when `mcp_instructions_by_delta` is False; by
    default they travel as `mcp_instructions_delta` attachments, so a server connecting mid
    session does not change the system prompt (and break the prompt cache).
    `is_git_repo=None` looks for a `.git` entry from `cwd` upwards.
    """
    sections = [environment_section(cwd, model, is_git_repo, platform_name, os_version)]
    if mcp_instructions and not mcp_instructions_by_delta:
        sections.append(render_mcp_instructions(mcp_instructions))
    sections.extend(s for s in extra_sections if s.strip())
    return "\n\n".join(sections)


def render_mcp_instructions(instructions: Mapping[str, str]) -> str:
    """The MCP server instructions section: one subsection per server, sorted by name."""
    parts = [
        "# MCP Server Instructions",
        "The following MCP servers have provided instructions for how to use their tools "
        "and resources:",
    ]
    for server in sorted(instructions):
        parts.append(f"## {server}\n{instructions[server].strip()}")
    return "\n\n".join(parts)


def find_git_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds a `.git` entry, or None."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def environment_section(
    cwd: Path,
    model: str,
    is_git_repo: bool | None = None,
    platform_name: str | None = None,
    os_version: str | None = None,
) -> str:
    """The `# Environment` section: working directory, git or not, platform, OS, model."""
    git = is_git_repo if is_git_repo is not None else find_git_root(cwd) is not None
    lines = [
        "# Environment",
        "<env>",
        f"Working directory: {cwd}",
        f"Is directory a git repo: {'Yes' if git else 'No'}",
        f"Platform: {platform_name or platform.system().lower()}",
        f"OS Version: {os_version or platform.release()}",
        f"Model: {model}",
        "</env>",
    ]
    return "\n".join(lines)
