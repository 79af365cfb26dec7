"""How a session uses its skills: `/<name> [args]` prompts, the Skill tool, readable folders."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..context.providers.mentions import parse_mentions
from ..messages.constructors import meta_user_message
from ..messages.types import Message
from ..tools.base import Tool
from .expand import ShellRunner
from .loader import Skill, SkillSet, SkillSource
from .tool import SkillTool, render_skill


@dataclass(frozen=True, slots=True)
class Invocation:
    """A prompt that invokes a skill or command: `/<name> [args]`."""

    skill: Skill
    args: str


@dataclass(frozen=True, slots=True)
class InvokedMessages:
    """What an invocation adds after the user's own message: the expanded instructions (a
    meta message) and the records of `!` commands that were refused; `references` is the
    text whose `@path` mentions are inlined like the user's own."""

    messages: list[Message] = field(default_factory=list)
    references: str = ""


def parse_invocation(prompt: str, skills: SkillSet) -> Invocation | None:
    """The invocation when `prompt` is `/<name> [args]` naming a skill the user may invoke
    (not `user-invocable: false`), else None."""
    text = prompt.strip()
    if not text.startswith("/"):
        return None
    head, _, args = text[1:].partition(" ")
    skill = skills.menu().get(head)
    if skill is None:
        return None
    return Invocation(skill, args.strip())


async def invocation_messages(
    invocation: Invocation,
    shell: ShellRunner | None,
    *,
    denials: Callable[[], list[Message]] = list,
    read_denied: Callable[[str], bool] = lambda _: False,
    session_id: str = "",
) -> InvokedMessages:
    """The messages `/<name> [args]` adds after the user's message (kept as typed): the
    skill's instructions, expanded; then `denials()` (the refused `!` commands). `@path`
    references a Read deny rule covers (`read_denied`) are not inlined."""
    rendered = await render_skill(invocation.skill, invocation.args, shell, session_id=session_id)
    references = rendered.references
    for mention in parse_mentions(references):
        if read_denied(mention.path):
            references = references.replace(mention.raw, "")
    return InvokedMessages([meta_user_message(rendered.text), *denials()], references)


def skill_tools(
    skills: SkillSet, *, builtin: bool, session_id: Callable[[], str] | None = None
) -> list[Tool]:
    """The Skill tool when there are skills the model may invoke and the session uses the
    built-in tool set (an SDK caller who lists its own tools gets exactly those);
    `session_id` gives `${CLAUDE_SESSION_ID}`."""
    if not skills.listing() or not builtin:
        return []
    return [SkillTool(lambda: skills, session_id)]


def skill_read_dirs(skills: SkillSet) -> list[Path]:
    """Folders of the user's own and the plugins' skills, so Read may open the files they
    reference (project skills are inside the working folder already)."""
    outside = (SkillSource.USER, SkillSource.PLUGIN)
    folders = {s.folder.resolve() for s in skills.skills.values() if s.source in outside}
    return sorted(folders)
