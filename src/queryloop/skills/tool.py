"""The Skill tool: the model loads a skill's full instructions when it decides to use it.

Claude Code's name and fields (`Skill {skill, args}`), so hooks and permission rules that name
it carry over. Until the tool is called only each skill's name and description are in the
context (the `skill_listing_delta` attachment); the result carries the skill's body, its
arguments and `!` commands expanded (`skills.expand`), and the skill's folder, so the files it
mentions are read on demand with Read. A skill marked `disable-model-invocation` is the
user's to run: the model is told to ask for `/name` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ..tools.base import BaseTool, PermissionDecision, ToolContext, ToolProgress, ToolResult
from ..tools.builtin._common import StrictInput
from .expand import ShellRunner, run_shell, shell_commands, substitute
from .loader import Skill, SkillKind, SkillSet
from .shell import ThreadShell

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

SKILL_DIR = "CLAUDE_SKILL_DIR"
SESSION_ID = "CLAUDE_SESSION_ID"


class SkillInput(StrictInput):
    skill: str = Field(description='The skill name, e.g. "release-notes"')
    args: str | None = Field(default=None, description="Optional arguments for the skill")


@dataclass(frozen=True, slots=True)
class Rendered:
    """A skill's text as the model gets it, and the part of it that may name files to inline
    (`@path`): the instructions with the arguments in place, not the commands' output."""

    text: str
    references: str


async def render_skill(
    skill: Skill, args: str | None, shell: ShellRunner | None, *, session_id: str = ""
) -> Rendered:
    """The text that loads a skill: its body with the arguments and variables substituted
    (`${CLAUDE_SESSION_ID}` is `session_id`, when given) and its `!` commands run (`shell`;
    None: they are not run, and the text says so); a skill (not a command) says where its
    files are."""
    variables = {SKILL_DIR: str(skill.folder), **skill.variables}
    if session_id:
        variables[SESSION_ID] = session_id
    body = substitute(skill.body(), args or "", names=skill.options.arguments, variables=variables)
    references = body
    for command in shell_commands(body):
        references = references.replace(command, "")
    text = await run_shell(body, shell, disabled=skill.shell_disabled)
    if skill.kind is SkillKind.COMMAND:
        return Rendered(text, references)
    wrapped = (
        f'<skill name="{skill.name}">\n'
        f"Base directory for this skill: {skill.folder}\n"
        "(Files the instructions mention are relative to it: read them with Read when "
        "needed.)\n\n"
        f"{text}\n</skill>"
    )
    return Rendered(wrapped, references)


def thread_shell(ctx: ToolContext) -> ThreadShell | None:
    """The `!` command runner of the thread `ctx` belongs to: its tools, checker and hooks
    (from its subagent host); None where the context has no host."""
    host = ctx.subagents
    if host is None:
        return None
    return ThreadShell(host.tools, ctx, host.permission, host.hooks)


class SkillTool(BaseTool[SkillInput]):
    """The Skill tool over a session's skills (re-read on every call: edits take effect)."""

    name = "Skill"
    description = DESCRIPTION
    input_model: type[BaseModel] = SkillInput
    read_only = True
    concurrency_safe = True

    def __init__(
        self, skills: Callable[[], SkillSet], session_id: Callable[[], str] | None = None
    ) -> None:
        self._skills = skills
        self._session_id = session_id or (lambda: "")

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        skills = self._skills()
        skill = skills.get(input.skill)
        if skill is None:
            known = ", ".join(sorted(skills.listing())) or "none"
            return f"Unknown skill: {input.skill}. Available skills: {known}"
        if skill.options.disable_model_invocation:
            return (
                f"The skill {skill.name} can only be run by the user "
                "(disable-model-invocation): do not carry out its steps yourself; ask the "
                f"user to run /{skill.name} if it is what they want."
            )
        return None

    def permission_subject(self, input: Any) -> str | None:
        return str(input.skill)

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        """A skill with `allowed-tools` gives the model tools without asking: the model may
        not start one on its own say-so (Claude Code asks for such skills, and allows the
        others without approval). `Skill(name)` as an allow rule approves it for good."""
        skill = self._skills().get(input.skill)
        if skill is None or not skill.options.allowed_tools:
            return await super().check_permissions(input, ctx)
        granted = ", ".join(map(str, skill.options.allowed_tools))
        return PermissionDecision(
            "ask", f"the skill {skill.name} would allow {granted} without asking for this prompt"
        )

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        skill = self._skills().get(input.skill)
        assert skill is not None  # validate_input checked it
        ctx.grants.grant(skill.name, skill.options.allowed_tools)  # its `!` lines too
        shell = thread_shell(ctx)
        rendered = await render_skill(skill, input.args, shell, session_id=self._session_id())
        yield ToolResult(
            content=rendered.text,
            data={"skill": skill.name, "folder": str(skill.folder)},
            new_messages=tuple(shell.denials) if shell is not None else (),
        )
