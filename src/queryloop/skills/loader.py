"""Finding and reading skills: folders with a `SKILL.md` (the open Agent Skills format).

A skill is a folder whose `SKILL.md` starts with YAML front matter naming it and saying when
to use it, followed by Markdown instructions; other files in the folder (references,
scripts, templates) are read only when the instructions call for them:

    .queryloop/skills/release-notes/SKILL.md
    ---
    name: release-notes
    description: Turn a list of changes into release notes. Use when asked for a changelog.
    ---
    1. Read `style.md` in this folder.
    ...

Format: https://agentskills.io/specification (`name`: lowercase letters, digits and hyphens,
at most 64 characters; `description`: at most 1024 characters), as Claude Code reads it
(https://code.claude.com/docs/en/skills: `name` defaults to the folder name, `description`
to the first paragraph of the body; personal skills win over project skills of the same
name). Folders: `$QUERYLOOP_HOME/skills/` (the user's) and `<cwd>/.queryloop/skills/` (the
project's, only in a trusted workspace: a cloned repository's skills are instructions from a
stranger). `config.discovery` finds the files; this module reads and parses them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.discovery import SKILL_FILE, FileScope, skill_files

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)^---[ \t]*\r?$\n?", re.S | re.M)


SkillSource = FileScope
"""Where a skill was found: the scope `config.discovery` found its folder at."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its name, when to use it, and where its files are."""

    name: str
    description: str
    folder: Path
    source: SkillSource
    metadata: Mapping[str, Any]

    @property
    def file(self) -> Path:
        """Its SKILL.md."""
        return self.folder / SKILL_FILE

    def body(self) -> str:
        """The instructions (SKILL.md without its front matter), read now: the file may have
        changed since the skill was listed, and the newest version is what the user means."""
        _, body = split_front_matter(_read(self.file))
        return body.strip()


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A SKILL.md that could not be used, and why (shown to the user as a notice)."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"skill {self.path}: {self.reason}"


@dataclass(frozen=True, slots=True)
class SkillSet:
    """The skills of a session by name, and the files that were skipped."""

    skills: Mapping[str, Skill]
    problems: tuple[SkillProblem, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name` (a leading `/` is ignored)."""
        return self.skills.get(name.lstrip("/"))

    def listing(self) -> dict[str, str]:
        """Name -> description, for the skill-listing delta attachment."""
        return {name: skill.description for name, skill in sorted(self.skills.items())}


def load_skills(cwd: Path, home: Path, *, trusted: bool) -> SkillSet:
    """Every usable skill in the user's and (if trusted) the project's skills folder."""
    found: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for file in skill_files(cwd, home, trusted=trusted):
        skill = _load_one(file.path, file.scope, problems)
        if skill is not None and skill.name not in found:
            found[skill.name] = skill
    return SkillSet(found, tuple(problems))


def parse_skill(text: str, folder: Path, source: SkillSource) -> Skill:
    """A `Skill` from the text of its SKILL.md; ValueError says what is wrong."""
    meta, body = split_front_matter(text)
    name = str(meta.get("name") or folder.name).strip()
    if len(name) > MAX_NAME or not _NAME.match(name):
        raise ValueError(
            f"name {name!r} must be 1-{MAX_NAME} lowercase letters, digits and single hyphens"
        )
    description = str(meta.get("description") or _first_paragraph(body)).strip()
    if not description:
        raise ValueError("no description (front matter `description:` or a first paragraph)")
    description = " ".join(description.split())[:MAX_DESCRIPTION]
    return Skill(name, description, folder, source, meta)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, body). No front matter: ({}, text). Bad YAML: ValueError."""
    import yaml

    match = _FRONT_MATTER.match(text.lstrip("\ufeff"))
    if match is None:
        return {}, text
    try:
        data = yaml.safe_load(match.group("yaml"))
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid YAML front matter: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("the front matter must be a YAML mapping (name: ..., description: ...)")
    return data, text[match.end() :]


def _load_one(path: Path, source: SkillSource, problems: list[SkillProblem]) -> Skill | None:
    try:
        return parse_skill(_read(path), path.parent, source)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(SkillProblem(path, str(exc)))
        return None


def _read(path: Path) -> str:
    data = path.read_bytes()[:MAX_SKILL_BYTES]
    return data.decode("utf-8")


def _first_paragraph(body: str) -> str:
    lines: list[str] = []
    for line in body.strip().splitlines():
        if not line.strip():
            if lines:
                break
            continue
        if line.lstrip().startswith("#") and not lines:
            continue  # a heading is not a description
        lines.append(line.strip())
    return " ".join(lines)
