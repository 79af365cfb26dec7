"""Settings files: where they are, how they merge, and what went wrong reading them.

Files, lowest precedence first (Claude Code's shapes and order), Claude Code's layout read
beside queryloop's at each scope, queryloop's file after it (it wins for single values):

1. user: `$CLAUDE_CONFIG_DIR/settings.json` (`~/.claude`), then `$QUERYLOOP_HOME/settings.json`
   (`~/.queryloop`)
2. project: `<cwd>/.claude/settings.json`, then `<cwd>/.queryloop/settings.json`
3. local: `<cwd>/.claude/settings.local.json`, then `<cwd>/.queryloop/settings.local.json`
   (personal, not committed)
4. managed: `/etc/claude-code/managed-settings.json` and its `managed-settings.d/*.json`, then
   `$QUERYLOOP_MANAGED_SETTINGS` (default `/etc/queryloop/managed-settings.json`): set by an
   administrator; always trusted, wins over the others

Rule lists and hooks concatenate; `env` merges key by key; `model` and `permissions.defaultMode`
take the last file that sets them: each key's rule is its entry in the table of keys
(`config.keys`), which `config.merge` walks. Every problem becomes a `SettingsProblem` naming
the file, line and column and the fix (`config.settings_file`, where each file is read once).
Settings fail closed: a file that cannot be read or parsed, a value of the wrong type and a
deny or ask rule that does not parse are *errors* (`Settings.errors`), and
`config.workspace.load_workspace` refuses to run with any of them — nothing ever runs with
fewer deny rules than the user wrote. An unknown key, a Claude Code key queryloop does not use
(`config.claude_settings`) and an allow rule that does not parse (dropped: that never loosens
anything) are *warnings*. An untrusted project (see `config.trust`) contributes only what
narrows (its deny rules, the tightening switches, a stricter sandbox, refusals) and `model`,
in either layout; what it would have added is listed in `Settings.ignored`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..compact.policy import CompactionName
from ..hooks import HooksConfig
from ..permissions.modes import PermissionMode
from ..permissions.protected import ProtectedEntry
from ..permissions.rules import RuleSet
from .discovery import (
    SettingSources,
    claude_home,
    claude_managed_dir,
)
from .hook_policy import HttpHookPolicy
from .keys import SETTINGS_TABLE, TOP_LEVEL_KEYS
from .locations import (
    CLAUDE_MANAGED_DROP_INS,
    CLAUDE_MANAGED_FILE,
    MANAGED_SETTINGS,
    claude_managed_paths,
    managed_settings_path,
    queryloop_home,
    settings_paths,
    user_settings_path,
)
from .mcp_approval import McpJsonApproval
from .mcp_policy import McpServerPolicy
from .merge import SettingsMerger
from .plugins import EnabledPlugin
from .sandbox import SandboxSettings
from .settings_file import (
    SettingsFile,
    SettingsProblem,
    SettingsScope,
    SettingsSource,
    Severity,
    read_settings_file,
    read_source,
)
from .status_line import StatusLineSetting

if TYPE_CHECKING:
    from ..context.cache_ttl import CacheTtlSetting

__all__ = [
    "CLAUDE_MANAGED_DROP_INS",
    "CLAUDE_MANAGED_FILE",
    "MANAGED_SETTINGS",
    "TOP_LEVEL_KEYS",
    "Settings",
    "SettingsFile",
    "SettingsProblem",
    "SettingsScope",
    "SettingsSource",
    "Severity",
    "claude_managed_paths",
    "claude_protected_entries",
    "load_settings",
    "managed_settings_path",
    "queryloop_home",
    "read_settings_file",
    "settings_paths",
    "user_settings_path",
]


@dataclass(frozen=True)
class Settings:
    """The merged, effective settings and where each piece came from."""

    rules: RuleSet = field(default_factory=RuleSet)
    untrusted_rules: RuleSet = field(default_factory=RuleSet)
    """The allow and ask rules of an untrusted project's files: not applied; a denial they
    would have allowed says the folder is not trusted (not "add this rule")."""
    default_mode: PermissionMode | None = None
    additional_directories: tuple[Path, ...] = ()
    disable_bypass_mode: bool = False
    """`permissions.disableBypassPermissionsMode: "disable"` in any file."""
    deny_instead_of_prompting: bool = False
    """`permissions.denyInsteadOfPrompting: true` in any file: every ask is a denial."""
    block_writes_outside: bool = False
    """`permissions.blockWritesOutsideWorkingDirectories: true` in any file."""
    hooks: HooksConfig = field(default_factory=HooksConfig)
    """The hooks that run: none when `disableAllHooks` is on, only the managed files' with
    `allowManagedHooksOnly` (managed settings)."""
    hooks_off: str | None = None
    """Why hooks beyond the managed files' do not run (`disableAllHooks` or
    `allowManagedHooksOnly`): plugins' hooks stay off too. None: they run."""
    env: Mapping[str, str] = field(default_factory=dict)
    disable_skill_shell: bool = False
    """`disableSkillShellExecution: true` in any file: skills' and commands' `!` commands
    are not run (`skills.expand`)."""
    model: str | None = None
    status_line: StatusLineSetting | None = None
    """`"statusLine"`: the command whose first line of output is the REPL's status line
    (`config.status_line`)."""
    tool_search: str | int | None = None
    """`"toolSearch"`: when MCP tools go behind ToolSearch (`queryloop.context.tool_search`)."""
    compaction: CompactionName | None = None
    """`"compaction"`: the compaction policy, "default" or "economy" (`compact.policy`)."""
    cache_ttl: CacheTtlSetting | None = None
    """`"cacheTtl"`: how long prompt-cache entries live ("5m", "1h", "auto";
    `queryloop.context.cache_ttl`)."""
    session_store: str | None = None
    """`"sessionStore"`: where transcripts live (`sqlite:///...`, `postgresql://...`; the
    JSONL files when unset; `queryloop.session.stores`). Trusted files only."""
    trusted_folders: tuple[Path, ...] = ()
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    """`"sandbox"`: the Bash sandbox (`config.sandbox`, docs/sandbox.md)."""
    enabled_plugins: Mapping[str, EnabledPlugin] = field(default_factory=dict)
    """`"enabledPlugins"` of the trusted files (`config.plugins`, docs/plugins.md)."""
    mcp_json: McpJsonApproval = field(default_factory=McpJsonApproval)
    """Which of a trusted project's `.mcp.json` servers start (Claude Code's approval keys)."""
    mcp_policy: McpServerPolicy = field(default_factory=McpServerPolicy)
    """Which MCP servers may start at all, whatever their source (`allowedMcpServers`,
    `deniedMcpServers`; `config.mcp_policy`)."""
    http_hooks: HttpHookPolicy = field(default_factory=HttpHookPolicy)
    """What `http` hooks may call and read (`allowedHttpHookUrls`, `httpHookAllowedEnvVars`;
    `config.hook_policy`); applied to every hook, a plugin's and the program's too."""
    files: tuple[SettingsFile, ...] = ()
    problems: tuple[SettingsProblem, ...] = ()
    ignored: tuple[str, ...] = ()
    """What untrusted project files asked for and did not get, one line each."""
    origins: Mapping[str, Path] = field(default_factory=dict)
    """Which file set `model`, `defaultMode` and each `env.NAME`."""

    @property
    def errors(self) -> tuple[SettingsProblem, ...]:
        """The problems that must stop a run (unreadable files, bad values, bad rules)."""
        return tuple(p for p in self.problems if p.is_error)


def claude_protected_entries(claude_dir: Path | None = None) -> tuple[ProtectedEntry, ...]:
    """Claude Code's folders this layer reads from outside the working folders, as protected
    paths: its user folder (`$CLAUDE_CONFIG_DIR`; `~/.claude` is protected anyway) and its
    managed folder (settings, drop-ins, managed CLAUDE.md)."""
    return (
        ProtectedEntry(claude_dir or claude_home(), True, "Claude Code settings"),
        ProtectedEntry(claude_managed_dir(), True, "Claude Code managed settings"),
    )


def load_settings(
    cwd: Path,
    *,
    user_home: Path | None = None,
    trusted: bool,
    claude_dir: Path | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> Settings:
    """Read and merge the user, project, local and managed settings for `cwd`, both layouts.

    `user_home` is the queryloop home folder (default `$QUERYLOOP_HOME` or `~/.queryloop`);
    `claude_dir` Claude Code's (default `$CLAUDE_CONFIG_DIR` or `~/.claude`). When `trusted`
    is False the project and local files contribute only deny rules and `model`. A scope
    `sources` leaves out is not read at all, in either layout (its deny rules do not apply
    either, as with Claude Code's `--setting-sources`); the managed settings always are.
    """
    merger = SettingsMerger(cwd, SETTINGS_TABLE)
    for source in settings_paths(cwd, user_home, claude_dir=claude_dir):
        if not sources.reads(source.scope.value):
            continue
        file, problem = read_source(source)
        if problem is not None:
            merger.unreadable(problem)
        if file is not None:
            merger.add(file, trusted=trusted or not source.is_project)
    return Settings(**merger.result())
