"""A corpus of Claude Code settings files in the shapes real projects use (written for these
tests, in that style: plugins, status lines, hooks with args/if/statusMessage, sandbox,
permissions with the open-quote allow rules Claude Code writes itself, additional directories,
env, MCP approvals, Claude Code's other modes and keys). Issue 22 found 12% of 204 such files
made queryloop refuse to start; each of these must load without an error, and every key
queryloop does not use must be named in exactly one warning.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from queryloop.config import Settings, Severity, load_settings, load_workspace
from queryloop.config.claude_settings import (
    CLAUDE_IGNORED,
    CLAUDE_NOT_APPLICABLE,
    IGNORED_NOTE,
)
from queryloop.config.settings import TOP_LEVEL_KEYS
from queryloop.hooks import CommandHook, HookEvent

CORPUS = sorted((Path(__file__).parent / "fixtures" / "claude_settings").glob("*.json"))
SILENT = TOP_LEVEL_KEYS | CLAUDE_NOT_APPLICABLE


def named(key: str, text: str) -> int:
    return len(re.findall(rf"(?<![A-Za-z]){re.escape(key)}(?![A-Za-z])", text))


def test_the_corpus_is_as_large_as_promised() -> None:
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("fixture", CORPUS, ids=lambda p: p.stem)
@pytest.mark.parametrize("where", ["project", "local", "user"])
def test_each_file_loads_and_names_what_it_ignores(
    fixture: Path, where: str, tmp_path: Path
) -> None:
    project, home, claude = tmp_path / "proj", tmp_path / "home", tmp_path / "claude"
    home.mkdir()
    target = {
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
        "user": claude / "settings.json",
    }[where]
    target.parent.mkdir(parents=True)
    project.mkdir(exist_ok=True)
    shutil.copy(fixture, target)
    settings = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert settings.errors == (), [str(e) for e in settings.errors]
    warnings = "\n".join(str(p) for p in settings.problems if p.severity is Severity.WARNING)
    about_keys = "\n".join(
        p.message
        for p in settings.problems
        if p.message.startswith(("unknown key '", IGNORED_NOTE))
    )
    data = json.loads(fixture.read_text())
    for key in data:
        expected = 0 if key in SILENT else 1
        assert named(key, about_keys) == expected, (key, warnings)
    for rule in data.get("permissions", {}).get("allow", []):
        if rule.count("'") % 2 or rule.count('"') % 2:  # an open quote: dropped, named once
            assert warnings.count(rule) == 1 and "dropped" in warnings
    ws = load_workspace(project, user_home=home, claude_dir=claude, trust_override=True)
    assert ws.settings.rules == settings.rules


def test_the_corpus_covers_what_real_files_hold() -> None:
    keys = set()
    for fixture in CORPUS:
        keys.update(json.loads(fixture.read_text()))
    assert {"enabledPlugins", "extraKnownMarketplaces", "statusLine", "sandbox", "hooks"} <= keys
    assert {"enableAllProjectMcpServers", "outputStyle", "attribution", "autoMode"} <= keys
    assert keys & CLAUDE_IGNORED and keys & CLAUDE_NOT_APPLICABLE


def load(name: str, tmp_path: Path) -> Settings:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    shutil.copy(CORPUS[[p.stem for p in CORPUS].index(name)], project / ".claude" / "settings.json")
    return load_settings(
        project, user_home=tmp_path / "home", trusted=True, claude_dir=tmp_path / "claude"
    )


def test_what_changes_a_hook_is_kept(tmp_path: Path) -> None:
    (hook,) = load("02-python-service", tmp_path).hooks.hooks_for(HookEvent.POST_TOOL_USE, "Edit")
    assert isinstance(hook, CommandHook)
    assert hook.args == ("run", "ruff", "format", "--quiet", ".")
    assert hook.status_message == "Formatting with ruff" and hook.timeout == 60
    settings = load("03-monorepo-sandbox", tmp_path / "b")
    (hook,) = settings.hooks.hooks_for(HookEvent.PRE_TOOL_USE, "Bash")
    assert (
        isinstance(hook, CommandHook)
        and hook.condition is not None
        and str(hook.condition) == "Bash(git commit *)"
    )


def test_what_a_hook_cannot_do_is_named(tmp_path: Path) -> None:
    text = "\n".join(map(str, load("08-hooks-everywhere", tmp_path).problems))
    assert "'agent' hooks are not supported" in text
    text = "\n".join(map(str, load("15-observability-hooks", tmp_path / "b").problems))
    assert "'mcp_tool' hooks are not supported" in text and "TeammateIdle" in text
