"""What guards a session, for `assembly.assemble`: the permission mode, the checker and its
context (rules, protected paths), the Bash sandbox, the hook runner and the settings files
watched for ConfigChange hooks."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.settings import claude_protected_entries, managed_settings_path
from ..config.workspace import Workspace
from ..errors import ConfigError
from ..hooks import HookRunner, HooksConfig
from ..hooks.claude_transcript import CLAUDE_CODE_DIR, HookTranscripts
from ..loop.summaries import default_summary_model
from ..permissions import PermissionChecker, PermissionContext, PermissionMode, parse_mode
from ..permissions.checker import BYPASS_DISABLED
from ..permissions.exec_rules import exec_rules
from ..permissions.protected import ProtectedEntry, ProtectedPaths, protected_paths
from ..sandbox.git_dir import git_dir_read_only, is_git_dir
from ..sandbox.guard import ExecGuard
from ..sandbox.policy import ReadOnlyPath, SandboxPolicy
from ..session import RequestKind, Session, project_dir, queryloop_home
from ..telemetry import Telemetry
from .assembly_model import ModelChoice
from .hook_points import PROMPT_HOOK_PURPOSE, SettingsWatch, prompt_model, with_permission_hooks
from .options import AgentOptions
from .runtime import Notices
from .sandbox_rules import denied_paths

if TYPE_CHECKING:
    from ..sandbox.service import Sandbox


def session_mode(options: AgentOptions, workspace: Workspace) -> PermissionMode:
    """The session's permission mode: the option (`--permission-mode`), else the settings'
    defaultMode. Raises ConfigError for bypassPermissions when the settings disable it
    (`permissions.disableBypassPermissionsMode`), whichever of the two chose it."""
    settings = workspace.settings
    mode = parse_mode(options.permissions.permission_mode or settings.default_mode or "default")
    if mode is PermissionMode.BYPASS and settings.disable_bypass_mode:
        raise ConfigError(BYPASS_DISABLED)
    return mode


def build_permission_context(
    options: AgentOptions, workspace: Workspace, home: Path, sandbox: Sandbox | None = None
) -> PermissionContext:
    """The session's permission state: the mode, the settings' rules and switches, the homes
    whose files are protected paths, the caller's tools; with the sandbox's
    `autoAllowBashIfSandboxed`, a Bash command that will run sandboxed does not ask
    (`Sandbox.covers`: on, working here, not excluded). Raises ConfigError when the mode is
    bypassPermissions and the settings disable it."""
    auto = sandbox is not None and sandbox.policy.auto_allow
    settings = workspace.settings
    return PermissionContext(
        mode=session_mode(options, workspace),
        rules=settings.rules,
        untrusted_rules=settings.untrusted_rules,
        developer_tools=frozenset(t.name for t in options.tools.tools),
        config_home=home,
        managed_settings=managed_settings_path(),
        extra_protected=extra_protected(workspace),
        disable_bypass=settings.disable_bypass_mode,
        deny_instead_of_prompting=settings.deny_instead_of_prompting,
        block_writes_outside=settings.block_writes_outside,
        sandboxed_bash=sandbox.covers if auto and sandbox is not None else None,
    )


def extra_protected(workspace: Workspace) -> tuple[ProtectedEntry, ...]:
    """Protected paths beyond the working folders' own: Claude Code's user and managed
    folders, and the folder of every plugin the session loaded (`--plugin-dir` and enabled
    ones): its hooks, MCP servers, commands and `bin/` run code in later sessions."""
    plugins = tuple(
        ProtectedEntry(p.root, True, f"plugin {p.name}") for p in workspace.plugins.plugins
    )
    return (*claude_protected_entries(), *plugins)


def build_permission(
    options: AgentOptions, context: PermissionContext, hooks: HookRunner
) -> PermissionChecker:
    """The session's checker; whoever it asks (the caller's approver, or nobody) is asked
    after the PermissionRequest hooks."""
    return PermissionChecker(
        context, can_use_tool=with_permission_hooks(hooks, options.permissions.can_use_tool)
    )


def build_hooks(
    options: AgentOptions,
    workspace: Workspace,
    session: Session,
    permission: PermissionContext,
    notices: Notices,
    model: ModelChoice,
    telemetry: Telemetry,
) -> HookRunner:
    """The settings' hooks and the caller's; their warnings become notices; prompt hooks ask
    the model table's fast model (else the session's) through the session's provider."""
    config = workspace.settings.hooks
    if options.callbacks.hooks:  # the settings' http hook limits hold for the program's hooks too
        code = HooksConfig.of(**_as_lists(options.callbacks.hooks))
        config = config.merged(workspace.settings.http_hooks.applied(code))
    metered = session.metered(model.provider, RequestKind.SIDE, purpose=PROMPT_HOOK_PURPOSE)
    provider = telemetry.side_requests(metered, PROMPT_HOOK_PURPOSE)
    fast = options.model.summary_model or default_summary_model(provider.name) or model.name
    transcripts = hook_transcripts(options)
    return HookRunner(
        config,
        cwd=options.workspace.cwd,
        session_id=lambda: session.session_id,  # a new one after /clear
        transcript_path=None if transcripts is None else transcripts.follow(session),
        sidechain_path=None if transcripts is None else transcripts.follow_sidechains(session),
        env=workspace.settings.env,
        permission_mode=lambda: permission.mode.value,  # the REPL may switch modes
        on_warning=notices.hook_warning,
        on_status=options.callbacks.on_hook_status,
        ask_model=prompt_model(provider, fast),
        observer=telemetry if telemetry.enabled else None,
    )


def hook_transcripts(options: AgentOptions) -> HookTranscripts | None:
    """The transcripts hooks read (`transcript_path`, a subagent's `agent_transcript_path`):
    the session in Claude Code's format (`hooks.claude_transcript`), brought up to date
    before each hook runs and kept in the project's `claude-code/` folder whatever store
    keeps the session; none when the session is not persisted."""
    if not options.session.persist:
        return None
    cwd = options.workspace.cwd
    folder = project_dir(cwd, queryloop_home(options.session.home)) / CLAUDE_CODE_DIR
    return HookTranscripts(folder, Path(cwd), _version())


def _version() -> str:
    """queryloop's version (a transcript line's `version`)."""
    try:
        return importlib.metadata.version("queryloop")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "0"


def build_sandbox(
    options: AgentOptions, workspace: Workspace, home: Path, notices: Notices
) -> Sandbox | None:
    """The Bash sandbox of the `sandbox` settings (None when it is off). Writable besides
    the working folder: `allowWrite` and `additionalDirectories`; read-only inside them:
    `denyWrite`, the paths of `Edit(...)` deny rules and the protected paths, so a sandboxed
    command cannot rewrite the rules the agent runs under; unreadable: `denyRead` and the
    paths of `Read(...)` deny rules (`sandbox_rules`), the rules the permission checker
    reads. That it cannot start is said once, as a notice."""
    config = workspace.settings.sandbox
    if not config.enabled:
        return None
    from ..sandbox.service import Sandbox  # bubblewrap, the proxy: only when it is on

    protected = protected_paths(  # the same set the permission checker guards
        [options.workspace.cwd, *workspace.settings.additional_directories],
        home=Path.home(),
        config_home=home,
        managed_settings=managed_settings_path(),
        extra=extra_protected(workspace),
    )
    rules, cwd = workspace.settings.rules, Path(options.workspace.cwd)
    edit_denied = denied_paths(rules, "Edit", cwd=cwd, home=Path.home())
    policy = SandboxPolicy(
        allow_write=(*config.allow_write, *workspace.settings.additional_directories),
        read_only=(*config.deny_write, *edit_denied, *sandbox_read_only(protected)),
        deny_read=(*config.deny_read, *denied_paths(rules, "Read", cwd=cwd, home=Path.home())),
        allowed_domains=config.allowed_domains,
        denied_domains=config.denied_domains,
        allow_unix_sockets=tuple(str(p) for p in config.allow_unix_sockets),
        allow_all_unix_sockets=config.allow_all_unix_sockets,
        excluded_commands=config.excluded_commands,
        fail_if_unavailable=config.fail_if_unavailable,
        auto_allow=config.auto_allow,
    )
    return Sandbox(policy, warn=notices.add)


def build_exec_guard(permission: PermissionContext, notices: Notices) -> ExecGuard:
    """The exec check: every program a Bash command executes meets the session's Bash deny
    and ask rules (read from `permission` at each command: the REPL may change them). That
    it cannot run here is said once, as a notice."""
    return ExecGuard(lambda command, _cwd: exec_rules(permission.rules, command), warn=notices.add)


def sandbox_read_only(protected: ProtectedPaths) -> list[ReadOnlyPath]:
    """The protected paths as the sandbox mounts them read-only. A git folder is narrowed
    (`sandbox.git_dir`): what runs code or leads git elsewhere (config, hooks, commondir,
    info, ...) is read-only, present or not, while commands in the sandbox still commit,
    fetch, stash, merge and check out (objects, refs, logs, the index, the lock files)."""
    paths: list[ReadOnlyPath] = []
    for entry in protected.entries:
        if entry.is_dir and is_git_dir(entry.path):
            paths += git_dir_read_only(entry.path)
        else:
            paths.append(ReadOnlyPath(entry.path))
    return paths


def build_settings_watch(workspace: Workspace) -> SettingsWatch:
    """The settings files the session read, for ConfigChange hooks."""
    return SettingsWatch([(f.path, f.scope.value) for f in workspace.settings.files])


def _as_lists(hooks: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    return {event: list(items) for event, items in hooks.items()}
