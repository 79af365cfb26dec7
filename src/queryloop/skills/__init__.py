"""Skills and custom commands: folders with a SKILL.md (the open Agent Skills format) and
Markdown command files (Claude Code's `.claude/commands/`), loaded on demand.

`load_skills` finds them, the `skill_listing_delta` attachment announces their names and
descriptions, and the `Skill` tool (or the user's `/<name>`) loads the full text with its
arguments and `!` commands expanded (`skills.expand`).
"""

from .expand import ShellResult, split_arguments, substitute
from .loader import (
    Skill,
    SkillKind,
    SkillProblem,
    SkillSet,
    SkillSource,
    load_skills,
    parse_command,
    parse_skill,
)
from .options import SkillOptions, parse_options
from .tool import SkillTool, render_skill

__all__ = [
    "ShellResult",
    "Skill",
    "SkillKind",
    "SkillOptions",
    "SkillProblem",
    "SkillSet",
    "SkillSource",
    "SkillTool",
    "load_skills",
    "parse_command",
    "parse_options",
    "parse_skill",
    "render_skill",
    "split_arguments",
    "substitute",
]
