"""Skills: real SKILL.md folders, parsed, announced by delta, loaded by the Skill tool or by
`/<skill-name>`, referenced files read on demand — the whole Agent over the local server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_support import agent_on, messages_json
from queryloop.loop import Terminal
from queryloop.skills import SkillSource, load_skills, parse_skill
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

BODY_MARKER = "SKILL-BODY-MARKER-7731"
STYLE_MARKER = "STYLE-GUIDE-MARKER-4410"

RELEASE_NOTES = f"""---
name: release-notes
description: Turn a list of changes into release notes. Use when asked for a changelog.
metadata:
  author: test
---
# Release notes

{BODY_MARKER}
1. Read `style.md` in this skill's folder.
2. Write notes for version $ARGUMENTS.
"""


def write_skill(root: Path, folder: str, text_: str, **files: str) -> Path:
    skill = root / folder
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(text_)
    for name, content in files.items():
        (skill / name).write_text(content)
    return skill


# ---- parsing and discovery ----------------------------------------------------------------


def test_parse_front_matter_and_defaults(tmp_path: Path) -> None:
    skill = parse_skill(RELEASE_NOTES, tmp_path / "release-notes", SkillSource.PROJECT)
    assert skill.name == "release-notes"
    assert skill.description.startswith("Turn a list of changes")
    assert skill.metadata["metadata"] == {"author": "test"}
    # No front matter: the folder names it, the first paragraph describes it.
    text_ = "# Title\n\nFormats SQL files.\nKeeps comments.\n\nMore."
    bare = parse_skill(text_, tmp_path / "sql-fmt", SkillSource.USER)
    assert (bare.name, bare.description) == ("sql-fmt", "Formats SQL files. Keeps comments.")
    with pytest.raises(ValueError, match="lowercase"):
        parse_skill("---\nname: Bad_Name\ndescription: x\n---\n", tmp_path, SkillSource.USER)
    with pytest.raises(ValueError, match="YAML"):
        parse_skill("---\nname: x\n  : y\n---\nbody", tmp_path, SkillSource.USER)


def test_discovery_precedence_and_trust(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    write_skill(home / "skills", "shared", "---\nname: shared\ndescription: mine\n---\nuser")
    write_skill(
        cwd / ".queryloop/skills", "shared", "---\nname: shared\ndescription: theirs\n---\n"
    )
    write_skill(cwd / ".queryloop/skills", "release-notes", RELEASE_NOTES)
    write_skill(cwd / ".queryloop/skills", "broken", "---\nname: x\n  : y\n---\n")
    untrusted = load_skills(cwd, home, trusted=False)
    assert list(untrusted.skills) == ["shared"]  # a stranger's project skills are not loaded
    trusted = load_skills(cwd, home, trusted=True)
    assert sorted(trusted.skills) == ["release-notes", "shared"]
    assert trusted.skills["shared"].description == "mine"  # personal wins over project
    assert [p.path.parent.name for p in trusted.problems] == ["broken"]


# ---- end to end ---------------------------------------------------------------------------


async def test_model_invokes_a_skill_and_reads_its_reference_on_demand(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    folder = write_skill(project / ".queryloop/skills", "release-notes", RELEASE_NOTES,
                         **{"style.md": f"{STYLE_MARKER}: bullet points, past tense."})  # fmt: skip
    script: list[Turn] = [
        turn(tool_use("Skill", {"skill": "release-notes", "args": "v2.3"})),
        turn(tool_use("Read", {"file_path": str(folder / "style.md")})),
        turn(text("- Fixed the parser.")),
        turn(text("Second answer.")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home, trust=True)
        result = await agent.run("Write release notes for v2.3")
        second = await agent.run("thanks")
        await agent.aclose()
        bodies = server.requests
    assert result.terminal is Terminal.COMPLETED and second.text == "Second answer."
    first = messages_json(bodies[0])
    # Announced: name and description only; the tool is offered with Claude Code's fields.
    assert "release-notes: Turn a list of changes into release notes." in first
    assert BODY_MARKER not in first and STYLE_MARKER not in first
    skill_tool = next(t for t in bodies[0]["tools"] if t["name"] == "Skill")
    assert set(skill_tool["input_schema"]["properties"]) == {"skill", "args"}
    # Loaded when invoked: the body, its folder, the arguments in place of $ARGUMENTS.
    loaded = messages_json(bodies[1])
    assert BODY_MARKER in loaded and "notes for version v2.3" in loaded
    assert f"Base directory for this skill: {folder}" in loaded
    assert STYLE_MARKER not in loaded
    assert STYLE_MARKER in messages_json(bodies[2])  # the referenced file, read when needed
    # The listing is a delta: announced once, not again on the next prompt.
    assert messages_json(bodies[3]).count("release-notes: Turn a list") == 1
    assert all(not v for v in server.violations)


async def test_user_types_slash_skill_name(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write_skill(home / "skills", "release-notes", RELEASE_NOTES,
                **{"style.md": STYLE_MARKER})  # fmt: skip
    folder = home / "skills" / "release-notes"
    script = [
        turn(tool_use("Read", {"file_path": str(folder / "style.md")})),
        turn(text("Notes written.")),
    ]
    with MessagesServer(script) as server:
        # default permission mode, headless: a Read outside the working folders would be
        # denied; the user's skills folder is readable.
        agent = agent_on(server, project, home)
        result = await agent.run("/release-notes v9")
        await agent.aclose()
        bodies = server.requests
    assert result.text == "Notes written."
    first = messages_json(bodies[0])
    assert "/release-notes v9" in first
    assert BODY_MARKER in first and "notes for version v9" in first
    assert STYLE_MARKER in messages_json(bodies[1])
    assert "denied" not in messages_json(bodies[1]).lower()


async def test_untrusted_project_skills_are_not_offered(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    write_skill(project / ".queryloop/skills", "release-notes", RELEASE_NOTES)
    with MessagesServer([turn(text("ok"))]) as server:
        agent = agent_on(server, project, home, trust=False)
        await agent.run("hi")
        await agent.aclose()
        body = server.requests[0]
    assert "release-notes" not in json.dumps(body)
    assert all(t["name"] != "Skill" for t in body.get("tools", []))
