"""The Skill tool: the model loads a skill's full instructions when it decides to use it.

Claude Code's name and fields (`Skill {skill, args}`), so hooks and permission rules that name
it carry over. Until the tool is called only each skill's name and description are in the
context (the `skill_listing_delta` attachment); the result carries the SKILL.md body and the
skill's folder, so the files it mentions are read on demand with Read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import BaseModel, Field

from ..tools.base import BaseTool, ToolContext, ToolProgress, ToolResult
from ..tools.builtin._common import StrictInput
from .loader import Skill, SkillSet

DESCRIPTION = """Execute a skill within the main conversation.

Skills are folders of instructions for specialised tasks. The available skills (name and
when to use each) are listed in system-reminder messages in the conversation. When a task
matches a skill's description, or the user types /<skill-name>, call this tool with the
skill's name before doing the task: it returns the skill's full instructions.

- skill: the skill's name, e.g. "release-notes"
- args: optional arguments for the skill, e.g. "v2.3"

The instructions may name other files in the skill's folder: read them with Read when the
instructions call for them, not before. Do not call a skill that is not listed, and do not
call it again once its instructions are in the conversation."""


class SkillInput(StrictInput):
    skill: str = Field(description='The skill name, e.g. "release-notes"')
    args: str | None = Field(default=None, description="Optional arguments for the skill")


def expand_skill(skill: Skill, args: str | None) -> str:
    """The text that loads a skill: where its files are, then its instructions with
    `$ARGUMENTS` replaced (or the arguments appended when it has no placeholder)."""
    body = skill.body()
    args = (args or "").strip()
    if "$ARGUMENTS" in body:
        body = body.replace("$ARGUMENTS", args)
    elif args:
        body = f"{body}\n\nARGUMENTS: {args}"
    return (
        f'<skill name="{skill.name}">\n'
        f"Base directory for this skill: {skill.folder}\n"
        "(Files the instructions mention are relative to it: read them with Read when "
        "needed.)\n\n"
        f"{body}\n</skill>"
    )


class SkillTool(BaseTool[SkillInput]):
    """The Skill tool over a session's skills (re-read on every call: edits take effect)."""

    name = "Skill"
    description = DESCRIPTION
    input_model: type[BaseModel] = SkillInput
    read_only = True
    concurrency_safe = True

    def __init__(self, skills: Callable[[], SkillSet]) -> None:
        self._skills = skills

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        skills = self._skills()
        if skills.get(input.skill) is None:
            known = ", ".join(sorted(skills.skills)) or "none"
            return f"Unknown skill: {input.skill}. Available skills: {known}"
        return None

    def permission_subject(self, input: Any) -> str | None:
        return str(input.skill)

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        skill = self._skills().get(input.skill)
        assert skill is not None  # validate_input checked it
        yield ToolResult(
            content=expand_skill(skill, input.args),
            data={"skill": skill.name, "folder": str(skill.folder)},
        )
