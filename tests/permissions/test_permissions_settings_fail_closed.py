"""Settings fail closed: a file that cannot be used stops the run, naming file:line:column.

Issue 11's reproduction: a trailing comma in `.queryloop/settings.json` used to skip the whole
file (and its deny rules) with a notice, and the model then read `.env`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from queryloop.config import SettingsError, Severity, load_settings, load_workspace
from queryloop.errors import ConfigError

TRAILING_COMMA = '{"permissions": {"deny": ["Read(./.env)"],}}'


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    project, home = tmp_path / "repo", tmp_path / "qlhome"
    project.mkdir()
    home.mkdir()
    monkeypatch.setenv("QUERYLOOP_MANAGED_SETTINGS", str(tmp_path / "managed.json"))
    return project, home


def scope_path(scope: str, project: Path, home: Path) -> Path:
    return {
        "user": home / "settings.json",
        "project": project / ".queryloop" / "settings.json",
        "local": project / ".queryloop" / "settings.local.json",
        "managed": project.parent / "managed.json",
    }[scope]


@pytest.mark.parametrize("scope", ["user", "project", "local", "managed"])
@pytest.mark.parametrize("trusted", [True, False])
def test_the_issue_trailing_comma_stops_the_run(
    dirs: tuple[Path, Path], scope: str, trusted: bool
) -> None:
    project, home = dirs
    path = scope_path(scope, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TRAILING_COMMA)
    with pytest.raises(SettingsError) as caught:
        load_workspace(project, user_home=home, trust_override=trusted)
    assert isinstance(caught.value, ConfigError)
    assert caught.value.problems[0].startswith(f"{path}:1:43: invalid JSON")
    assert "nothing was run" in str(caught.value)


def test_unreadable_file_is_an_error(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    (project / ".queryloop" / "settings.json").mkdir(parents=True)  # a folder: cannot be read
    with pytest.raises(SettingsError, match=r"settings.json:1:1: cannot read settings file"):
        load_workspace(project, user_home=home)


def test_not_an_object_and_wrong_types_are_errors(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    (home / "settings.json").write_text("[1]")
    with pytest.raises(SettingsError, match="must be a JSON object"):
        load_workspace(project, user_home=home)
    (home / "settings.json").write_text(json.dumps({"permissions": {"deny": "Bash(rm:*)"}}))
    with pytest.raises(SettingsError, match=r"settings.json:1:\d+: 'deny' must be a list"):
        load_workspace(project, user_home=home)


@pytest.mark.parametrize("rule", ["Bad Rule(", "Bash(echo 'unbalanced:*)", "(nothing)"])
def test_a_rule_that_does_not_parse_is_an_error_naming_it(
    dirs: tuple[Path, Path], rule: str
) -> None:
    project, home = dirs
    (home / "settings.json").write_text(json.dumps({"permissions": {"deny": [rule]}}, indent=1))
    with pytest.raises(SettingsError) as caught:
        load_workspace(project, user_home=home)
    assert f"invalid permission rule {rule!r}" in str(caught.value)
    assert f"{home / 'settings.json'}:4:" in str(caught.value)


def test_unknown_keys_are_warnings_and_the_run_goes_on(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    data = {"permissions": {"deny": ["Read(./.env)"], "denyy": ["x"]}, "modle": "m"}
    (home / "settings.json").write_text(json.dumps(data))
    ws = load_workspace(project, user_home=home)
    assert [str(r) for r in ws.settings.rules.deny] == ["Read(./.env)"]
    problems = load_settings(project, user_home=home, trusted=True).problems
    assert {p.severity for p in problems} == {Severity.WARNING}
    notices = "\n".join(ws.notices)
    assert "unknown key 'modle'" in notices and "unknown key in 'permissions': 'denyy'" in notices


def test_managed_settings_apply_and_win(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    (home / "settings.json").write_text(json.dumps({"model": "user-model"}))
    managed = {"permissions": {"deny": ["Bash(curl:*)"]}, "model": "managed-model"}
    (project.parent / "managed.json").write_text(json.dumps(managed))
    ws = load_workspace(project, user_home=home, trust_override=False)
    assert [str(r) for r in ws.settings.rules.deny] == ["Bash(curl:*)"]
    assert ws.settings.model == "managed-model"


def test_missing_or_invalid_mcp_config_is_an_error(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    missing = project / "nope.json"
    with pytest.raises(SettingsError, match=r"nope.json:1:1: --mcp-config file not found"):
        load_workspace(project, user_home=home, mcp_config_files=[missing])
    broken = project / "broken.json"
    broken.write_text('{"mcpServers": {,}}')
    with pytest.raises(SettingsError, match=r"broken.json:1:17: invalid JSON"):
        load_workspace(project, user_home=home, mcp_config_files=[broken])


def test_an_untrusted_projects_broken_mcp_json_is_only_a_notice(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    (project / ".mcp.json").write_text("{broken")
    ws = load_workspace(project, user_home=home, trust_override=False)
    assert any(".mcp.json" in n for n in ws.notices)
    with pytest.raises(SettingsError, match=r"\.mcp\.json"):
        load_workspace(project, user_home=home, trust_override=True)
