"""Skills: folders with a SKILL.md (the open Agent Skills format), loaded on demand.

`load_skills` finds them, the `skill_listing_delta` attachment announces their names and
descriptions, and the `Skill` tool (or the user's `/<skill-name>`) loads the full text.
"""

from .loader import Skill, SkillProblem, SkillSet, SkillSource, load_skills, parse_skill
from .tool import SkillTool, expand_skill

__all__ = [
    "Skill",
    "SkillProblem",
    "SkillSet",
    "SkillSource",
    "SkillTool",
    "expand_skill",
    "load_skills",
    "parse_skill",
]
