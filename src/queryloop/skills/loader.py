"""Finding and reading skills: folders with a `SKILL.md` (the open Agent Skills format), and
custom commands, Markdown files in a commands folder (Claude Code's `.claude/commands/`).

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
(https://code.claude.com/docs/en/skills: `name` is a display name that defaults to the folder
name, `description` to the first paragraph of the body; personal skills win over project
skills of the same name). A `name` that is not a valid skill name (`Writing Hookify Rules`)
is only a display name: the folder names the skill, as Claude Code names it. Folders:
`$QUERYLOOP_HOME/skills/` and `~/.claude/skills/` (the user's) and `.queryloop/skills/` and
`.claude/skills/` of every folder from the repository root down to `cwd` (the project's, the
closest winning, only in a trusted workspace: a cloned repository's skills are instructions
from a stranger); at one scope
queryloop's folder wins over Claude Code's. `config.discovery` finds the files; this module
reads and parses them.

Claude Code merged custom commands into skills ("a file at `.claude/commands/deploy.md` and a
skill at `.claude/skills/deploy/SKILL.md` both create `/deploy` and work the same way"), and
so does queryloop: a command file is a `Skill` of kind `COMMAND`, named by its path
(`frontend/component.md` is `/frontend:component`), its front matter read with the same
fields. A skill wins over a command of the same name at the same scope.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..config.discovery import (
    SKILL_FILE,
    FileScope,
    FoundCommand,
    SettingSources,
    claude_home,
    command_files,
    commands_in,
    skill_files,
)
from ..config.front_matter import split_front_matter
from ..config.plugins import Plugin
from .options import SkillOptions, parse_options

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_COMMAND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(?::[A-Za-z0-9][A-Za-z0-9_.-]*)*$")


SkillSource = FileScope
"""Where a skill was found: the scope `config.discovery` found its folder at."""


class SkillKind(StrEnum):
    """A skill folder (`<name>/SKILL.md`) or a command file (`<name>.md`)."""

    SKILL = "skill"
    COMMAND = "command"


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill or command: its name, when to use it, where its files are, its options."""

    name: str
    """The name it is invoked by (`/name`, `Skill {"skill": name}`); `a:b` when namespaced."""
    description: str
    folder: Path
    """The skill's folder (a command's: the folder its file is in): `${CLAUDE_SKILL_DIR}`."""
    source: SkillSource
    metadata: Mapping[str, Any]
    """The front matter as written."""
    path: Path | None = None
    """The file its instructions are read from (default: `folder/SKILL.md`)."""
    kind: SkillKind = SkillKind.SKILL
    options: SkillOptions = field(default_factory=SkillOptions)
    variables: Mapping[str, str] = field(default_factory=dict)
    """Placeholders its plugin defines (`${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`)."""
    shell_disabled: bool = False
    """The settings' `disableSkillShellExecution`: its `!` commands are not run."""

    @property
    def file(self) -> Path:
        """Its SKILL.md (a command: its Markdown file)."""
        return self.path or self.folder / SKILL_FILE

    def body(self) -> str:
        """The instructions (the file without its front matter), read now: the file may have
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
    notices: tuple[str, ...] = ()
    """What was not read and why (an untrusted project's skills and commands)."""

    def __bool__(self) -> bool:
        return bool(self.skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name` (a leading `/` is ignored)."""
        return self.skills.get(name.lstrip("/"))

    def listing(self) -> dict[str, str]:
        """Name -> description of what the model may invoke, for the skill-listing delta
        (`disable-model-invocation` keeps a skill out: its description is not in context)."""
        return {
            name: skill.description
            for name, skill in sorted(self.skills.items())
            if not skill.options.disable_model_invocation
        }

    def menu(self) -> dict[str, Skill]:
        """Name -> skill of what the user may type as `/name` (`user-invocable: false` hides
        a skill from the menu), for /help and Tab completion."""
        return {n: s for n, s in sorted(self.skills.items()) if s.options.user_invocable}


def load_skills(
    cwd: Path,
    home: Path,
    *,
    trusted: bool,
    claude: Path | None = None,
    plugins: Sequence[Plugin] = (),
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    shell_disabled: bool = False,
) -> SkillSet:
    """Every usable skill and command in the user's and (if trusted) the project's folders,
    of the scopes `sources` reads, then the plugins' (named `<plugin>:<name>`).
    `shell_disabled` (`disableSkillShellExecution`): none of them runs its `!` commands
    (queryloop has no bundled or managed skills, which Claude Code exempts).

    Order decides a name taken twice: the user's before the project's, and at one scope a
    skill before a command (Claude Code's rule)."""
    claude = claude or claude_home()
    found: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    command_set = command_files(cwd, home, claude, trusted=trusted)
    user_commands, project_commands = _by_scope(sources.keep(command_set.commands))
    skill_set = skill_files(cwd, home, trusted=trusted, claude_dir=claude)
    skills = sources.keep(skill_set.files)
    ordered: list[_Candidate] = [
        *(_Candidate(f.path, f.scope) for f in skills if f.scope is FileScope.USER),
        *(_Candidate(c.path, c.scope, c.name) for c in user_commands),
        *(_Candidate(f.path, f.scope) for f in skills if f.scope is not FileScope.USER),
        *(_Candidate(c.path, c.scope, c.name) for c in project_commands),
        *(c for plugin in plugins for c in _plugin_candidates(plugin)),
    ]
    for candidate in ordered:
        skill = _load_one(candidate, problems)
        if skill is not None and skill.name not in found:
            found[skill.name] = replace(skill, shell_disabled=shell_disabled)
    notices = (*skill_set.notices, *command_set.notices) if sources.project else ()
    return SkillSet(found, tuple(problems), notices)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A file that may be a skill (`command` None) or a command named `command`."""

    path: Path
    scope: FileScope
    command: str | None = None
    namespace: str = ""
    variables: Mapping[str, str] = field(default_factory=dict)


def _plugin_candidates(plugin: Plugin) -> list[_Candidate]:
    """A plugin's skills (`<dir>/<name>/SKILL.md`, or a `SKILL.md` in the dir itself) and
    commands, named `<plugin>:<name>`."""
    found: list[_Candidate] = []
    for folder in (f for f in plugin.skills if f.is_dir()):
        files = [folder / SKILL_FILE] if (folder / SKILL_FILE).is_file() else []
        files += sorted(p / SKILL_FILE for p in folder.iterdir() if (p / SKILL_FILE).is_file())
        found += [
            _Candidate(f, FileScope.PLUGIN, None, plugin.name, plugin.variables) for f in files
        ]
    for path in plugin.commands:
        for command in commands_in(path, FileScope.PLUGIN, plugin.name):
            found.append(
                _Candidate(command.path, FileScope.PLUGIN, command.name, "", plugin.variables)
            )
    return found


def parse_skill(
    text: str,
    folder: Path,
    source: SkillSource,
    *,
    namespace: str = "",
    variables: Mapping[str, str] | None = None,
) -> Skill:
    """A `Skill` from the text of its SKILL.md; ValueError says what is wrong. `namespace`
    (a plugin's name) prefixes its name, `variables` are its plugin's placeholders."""
    meta, body = split_front_matter(text)
    name = _skill_name(str(meta.get("name") or "").strip(), folder.name)
    description = _description(meta, body)
    options = parse_options(meta, variables)
    name = f"{namespace}:{name}" if namespace else name
    return Skill(
        name, description, folder, source, meta, options=options, variables=variables or {}
    )


def _skill_name(declared: str, folder: str) -> str:
    """The name a skill is invoked by: its `name` when that is a valid skill name, else its
    folder's. Claude Code calls `name` a display name and uses "the directory name" without
    one; its hookify plugin's `name: Writing Hookify Rules` skill is `/hookify:writing-rules`.
    ValueError when neither is a valid name."""
    for name in (declared, folder):
        if name and len(name) <= MAX_NAME and _NAME.match(name):
            return name
    raise ValueError(
        f"name {declared or folder!r} must be 1-{MAX_NAME} lowercase letters, digits and single "
        f"hyphens (a `name:` that is not is only a display name; then the folder's name is used)"
    )


def parse_command(
    text: str,
    path: Path,
    name: str,
    source: SkillSource,
    *,
    variables: Mapping[str, str] | None = None,
) -> Skill:
    """A command file as a `Skill`: named by its path (the front matter's `name` is only a
    label, as in Claude Code), described by `description` or its first paragraph."""
    if not _COMMAND_NAME.match(name):
        raise ValueError(
            f"command name {name!r} must be letters, digits, '.', '_' and '-' (':' between "
            "folder levels)"
        )
    meta, body = split_front_matter(text)
    description = _description(meta, body, required=False) or f"(command /{name})"
    options = parse_options(meta, variables)
    return Skill(
        name,
        description,
        path.parent,
        source,
        meta,
        path,
        SkillKind.COMMAND,
        options,
        variables or {},
    )


def _by_scope(
    commands: Sequence[FoundCommand],
) -> tuple[list[FoundCommand], list[FoundCommand]]:
    user = [c for c in commands if c.scope is FileScope.USER]
    return user, [c for c in commands if c.scope is not FileScope.USER]


def _description(meta: Mapping[str, Any], body: str, *, required: bool = True) -> str:
    description = str(meta.get("description") or _first_paragraph(body)).strip()
    if not description and required:
        raise ValueError("no description (front matter `description:` or a first paragraph)")
    return " ".join(description.split())[:MAX_DESCRIPTION]


def _load_one(candidate: _Candidate, problems: list[SkillProblem]) -> Skill | None:
    path, scope, variables = candidate.path, candidate.scope, candidate.variables
    try:
        if candidate.command is not None:
            skill = parse_command(_read(path), path, candidate.command, scope, variables=variables)
        else:
            skill = parse_skill(
                _read(path), path.parent, scope, namespace=candidate.namespace, variables=variables
            )
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(SkillProblem(path, str(exc)))
        return None
    problems.extend(SkillProblem(path, warning) for warning in skill.options.warnings)
    return skill


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
