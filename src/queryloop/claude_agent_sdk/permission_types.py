"""What a `can_use_tool` callback receives and returns (the SDK's dataclasses)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

PermissionMode: TypeAlias = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
"""The modes queryloop has. The SDK also names "dontAsk" and "auto"; queryloop refuses them
with `UnsupportedOptionError` (`denyInsteadOfPrompting` in the settings is "dontAsk")."""

PermissionBehavior: TypeAlias = Literal["allow", "deny", "ask"]
PermissionUpdateDestination: TypeAlias = Literal[
    "userSettings", "projectSettings", "localSettings", "session"
]


@dataclass
class PermissionRuleValue:
    """One rule: a tool name and, optionally, what it applies to (`Bash` + `git diff:*`)."""

    tool_name: str
    rule_content: str | None = None

    def rule(self) -> str:
        """The rule as queryloop and Claude Code write it: `Bash(git diff:*)`."""
        return f"{self.tool_name}({self.rule_content})" if self.rule_content else self.tool_name


@dataclass
class PermissionUpdate:
    """A change to the permission rules or mode. queryloop offers one suggestion (the allow
    rule that would approve calls like this one, for this session); returning it in
    `PermissionResultAllow.updated_permissions` remembers it for the session."""

    type: Literal[
        "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
    ]
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def to_dict(self) -> dict[str, Any]:
        """The control protocol's JSON shape (camelCase keys)."""
        out: dict[str, Any] = {"type": self.type}
        if self.destination is not None:
            out["destination"] = self.destination
        if self.rules is not None:
            out["rules"] = [
                {"toolName": r.tool_name, "ruleContent": r.rule_content} for r in self.rules
            ]
        for key in ("behavior", "mode", "directories"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class ToolPermissionContext:
    """The third argument of `can_use_tool`: the call's id, why approval is needed
    (`decision_reason`), the suggested rule (`suggestions`), the subagent asking
    (`agent_id`, None on the main thread). `signal` is None, as in the SDK."""

    signal: Any | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    tool_use_id: str | None = None
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None


@dataclass
class PermissionResultAllow:
    """Let the call run, with `updated_input` instead of the model's input if given."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Refuse the call; `message` is what the model reads. `interrupt=True` also stops the
    running turn (the response ends with an `error_during_execution` result)."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult: TypeAlias = PermissionResultAllow | PermissionResultDeny

CanUseTool: TypeAlias = Callable[
    [str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]
]
