"""Claude Code's settings keys and values, and how leniently queryloop reads them.

The rule (issue 22): a key Claude Code accepts never makes queryloop refuse to start. Each
top-level key of Claude Code's settings schema (SchemaStore's `claude-code-settings.json`,
the schema Claude Code's own settings files point to, and code.claude.com/docs/en/settings)
is one of:

- implemented: read and acted on (`config.keys.SETTINGS_TABLE`, whose keys are
  `TOP_LEVEL_KEYS`);
- `CLAUDE_NOT_APPLICABLE`: it only turns off or restricts a Claude Code feature queryloop does
  not have (auto mode, remote control, marketplaces, logins, …), so it holds as written and
  there is nothing to say;
- `CLAUDE_IGNORED`: queryloop has no such behaviour; the key is named in one warning.

A key in none of these is unknown to both programs: a warning too (`unknown key …`). Claude
Code's schema allows additional properties, so no unknown key is ever an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..permissions.modes import PermissionMode

CLAUDE_NOT_APPLICABLE = frozenset(
    {
        "allowAllClaudeAiMcps",
        "allowedChannelPlugins",
        "blockedMarketplaces",
        "channelsEnabled",
        "disableAgentView",
        "disableArtifact",
        "disableAutoMode",
        "disableClaudeAiConnectors",
        "disableDeepLinkRegistration",
        "disableRemoteControl",
        "disableWorkflows",
        "forceLoginMethod",
        "forceLoginOrgUUID",
        "requiredMaximumVersion",
        "requiredMinimumVersion",
        "skipDangerousModePermissionPrompt",
        "skippedMarketplaces",
        "skippedPlugins",
        "sshHostAllowlist",
        "strictKnownMarketplaces",
    }
)
"""Keys that disable or restrict something queryloop does not have: true by construction."""

CLAUDE_IGNORED = frozenset(
    {
        "advisorModel",
        "agent",
        "agentPushNotifEnabled",
        "alwaysThinkingEnabled",
        "apiKeyHelper",
        "attribution",
        "autoCompactEnabled",
        "autoMemoryDirectory",
        "autoMemoryEnabled",
        "autoMode",
        "autoScrollEnabled",
        "autoUpdates",
        "autoUpdatesChannel",
        "availableModels",
        "awaySummaryEnabled",
        "awsAuthRefresh",
        "awsCredentialExport",
        "axScreenReader",
        "claudeMd",
        "claudeMdExcludes",
        "cleanupPeriodDays",
        "companyAnnouncements",
        "defaultShell",
        "diffTool",
        "disableBundledSkills",
        "editorMode",
        "effortLevel",
        "enforceAvailableModels",
        "extraKnownMarketplaces",
        "fallbackModel",
        "fastMode",
        "fastModePerSessionOptIn",
        "feedbackSurveyRate",
        "fileCheckpointingEnabled",
        "fileSuggestion",
        "footerLinksRegexes",
        "forceRemoteSettingsRefresh",
        "gcpAuthRefresh",
        "includeCoAuthoredBy",
        "includeGitInstructions",
        "inputNeededNotifEnabled",
        "language",
        "leftArrowOpensAgents",
        "managedMcpServers",
        "minimumVersion",
        "modelOverrides",
        "otelHeadersHelper",
        "outputStyle",
        "parentSettingsBehavior",
        "plansDirectory",
        "pluginConfigs",
        "pluginSuggestionMarketplaces",
        "pluginTrustMessage",
        "policyHelper",
        "preferredNotifChannel",
        "prefersReducedMotion",
        "prUrlTemplate",
        "remoteControlAtStartup",
        "respectGitignore",
        "respondToBashCommands",
        "showClearContextOnPlanAccept",
        "showMessageTimestamps",
        "showThinkingSummaries",
        "showTurnDuration",
        "skillListingBudgetFraction",
        "skillListingMaxDescChars",
        "skillOverrides",
        "skipWebFetchPreflight",
        "spinnerTipsEnabled",
        "spinnerTipsOverride",
        "spinnerVerbs",
        "sshConfigs",
        "strictPluginOnlyCustomization",
        "subagentStatusLine",
        "syntaxHighlightingDisabled",
        "teammateMode",
        "terminalProgressBarEnabled",
        "theme",
        "tui",
        "useAutoModeDuringPlan",
        "verbose",
        "viewMode",
        "voice",
        "voiceEnabled",
        "wheelScrollAccelerationEnabled",
        "workflowKeywordTriggerEnabled",
        "worktree",
        "wslInheritsWindowsSettings",
    }
)
"""Claude Code settings queryloop has no behaviour for: named in one warning, never an error."""

CLAUDE_PERMISSION_KEYS = frozenset({"disableAutoMode"})
"""`permissions` keys of Claude Code's that hold by construction (queryloop has no auto mode)."""

IGNORED_NOTE = "Claude Code settings queryloop does not use (ignored)"


@dataclass(frozen=True, slots=True)
class ModeValue:
    """A `defaultMode` value read the way Claude Code accepts it."""

    mode: PermissionMode
    dont_ask: bool = False
    """`dontAsk`: every call that would ask is denied (our `denyInsteadOfPrompting`)."""
    warning: str | None = None


CLAUDE_MODES = {
    "manual": ModeValue(PermissionMode.DEFAULT),
    "dontAsk": ModeValue(PermissionMode.DEFAULT, dont_ask=True),
    "auto": ModeValue(
        PermissionMode.DEFAULT,
        warning="defaultMode 'auto' (Claude Code's classifier mode) is not available in "
        "queryloop; the default mode applies (it asks where auto mode would decide)",
    ),
    "delegate": ModeValue(
        PermissionMode.DEFAULT,
        warning="defaultMode 'delegate' (Claude Code's agent-team lead mode) is not "
        "available in queryloop; the default mode applies",
    ),
}
"""Claude Code's `defaultMode` values beyond queryloop's four (its schema: `manual` is an
alias of `default`; `dontAsk` auto-denies unless pre-approved; `auto` and `delegate` have no
counterpart, and the stricter default mode stands in for them)."""


def ignored_keys(keys: list[str]) -> str:
    """The warning naming Claude Code keys that queryloop does not use."""
    return f"{IGNORED_NOTE}: " + ", ".join(keys)
