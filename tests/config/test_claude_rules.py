"""Claude Code's rule files as memory (issue 22, item 1): `~/.claude/rules/**/*.md` and
`.claude/rules/**/*.md`, at start-up without `paths:`, attached once a matching file is worked
with when they have it (code.claude.com/docs/en/memory#organize-rules-with-claude-rules).
Real files in tmp folders, an Agent against the local Messages server."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from agent_support import agent_on as shared_agent_on
from agent_support import messages_json
from file_support import write_text as write
from queryloop import Agent
from queryloop.config.memory import discover_memory
from queryloop.config.rules import GlobMatcher, discover_rules
from queryloop.config.settings import claude_protected_entries
from queryloop.permissions.protected import protected_paths
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, text, tool_use, turn

PY_RULE = '---\npaths:\n  - "src/**/*.py"\n---\nPY-RULE: type every function.\n'


def claude_dir() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"])


def project_with_rules(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    write(project / "README.txt", "hello\n")
    write(project / "src" / "app" / "mod.py", "x = 1\n")
    write(project / "docs" / "notes.py", "y = 2\n")
    write(project / ".claude" / "rules" / "general.md", "PROJECT-RULE: small commits.\n")
    write(project / ".claude" / "rules" / "lang" / "python.md", PY_RULE)
    return project


agent_on = partial(shared_agent_on, permission_mode="acceptEdits")


async def test_start_up_rules_load_and_a_path_rule_waits_for_a_matching_file(
    tmp_path: Path, home: Path
) -> None:
    project = project_with_rules(tmp_path)
    write(
        claude_dir() / "rules" / "style.md", "---\ndescription: tone\n---\nUSER-RULE: be terse.\n"
    )
    script = [
        turn(tool_use("Read", {"file_path": "README.txt"})),
        turn(tool_use("Read", {"file_path": "docs/notes.py"})),  # .py, but not under src/
        turn(tool_use("Read", {"file_path": "src/app/mod.py"})),
        turn(text("Done.")),
        turn(tool_use("Edit", {"file_path": "src/app/mod.py", "old_string": "1",
                               "new_string": "2"})),
        turn(text("Edited.")),
    ]  # fmt: skip
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home, trust=True)
        await agent.run("read some files")
        await agent.run("now edit mod.py")
        await agent.aclose()
        bodies = server.requests
    first = messages_json(bodies[0])
    assert "USER-RULE" in first and "PROJECT-RULE" in first
    assert first.index("USER-RULE") < first.index("PROJECT-RULE")
    assert "description: tone" not in first  # the front matter never reaches the model
    for body in bodies[:3]:  # nothing matched yet: README.txt, then docs/notes.py
        assert "PY-RULE" not in messages_json(body)
    after = messages_json(bodies[3])
    assert after.count("PY-RULE") == 1 and "src/**/*.py" not in after
    assert str(project / ".claude" / "rules" / "lang" / "python.md") in after
    for body in bodies[4:]:  # announced once, also across prompts
        assert messages_json(body).count("PY-RULE") == 1


async def test_path_rule_announced_once_after_resume(tmp_path: Path, home: Path) -> None:
    project = project_with_rules(tmp_path)
    read = turn(tool_use("Read", {"file_path": "src/app/mod.py"}))
    with MessagesServer([read, turn(text("one"))]) as server:
        agent = agent_on(server, project, home, trust=True)
        await agent.run("read mod.py")
        session_id = agent.session_id
        await agent.aclose()
    with MessagesServer([read, turn(text("two"))]) as server:
        agent = Agent.resume(
            session_id, "claude-sonnet-5-5", base_url=server.base_url, cwd=project, home=home,
            trust=True, retry=RetryPolicy(max_retries=0, base_delay=0.01),
        )  # fmt: skip
        await agent.run("read it again")
        await agent.aclose()
        bodies = server.requests
    assert all(messages_json(body).count("PY-RULE") == 1 for body in bodies)


async def test_an_untrusted_projects_rules_are_not_read_with_a_notice(
    tmp_path: Path, home: Path
) -> None:
    project = project_with_rules(tmp_path)
    write(claude_dir() / "rules" / "style.md", "USER-RULE: be terse.\n")
    script = [turn(tool_use("Read", {"file_path": "src/app/mod.py"})), turn(text("ok"))]
    told: list[str] = []
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home, trust=False, on_notice=told.append)
        await agent.run("read mod.py")
        await agent.aclose()
        bodies = server.requests
    assert "USER-RULE" in messages_json(bodies[0])
    for body in bodies:
        assert "PROJECT-RULE" not in messages_json(body) and "PY-RULE" not in messages_json(body)
    (notice,) = [n for n in told if "not trusted" in n]  # one notice, counting them
    assert "rule files" in notice and "queryloop trust --show" in notice


async def test_bad_front_matter_is_a_warning_naming_file_and_line(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    bad = write(
        project / ".claude" / "rules" / "bad.md", "---\nname: x\npaths: [oops\n  more\n---\nBAD\n"
    )
    kind = write(project / ".claude" / "rules" / "kind.md", "---\n\npaths: 3\n---\nKIND\n")
    write(project / ".claude" / "rules" / "ok.md", "OK-RULE\n")
    told: list[str] = []
    with MessagesServer([turn(text("fine"))]) as server:
        agent = agent_on(server, project, home, trust=True, on_notice=told.append)
        result = await agent.run("hi")
        await agent.aclose()
        first = messages_json(server.requests[0])
    assert result.text == "fine" and "OK-RULE" in first
    assert "BAD" not in first and "KIND" not in first
    notices = "\n".join(told)
    assert f"{bad}:3: rule file not loaded: invalid YAML front matter" in notices
    assert f"{kind}:3: rule file not loaded: `paths:`" in notices


def test_setting_sources_decide_which_rules_are_read(tmp_path: Path) -> None:
    project = project_with_rules(tmp_path)
    write(claude_dir() / "rules" / "style.md", "USER-RULE\n")
    from queryloop.config.discovery import SettingSources

    def contents(sources: SettingSources) -> list[str]:
        files, rules = discover_memory(
            project, user_home=tmp_path / "home", sources=sources, trusted=True
        )
        return [f.content.strip() for f in files] + [r.file.content.strip() for r in rules]

    assert contents(SettingSources.of(["user"])) == ["USER-RULE"]
    assert contents(SettingSources.of(["project"])) == [
        "PROJECT-RULE: small commits.",
        "PY-RULE: type every function.",
    ]


def test_rules_import_files_and_patterns_take_claude_codes_forms(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write(project / "docs" / "api.md", "IMPORTED-API-NOTES\n")
    rules = project / ".claude" / "rules"
    write(rules / "api.md", "See @../../docs/api.md for the API.\n")
    write(rules / "web.md", "---\npaths: src/**/*.{ts,tsx}, lib/**\n---\nWEB\n")
    write(rules / "root.md", "---\npaths: ['*.md']\n---\nROOT-MD\n")
    files, conditional = discover_memory(project, user_home=tmp_path / "home", trusted=True)
    assert [f.content.strip() for f in files] == ["See @../../docs/api.md for the API.",
                                                  "IMPORTED-API-NOTES"]  # fmt: skip
    by_text = {r.file.content.strip(): r for r in conditional}
    web, root = by_text["WEB"], by_text["ROOT-MD"]
    assert sorted(web.globs) == ["lib/**", "src/**/*.ts", "src/**/*.tsx"]
    assert web.matcher.matches(project / "src" / "a" / "b.tsx")
    assert web.matcher.matches(project / "lib" / "deep" / "x.c")
    assert not web.matcher.matches(project / "src" / "a" / "b.js")
    assert root.matcher.matches(project / "README.md")
    assert not root.matcher.matches(project / "docs" / "api.md")  # `*` stays in one folder
    assert GlobMatcher.of(["**/*.go"], project).matches(project / "a" / "b" / "c.go")


def test_an_unquoted_glob_that_yaml_reads_as_an_alias_is_the_glob(tmp_path: Path) -> None:
    """`paths: **/*.ts` is not valid YAML (`*` starts an alias) but Claude Code loads it
    (anthropics/claude-code#17204), and its users write it so: read it as the glob."""
    project = tmp_path / "proj"
    rules = project / ".claude" / "rules"
    write(rules / "ts.md", "---\npaths: **/*.ts\n---\nTS\n")
    write(rules / "list.md", "---\npaths:\n  - *.md\n  - src/**/*.py\n---\nLIST\n")
    write(rules / "alias.md", "---\nbase: &b x\npaths: *b\n---\nALIAS\n")  # valid YAML
    files, conditional = discover_memory(project, user_home=tmp_path / "home", trusted=True)
    by_text = {r.file.content.strip(): r for r in conditional}
    assert sorted(by_text) == ["ALIAS", "LIST", "TS"] and not files
    assert by_text["TS"].globs == ("**/*.ts",)
    assert by_text["TS"].matcher.matches(project / "web" / "app.ts")
    assert sorted(by_text["LIST"].globs) == ["*.md", "src/**/*.py"]
    assert by_text["ALIAS"].globs == ("x",)  # a real alias keeps its YAML meaning


def test_rule_files_are_protected_paths(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "user"
    protected = protected_paths(
        [project], home=home, config_home=home / ".queryloop", managed_settings=tmp_path / "m",
        extra=claude_protected_entries(),
    )  # fmt: skip
    for path in (
        project / ".claude" / "rules" / "new.md",
        project / ".claude" / "rules" / "deep" / "x.md",
        project / "pkg" / ".claude" / "rules" / "x.md",
        home / ".claude" / "rules" / "x.md",
        claude_dir() / "rules" / "x.md",
    ):
        assert protected.find(path) is not None, path


def test_discover_rules_lists_nothing_for_an_untrusted_project(tmp_path: Path) -> None:
    project = project_with_rules(tmp_path)
    found = discover_rules(project, user_home=tmp_path / "home", trusted=False)
    assert not found.project and not found.conditional
    assert found.notices == ()  # counted in the folder's one notice (`project_config`)
