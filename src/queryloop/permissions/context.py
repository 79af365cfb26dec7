"""`PermissionContext`: the mutable permission state of a session (mode, rules, protected
paths), read by every step of the decision pipeline (`permissions.pipeline`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..errors import ConfigError
from .modes import PermissionMode, parse_mode
from .protected import ProtectedEntry, ProtectedPaths, protected_paths
from .rules import PermissionRule, RuleSet


class PermissionSettings(Protocol):
    """What `PermissionContext.from_settings` reads: `queryloop.config.Settings` has both.

    A protocol, not that class: permissions sits below the configuration layer and never
    imports it (docs/architecture.md).
    """

    @property
    def rules(self) -> RuleSet: ...

    @property
    def default_mode(self) -> PermissionMode | None: ...

    @property
    def disable_bypass_mode(self) -> bool: ...

    @property
    def deny_instead_of_prompting(self) -> bool: ...

    @property
    def block_writes_outside(self) -> bool: ...


DEFAULT_MANAGED_SETTINGS = Path("/etc/queryloop/managed-settings.json")
"""Used only when no caller says where the managed settings are (the configuration layer
passes `config.settings.managed_settings_path()`)."""


TRUST_HINT = "to trust it, run `queryloop trust` in this folder (or pass --trust)"
"""How a folder is trusted, for every message that says one is not (`config.trust`)."""


@dataclass
class PermissionContext:
    """The mutable permission state of a session (the REPL can switch modes mid-session)."""

    mode: PermissionMode = PermissionMode.DEFAULT
    rules: RuleSet = field(default_factory=RuleSet)
    untrusted_rules: RuleSet = field(default_factory=RuleSet)
    """An untrusted folder's allow rules, not applied: a denial one of them would have
    allowed says the folder is not trusted and how to trust it, not to add the rule."""
    session_allow: list[PermissionRule] = field(default_factory=list)
    """Rules the user approved with "always" during this session."""
    home: Path = field(default_factory=Path.home)
    """The home directory `~/` patterns resolve against."""
    developer_tools: frozenset[str] = frozenset()
    """Names of the tools the embedding program passed in (`Agent(tools=[...])`): allowed
    when no rule, mode or the tool's own check decides otherwise (`developer_tool`)."""
    config_home: Path | None = None
    """`$QUERYLOOP_HOME` (default `home/.queryloop`): its settings, agents, skills, commands
    and memory are protected paths."""
    managed_settings: Path | None = None
    """The managed settings file (a protected path); default `DEFAULT_MANAGED_SETTINGS`."""
    extra_protected: tuple[ProtectedEntry, ...] = ()
    """More protected entries from the configuration layer (Claude Code's folders)."""
    disable_bypass: bool = False
    """`permissions.disableBypassPermissionsMode: "disable"`: bypassPermissions cannot be
    entered (constructing or switching to it raises ConfigError)."""
    deny_instead_of_prompting: bool = False
    """`permissions.denyInsteadOfPrompting`: every ask is a denial (the headless message)."""
    block_writes_outside: bool = False
    """`permissions.blockWritesOutsideWorkingDirectories`: file-tool writes and detected Bash
    write targets outside the working folders are denied in every mode."""
    sandboxed_bash: Callable[[str], bool] | None = None
    """True for a Bash command that will run inside the OS sandbox: the `sandboxed` step
    allows it instead of asking (`sandbox.autoAllowBashIfSandboxed`); deny and ask rules, the
    fail-closed guard, plan mode and protected paths still apply first."""
    _protected: dict[tuple[Path, ...], ProtectedPaths] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.set_mode(self.mode)

    def set_mode(self, mode: PermissionMode) -> None:
        """Switch the mode (the REPL's mode switch); refuses bypassPermissions when the
        settings disable it."""
        if mode is PermissionMode.BYPASS and self.disable_bypass:
            raise ConfigError(BYPASS_DISABLED)
        self.mode = mode

    def protected_for(self, working_dirs: list[Path]) -> ProtectedPaths:
        """The protected paths for these working folders (computed once per set of folders)."""
        key = tuple(working_dirs)
        found = self._protected.get(key)
        if found is None:
            found = protected_paths(
                working_dirs,
                home=self.home,
                config_home=self.config_home or self.home / ".queryloop",
                managed_settings=self.managed_settings or DEFAULT_MANAGED_SETTINGS,
                extra=self.extra_protected,
            )
            self._protected[key] = found
        return found

    @classmethod
    def from_settings(
        cls,
        settings: PermissionSettings,
        *,
        mode: PermissionMode | str | None = None,
        home: Path | None = None,
        config_home: Path | None = None,
        managed_settings: Path | None = None,
    ) -> PermissionContext:
        """The context for loaded settings; `mode` (e.g. `--permission-mode`) beats defaultMode.

        Raises ConfigError when the chosen mode is bypassPermissions and the settings
        disable it (`permissions.disableBypassPermissionsMode`)."""
        chosen = parse_mode(mode) if isinstance(mode, str) else mode
        return cls(
            mode=chosen or settings.default_mode or PermissionMode.DEFAULT,
            rules=settings.rules,
            home=home or Path.home(),
            config_home=config_home,
            managed_settings=managed_settings,
            disable_bypass=settings.disable_bypass_mode,
            deny_instead_of_prompting=settings.deny_instead_of_prompting,
            block_writes_outside=settings.block_writes_outside,
        )


BYPASS_DISABLED = (
    "bypassPermissions mode is disabled by permissions.disableBypassPermissionsMode in the "
    "settings; choose another mode (default, acceptEdits or plan)"
)
