"""How a session uses its skills: the Skill tool, `/<skill-name>` prompts, readable folders."""

from __future__ import annotations

from pathlib import Path

from ..messages.constructors import meta_user_message
from ..messages.types import Message
from ..tools.base import Tool
from .loader import SkillSet, SkillSource
from .tool import SkillTool, expand_skill


def parse_skill_command(prompt: str, skills: SkillSet) -> tuple[str, str] | None:
    """(skill name, arguments) when `prompt` is `/<skill-name> [args]`, else None."""
    text = prompt.strip()
    if not text.startswith("/"):
        return None
    head, _, args = text[1:].partition(" ")
    if skills.get(head) is None:
        return None
    return head, args.strip()


def skill_command_messages(prompt: str, skills: SkillSet) -> list[Message]:
    """For `/<skill-name> [args]`: a meta message with the skill's instructions, after the
    user's own message (kept as typed). Any other prompt: nothing."""
    parsed = parse_skill_command(prompt, skills)
    if parsed is None:
        return []
    skill = skills.get(parsed[0])
    assert skill is not None
    return [meta_user_message(expand_skill(skill, parsed[1]))]


def skill_tools(skills: SkillSet, *, builtin: bool) -> list[Tool]:
    """The Skill tool when there are skills and the session uses the built-in tool set (an
    SDK caller who lists its own tools gets exactly those)."""
    if not skills or not builtin:
        return []
    return [SkillTool(lambda: skills)]


def skill_read_dirs(skills: SkillSet) -> list[Path]:
    """Folders of the user's own skills, so Read may open the files they reference (project
    skills are inside the working folder already)."""
    folders = {s.folder.resolve() for s in skills.skills.values() if s.source is SkillSource.USER}
    return sorted(folders)
