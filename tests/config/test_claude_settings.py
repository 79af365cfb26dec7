"""Claude Code's settings files beside queryloop's (issue 22, deliverable 1): the scopes, the
order they merge in, workspace trust, and the leniency rules (docs/settings.md, "Two layouts").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from file_support import write_json as write
from queryloop.config import (
    Layout,
    SettingsError,
    Severity,
    load_settings,
    load_workspace,
    settings_paths,
)
from queryloop.hooks import CommandHook, HookEvent
from queryloop.permissions import PermissionMode

OPEN_QUOTE_ALLOWS = ["Bash(node -e ':*)", "Bash(git commit -m ' *)", 'Bash(python -c ":*)']


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, queryloop home, Claude Code's user folder)."""
    project, home, claude = tmp_path / "proj", tmp_path / "home", tmp_path / "claude"
    for folder in (project / ".claude", project / ".queryloop", home, claude):
        folder.mkdir(parents=True)
    return project, home, claude


def managed_dir() -> Path:
    return Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"])


def test_the_files_in_order_claude_then_queryloop_at_each_scope(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    drop_ins = managed_dir() / "managed-settings.d"
    drop_ins.mkdir(parents=True)
    for name in ("20-b.json", "10-a.json", ".hidden.json", "notes.txt"):
        (drop_ins / name).write_text("{}")
    found = [(s.scope.value, s.layout.value, s.path) for s in settings_paths(project, home)]
    assert found == [
        ("user", "claude", Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"),
        ("user", "queryloop", home / "settings.json"),
        ("project", "claude", project / ".claude" / "settings.json"),
        ("project", "queryloop", project / ".queryloop" / "settings.json"),
        ("local", "claude", project / ".claude" / "settings.local.json"),
        ("local", "queryloop", project / ".queryloop" / "settings.local.json"),
        ("managed", "claude", managed_dir() / "managed-settings.json"),
        ("managed", "claude", drop_ins / "10-a.json"),
        ("managed", "claude", drop_ins / "20-b.json"),
        ("managed", "queryloop", Path(os.environ["QUERYLOOP_MANAGED_SETTINGS"])),
    ]
    assert settings_paths(project, home, claude_dir=claude)[0].path == claude / "settings.json"


def test_same_scope_queryloop_wins_rules_are_unions_env_merges(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    write(
        project / ".claude" / "settings.json",
        {
            "model": "claude-model",
            "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)"]},
            "env": {"A": "claude", "B": "claude"},
        },
    )
    write(
        project / ".queryloop" / "settings.json",
        {
            "model": "queryloop-model",
            "permissions": {"allow": ["Bash(git status)"], "defaultMode": "acceptEdits"},
            "env": {"B": "queryloop"},
        },
    )
    write(claude / "settings.json", {"permissions": {"deny": ["Bash(curl:*)"]}})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.model == "queryloop-model"
    assert s.origins["model"] == project / ".queryloop" / "settings.json"
    assert s.default_mode is PermissionMode.ACCEPT_EDITS
    assert [str(r) for r in s.rules.allow] == ["Bash(npm test)", "Bash(git status)"]
    assert [str(r) for r in s.rules.deny] == ["Bash(curl:*)", "Read(./.env)"]
    assert s.env == {"A": "claude", "B": "queryloop"}
    assert [(f.scope.value, f.layout) for f in s.files] == [
        ("user", Layout.CLAUDE),
        ("project", Layout.CLAUDE),
        ("project", Layout.QUERYLOOP),
    ]


def test_a_later_scope_wins_over_either_layout(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    write(home / "settings.json", {"model": "user-queryloop"})
    write(project / ".claude" / "settings.local.json", {"model": "local-claude"})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.model == "local-claude"
    write(managed_dir() / "managed-settings.json", {"model": "managed-claude"})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.model == "managed-claude"


def test_an_untrusted_claude_project_contributes_only_its_deny_rules(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    write(
        project / ".claude" / "settings.json",
        {
            "permissions": {
                "allow": ["Bash"],
                "ask": ["Bash(git push:*)"],
                "deny": ["Bash(rm -rf:*)"],
                "defaultMode": "bypassPermissions",
                "additionalDirectories": ["/"],
            },
            "env": {"PATH": "/evil"},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]},
            "enableAllProjectMcpServers": True,
        },
    )
    ws = load_workspace(project, user_home=home, claude_dir=claude, trust_override=False)
    assert [str(r) for r in ws.settings.rules.deny] == ["Bash(rm -rf:*)"]
    assert ws.settings.rules.allow == () and ws.settings.rules.ask == ()
    assert ws.settings.default_mode is None and ws.settings.env == {}
    assert ws.settings.hooks.count() == 0 and ws.settings.additional_directories == ()
    (notice,) = [n for n in ws.notices if "not trusted" in n]  # one, counting
    assert ".claude/settings.json (1 hook, 2 allow/ask rules, env, defaultMode" in notice
    listed = "\n".join(ws.settings.ignored)  # in full: `queryloop trust --show`
    for what in ("allow rules Bash", "ask rules", "defaultMode", "env PATH", "hooks", "MCP"):
        assert what in listed, what
    trusted = load_workspace(project, user_home=home, claude_dir=claude, trust_override=True)
    assert [str(r) for r in trusted.settings.rules.allow] == ["Bash"]


def test_open_quote_allow_rules_are_dropped_with_a_warning(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    path = write(
        project / ".claude" / "settings.local.json",
        {"permissions": {"allow": [*OPEN_QUOTE_ALLOWS, "Bash(npm test)"]}},
    )
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert [str(r) for r in s.rules.allow] == ["Bash(npm test)"]
    assert s.errors == ()
    warnings = [p for p in s.problems if p.severity is Severity.WARNING]
    assert len(warnings) == 3
    for rule, problem in zip(OPEN_QUOTE_ALLOWS, warnings, strict=True):
        assert problem.path == path and problem.line is not None
        assert rule in str(problem) and "dropped" in str(problem)


@pytest.mark.parametrize("behavior", ["deny", "ask"])
def test_an_open_quote_deny_or_ask_rule_still_fails_closed(
    dirs: tuple[Path, Path, Path], behavior: str
) -> None:
    project, home, claude = dirs
    path = write(project / ".claude" / "settings.json", {"permissions": {behavior: ["x", ""]}})
    path.write_text('{"permissions": {"' + behavior + '": ["Bash(git commit -m \' *)"]}}')
    with pytest.raises(SettingsError) as caught:
        load_workspace(project, user_home=home, claude_dir=claude, trust_override=True)
    column = len('{"permissions": {"' + behavior + '": [') + 1
    assert f"{path}:1:{column}: invalid permission rule" in str(caught.value)


def test_claude_code_keys_never_fail_closed_and_are_named_once(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    user = write(
        claude / "settings.json",
        {
            "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
            "outputStyle": "Explanatory",
            "enabledPlugins": {"formatter@tools": True},
            "forceLoginMethod": "claudeai",
            "alwaysThinkingEnabled": True,
            "permissions": {"disableAutoMode": "disable"},
        },
    )
    write(project / ".claude" / "settings.json", {"statusLine": {"type": "command"}, "x": 1})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.errors == ()
    text = "\n".join(map(str, s.problems))
    # statusLine is read (the user's is valid; the project's, without a command, warns)
    assert text.count("statusLine") == 1 and text.count("outputStyle") == 1
    assert f"{user}:" in text and "does not use" in text
    assert s.status_line is not None and s.status_line.command == "~/.claude/statusline.sh"
    assert "alwaysThinkingEnabled" in text
    for silent in ("enabledPlugins", "forceLoginMethod", "disableAutoMode"):
        assert silent not in text
    assert "unknown key 'x'" in text


@pytest.mark.parametrize(
    ("value", "mode", "dont_ask", "warns"),
    [
        ("manual", PermissionMode.DEFAULT, False, False),
        ("dontAsk", PermissionMode.DEFAULT, True, False),
        ("auto", PermissionMode.DEFAULT, False, True),
        ("delegate", PermissionMode.DEFAULT, False, True),
        ("plan", PermissionMode.PLAN, False, False),
    ],
)
def test_claude_code_default_modes(
    dirs: tuple[Path, Path, Path], value: str, mode: PermissionMode, dont_ask: bool, warns: bool
) -> None:
    project, home, claude = dirs
    write(claude / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    write(project / ".claude" / "settings.json", {"permissions": {"defaultMode": value}})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert (s.default_mode, s.deny_instead_of_prompting) == (mode, dont_ask)
    assert bool(s.problems) is warns and s.errors == ()


def test_a_mode_neither_program_knows_is_an_error(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    write(claude / "settings.json", {"permissions": {"defaultMode": "yolo"}})
    with pytest.raises(SettingsError, match=r"settings.json:\d+:\d+: unknown permission mode"):
        load_workspace(project, user_home=home, claude_dir=claude)


def test_a_later_mode_replaces_dont_ask(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    write(claude / "settings.json", {"permissions": {"defaultMode": "dontAsk"}})
    write(home / "settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert (s.default_mode, s.deny_instead_of_prompting) == (PermissionMode.ACCEPT_EDITS, False)


def stop_hook(marker: str) -> dict[str, object]:
    return {"Stop": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}


def test_disable_all_hooks(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    write(claude / "settings.json", {"hooks": stop_hook("a")})
    write(project / ".claude" / "settings.json", {"hooks": stop_hook("b")})
    assert load_settings(project, user_home=home, trusted=True, claude_dir=claude).hooks.count()
    write(project / ".claude" / "settings.local.json", {"disableAllHooks": True})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.hooks.count() == 0
    # an untrusted project cannot switch off the user's hooks
    s = load_settings(project, user_home=home, trusted=False, claude_dir=claude)
    assert s.hooks.count() == 1 and any("disableAllHooks" in i for i in s.ignored)


def test_managed_only_switches(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    write(
        claude / "settings.json", {"hooks": stop_hook("user"), "permissions": {"allow": ["Bash"]}}
    )
    managed = {
        "allowManagedHooksOnly": True,
        "allowManagedPermissionRulesOnly": True,
        "hooks": stop_hook("managed"),
        "permissions": {"allow": ["Read"], "deny": ["Bash(curl:*)"]},
    }
    write(managed_dir() / "managed-settings.json", managed)
    write(home / "settings.json", {"permissions": {"deny": ["Read(./.env)"]}})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert [str(r) for r in s.rules.allow] == ["Read"]
    assert sorted(str(r) for r in s.rules.deny) == ["Bash(curl:*)", "Read(./.env)"]
    stop = s.hooks.hooks_for(HookEvent.STOP)
    assert [h.command for h in stop if isinstance(h, CommandHook)] == ["touch managed"]
    # in a user file the switches are only a warning
    write(managed_dir() / "managed-settings.json", {})
    write(home / "settings.json", {"allowManagedHooksOnly": True})
    s = load_settings(project, user_home=home, trusted=True, claude_dir=claude)
    assert s.hooks.count() == 1 and "managed settings only" in "\n".join(map(str, s.problems))


@pytest.mark.parametrize(
    ("settings", "started"),
    [
        ({}, ["a", "b", "c"]),
        ({"disabledMcpjsonServers": ["b"]}, ["a", "c"]),
        ({"enabledMcpjsonServers": ["a"]}, ["a"]),
        ({"enabledMcpjsonServers": ["a"], "enableAllProjectMcpServers": True}, ["a", "b", "c"]),
        ({"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["c"]}, ["a", "b"]),
    ],
)
def test_mcp_json_approvals(
    dirs: tuple[Path, Path, Path], settings: dict[str, object], started: list[str]
) -> None:
    project, home, claude = dirs
    servers = {name: {"command": "python3", "args": ["-c", "pass"]} for name in "abc"}
    write(project / ".mcp.json", {"mcpServers": servers})
    write(project / ".claude" / "settings.local.json", settings)
    ws = load_workspace(project, user_home=home, claude_dir=claude, trust_override=True)
    assert sorted(ws.mcp_servers) == started
    held = sorted(set("abc") - set(started))
    assert any(", ".join(held) in n for n in ws.notices) is bool(held)
    untrusted = load_workspace(project, user_home=home, claude_dir=claude, trust_override=False)
    assert untrusted.mcp_servers == {}


def test_approvals_lists_merge_across_files(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    servers = {name: {"command": "python3"} for name in "abc"}
    write(project / ".mcp.json", {"mcpServers": servers})
    write(claude / "settings.json", {"enabledMcpjsonServers": ["a"]})
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["b"]})
    ws = load_workspace(project, user_home=home, claude_dir=claude, trust_override=True)
    assert sorted(ws.mcp_servers) == ["a", "b"]


def test_trusted_folders_come_from_queryloops_user_file_only(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    write(claude / "settings.json", {"trustedFolders": [str(project)]})
    s = load_settings(project, user_home=home, trusted=False, claude_dir=claude)
    assert s.trusted_folders == ()
    write(home / "settings.json", {"trustedFolders": [str(project)]})
    assert load_settings(project, user_home=home, trusted=False).trusted_folders == (project,)


def test_disable_all_hooks_turns_off_plugin_hooks_too(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    plugin = Path(__file__).parent.parent / "plugins" / "fixtures" / "qa-kit"
    on = load_workspace(project, user_home=home, claude_dir=claude, plugin_dirs=[plugin])
    assert on.settings.hooks.count() > 0
    write(claude / "settings.json", {"disableAllHooks": True})
    off = load_workspace(project, user_home=home, claude_dir=claude, plugin_dirs=[plugin])
    assert off.settings.hooks.count() == 0
    assert any("plugins' hooks do not run (disableAllHooks)" in n for n in off.notices)
