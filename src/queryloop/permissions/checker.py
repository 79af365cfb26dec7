"""`PermissionChecker`: modes, rules and the user (or an SDK callback) decide each tool call.

Order for one call (Claude Code's, with its known gaps closed):

1. a deny rule matches → deny (nothing overrides it, not even bypassPermissions);
   `blockWritesOutsideWorkingDirectories` and a write outside the working folders → deny;
   then *fail closed*: a Bash deny or ask rule that may apply although the parse cannot tell
   (`$X …`, `$(…)` as the program, code from a pipe, an unknown wrapper option), or a Bash
   command naming a file a `Read`/`Edit` deny rule protects → ask, in every mode (headless:
   denied with a reason the model can act on); see `permissions.guard`;
2. plan mode and the call is not read-only → deny;
3. an ask rule matches → ask;
4. the tool's own `check_permissions` says deny → deny;
5. bypassPermissions → allow (unless `disableBypassPermissionsMode`);
5b. the call writes a *protected path* (settings, `.mcp.json`, agent/skill/command/hook
   folders, memory files, `.git`, shell start-up files, …; `permissions.protected`, found for
   Bash by `permissions.shell_writes`) → allow only if an allow rule that NAMES the path
   approves it (`Edit(.queryloop/skills/**)`, the exact Bash command), else ask — no broad
   rule (`Bash(*)`, `Edit(**)`), acceptEdits or PreToolUse hook `allow` lets it through;
6. an allow rule (settings, `--allowed-tools`, or remembered this session) matches → allow;
6b. a running skill's `allowed-tools` (`ToolContext.grants`, for the rest of the prompt that
   invoked it) matches → allow: an allow rule like those of step 6, so deny and ask rules,
   plan mode and protected paths (steps 1-5b) still come first;
7. the tool's own check says allow → allow, ask → ask;
8. a file tool's path lies outside the working folders (symlinks resolved) → ask;
9. read-only → allow (not MCP tools: their readOnlyHint is only the server's claim; a
   read-only Bash command must not name a path outside the folders or under a Read deny);
   acceptEdits and a file edit inside the folders → allow; a tool the embedding program
   passed in (`Agent(tools=[...])`, `PermissionContext.developer_tools`) → allow; a Bash
   command `PermissionContext.sandboxed_bash` says runs in the OS sandbox → allow; otherwise
   → ask.

A tool the program passed in is one its developer means the model to use, so it needs no
rule; deny and ask rules, plan mode and the tool's own check (`@tool(needs_approval=True)`)
still apply to it.

"ask" goes to `can_use_tool` (SDK) if given, else to the `ask` handler (the REPL prompt); with
neither (print mode, headless), or with `denyInsteadOfPrompting`, an ask is a denial whose
message says how to allow the call (for a protected path: the rule that names it).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pydantic import BaseModel

from ..errors import ConfigError
from ..tools.base import (
    CURRENT_TOOL_USE_ID,
    DenialSource,
    PermissionDecision,
    PreToolUseOutcome,
    Tool,
    ToolContext,
)
from . import bash, guard, paths, write_guard
from .modes import EDIT_TOOLS, FILE_TOOLS, PermissionMode, parse_mode
from .protected import ProtectedEntry, ProtectedPaths, protected_paths
from .rules import MatchContext, PermissionRule, RuleSet
from .write_guard import ProtectedWrite

log = logging.getLogger(__name__)

_SUBCOMMAND_TOOLS = frozenset(
    "git npm pnpm yarn bun cargo go docker kubectl pip pip3 uv poetry make gh brew apt "
    "dotnet mvn gradle terraform helm conda rustup".split()
)
"""Programs whose first argument is a subcommand: suggest `Bash(git diff:*)`, not `Bash(git:*)`."""


@dataclass(frozen=True, slots=True)
class PermissionAllow:
    """Let the call run, optionally with a changed input; `remember` adds a session rule."""

    updated_input: Mapping[str, Any] | None = None
    remember: bool = False


@dataclass(frozen=True, slots=True)
class PermissionDeny:
    """Refuse the call; `message` reaches the model in the is_error tool_result."""

    message: str = ""


PermissionResult: TypeAlias = PermissionAllow | PermissionDeny


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """What the user (or `can_use_tool`) is asked about."""

    tool_name: str
    input: Mapping[str, Any]
    reason: str
    """Why approval is needed, one sentence."""
    suggested_rule: str
    """An allow rule that would approve calls like this one (`Bash(git diff:*)`)."""
    cwd: Path
    mode: PermissionMode
    agent_id: str | None = None
    """The subagent whose call it is (None on the main thread), as Claude Agent SDK's
    `ToolPermissionContext.agent_id`: a UI says who asks."""
    tool_use_id: str | None = None
    """The id of the tool_use asking (None where no call is running, as in a test)."""


AskHandler: TypeAlias = Callable[[PermissionRequest], Awaitable[PermissionResult | bool]]
"""The REPL's prompt: show the request, return the user's answer."""

CanUseTool: TypeAlias = Callable[
    [str, Mapping[str, Any], PermissionRequest],
    "Awaitable[PermissionResult | PermissionDecision | bool]"
    " | PermissionResult | PermissionDecision | bool",
]
"""SDK callback `can_use_tool(tool_name, input, request)`; sync or async."""


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


@dataclass
class PermissionContext:
    """The mutable permission state of a session (the REPL can switch modes mid-session)."""

    mode: PermissionMode = PermissionMode.DEFAULT
    rules: RuleSet = field(default_factory=RuleSet)
    session_allow: list[PermissionRule] = field(default_factory=list)
    """Rules the user approved with "always" during this session."""
    home: Path = field(default_factory=Path.home)
    """The home directory `~/` patterns resolve against."""
    developer_tools: frozenset[str] = frozenset()
    """Names of the tools the embedding program passed in (`Agent(tools=[...])`): allowed
    when no rule, mode or the tool's own check decides otherwise (step 9)."""
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
    """True for a Bash command that will run inside the OS sandbox: step 9 allows it instead
    of asking (`sandbox.autoAllowBashIfSandboxed`); deny and ask rules, the fail-closed guard,
    plan mode and protected paths still apply first."""
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


class PermissionChecker:
    """Implements `tools.base.PermissionChecker` over a `PermissionContext`."""

    def __init__(
        self,
        context: PermissionContext | None = None,
        *,
        ask: AskHandler | None = None,
        can_use_tool: CanUseTool | None = None,
    ) -> None:
        self.context = context or PermissionContext()
        self.ask_handler = ask
        self.can_use_tool = can_use_tool

    async def check(
        self,
        tool: Tool,
        input: Mapping[str, Any],
        ctx: ToolContext,
        *,
        hook: PreToolUseOutcome | None = None,
    ) -> PermissionDecision:
        """The verdict for one validated call (asks the user when the rules leave it open).

        A PreToolUse hook's `allow` approves the call and its `ask` asks about it whatever
        the rules and the mode say; a deny rule refuses it either way."""
        if hook is not None and hook.decision in ("allow", "ask"):
            denied = self.denied_by_rule(tool, input, ctx) or self._blocked(tool, input, ctx)
            if denied is not None:
                return denied
            write = self.protected_write(tool, input, ctx)
            if hook.decision == "allow" and write is None:
                return PermissionDecision("allow", source=DenialSource.HOOK)
            if write is not None and hook.decision == "allow":
                decision = self._protected_decision(
                    tool, _Call.of(tool, input, ctx, self.context), write
                )
                if decision.behavior == "allow":
                    return decision
                return await self._ask(tool, input, ctx, decision.message, protected=write)
            reason = f"a PreToolUse hook asks for approval: {hook.reason or 'no reason given'}"
            # No rule is suggested: the hook asks whatever the allow rules say, so an
            # "always" answer would save a rule the hook overrides next time.
            return await self._ask(tool, input, ctx, reason, suggest=False, protected=write)
        decision, guarded = await self._evaluate(tool, input, ctx)
        if decision.behavior != "ask":
            return decision
        write = self.protected_write(tool, input, ctx) if not guarded else None
        return await self._ask(tool, input, ctx, decision.message, guarded=guarded, protected=write)

    def denied_by_rule(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> PermissionDecision | None:
        """The deny decision if a deny rule matches, else None.

        Also applied when a PreToolUse hook said allow or ask: hooks may skip the prompt,
        never a deny rule.
        """
        call = _Call.of(tool, input, ctx, self.context)
        rule = self.context.rules.find("deny", tool.name, call.subject, call.mc)
        return None if rule is None else _deny_by_rule(tool.name, call, rule)

    def denies_read(self, path: Path, ctx: ToolContext) -> bool:
        """Whether a `Read` deny rule covers `path` (a command's `@path` is then not inlined)."""
        mc = MatchContext(ctx.cwd, self.context.home)
        return self.context.rules.find("deny", "Read", str(path), mc) is not None

    async def evaluate(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> PermissionDecision:
        """Steps 1-9 without asking anyone: allow, deny, or ask (with the reason)."""
        decision, _guarded = await self._evaluate(tool, input, ctx)
        return decision

    async def _evaluate(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> tuple[PermissionDecision, bool]:
        """The decision, and whether it is a fail-closed ask no allow rule can answer."""
        self._install_hidden(ctx)
        call = _Call.of(tool, input, ctx, self.context)
        denied = self.denied_by_rule(tool, input, ctx) or self._blocked(tool, input, ctx)
        if denied is not None:
            return denied, False
        if tool.name == "Bash" and call.subject:
            doubt = guard.bash_doubt(self.context.rules, call.subject, ctx, call.mc)
            if doubt is not None:
                return PermissionDecision("ask", doubt.reason, rule=doubt.rule), True
        write = self.protected_write(tool, input, ctx)
        return await self._by_rules(tool, call, ctx, write), False

    def protected_write(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> ProtectedWrite | None:
        """The protected path this call writes (a file tool's file, a Bash write target, or a
        path an opaque program names), or None; see `permissions.protected`."""
        call = _Call.of(tool, input, ctx, self.context)
        protected = self.context.protected_for(ctx.working_dirs)
        if tool.name in EDIT_TOOLS and call.path is not None:
            return write_guard.file_tool_write(protected, call.path)
        if tool.name == "Bash" and call.subject:
            return write_guard.bash_write(
                protected, call.subject, cwd=ctx.cwd, home=self.context.home, env=_tool_env(ctx)
            )
        return None

    def _blocked(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> PermissionDecision | None:
        """`blockWritesOutsideWorkingDirectories`: a write outside the working folders is
        denied in every mode (no rule, mode or person can approve it)."""
        if not self.context.block_writes_outside:
            return None
        call = _Call.of(tool, input, ctx, self.context)
        target: str | None = None
        if tool.name in EDIT_TOOLS and call.path is not None:
            if not paths.is_within(call.path, ctx.working_dirs):
                target = str(call.path)
        elif tool.name == "Bash" and call.subject:
            target = write_guard.bash_outside(
                call.subject,
                ctx.working_dirs,
                cwd=ctx.cwd,
                home=self.context.home,
                env=_tool_env(ctx),
            )
        if target is None:
            return None
        folders = ", ".join(str(d) for d in ctx.working_dirs)
        return PermissionDecision(
            "deny",
            f"{_describe(tool.name, call)} was blocked: it writes {target}, outside the working "
            f"folders ({folders}), and permissions.blockWritesOutsideWorkingDirectories is on. "
            "Write inside the working folders, or ask the user to add the folder "
            "(permissions.additionalDirectories).",
            source=DenialSource.RULE,
        )

    def _protected_decision(
        self, tool: Tool, call: _Call, write: ProtectedWrite
    ) -> PermissionDecision:
        """Allow when an allow rule that names the protected path approves the call (the
        narrow way through); otherwise ask. bypassPermissions was handled before."""
        for rule in (*self.context.rules.allow, *self.context.session_allow):
            if not rule.applies_to(tool.name) or not write_guard.rule_names(rule, write, call.mc):
                continue
            if RuleSet(allow=(rule,)).find("allow", tool.name, call.subject, call.mc):
                return PermissionDecision("allow", rule=str(rule), source=DenialSource.RULE)
        return PermissionDecision("ask", _protected_reason(write))

    async def _by_rules(
        self, tool: Tool, call: _Call, ctx: ToolContext, write: ProtectedWrite | None = None
    ) -> PermissionDecision:
        context, name = self.context, tool.name
        read_only = _safe_bool(lambda: tool.is_read_only(call.parsed))
        if context.mode is PermissionMode.PLAN and not read_only:
            return PermissionDecision(
                "deny",
                f"{name} is not available in plan mode: only read-only tools run. Finish the "
                "plan and let the user leave plan mode before changing anything.",
                source=DenialSource.MODE,
            )
        ask_rule = context.rules.find("ask", name, call.subject, call.mc)
        if ask_rule is not None:
            return PermissionDecision(
                "ask", f"the rule {ask_rule} asks for approval", rule=str(ask_rule)
            )
        own = await _tool_check(tool, call.parsed, ctx)
        if own.behavior == "deny":
            return dataclasses.replace(own, source=own.source or DenialSource.TOOL)
        if context.mode is PermissionMode.BYPASS and not context.disable_bypass:
            return PermissionDecision(
                "allow", updated_input=own.updated_input, source=DenialSource.MODE
            )
        if write is not None:
            return self._protected_decision(tool, call, write)
        allowed = RuleSet(allow=context.rules.allow + tuple(context.session_allow))
        allow_rule = allowed.find("allow", name, call.subject, call.mc)
        if allow_rule is not None:
            return PermissionDecision("allow", rule=str(allow_rule), source=DenialSource.RULE)
        granted = _granted(name, call, ctx)
        if granted is not None:
            return granted
        if own.behavior == "allow":
            return dataclasses.replace(own, source=own.source or DenialSource.TOOL)
        if own.behavior == "ask":
            return own
        return self._by_mode(name, call, read_only, ctx)

    def _install_hidden(self, ctx: ToolContext) -> None:
        """Let Grep, Glob and LS skip what `Read` deny rules protect (`ctx.hidden_paths`)."""
        if not any(r.tool == "Read" and r.content for r in self.context.rules.deny):
            ctx.hidden_paths = None
            return
        context = self.context

        def hidden(path: Path) -> bool:
            mc = MatchContext(ctx.cwd, context.home)
            return context.rules.find("deny", "Read", str(path), mc) is not None

        ctx.hidden_paths = hidden

    def _by_mode(
        self, name: str, call: _Call, read_only: bool, ctx: ToolContext
    ) -> PermissionDecision:
        if call.path is not None and not paths.is_within(call.path, ctx.working_dirs):
            folders = ", ".join(str(d) for d in ctx.working_dirs)
            return PermissionDecision(
                "ask", f"{call.path} is outside the working folders ({folders})"
            )
        if read_only and name == "Bash" and call.subject:
            return self._read_only_bash(call, ctx)
        if read_only and not name.startswith("mcp__"):
            # An MCP server's readOnlyHint is the server's claim, not ours to trust: it lets a
            # tool run in plan mode and in parallel, but never without a rule or approval.
            return PermissionDecision("allow", source=DenialSource.MODE)
        if self.context.mode is PermissionMode.ACCEPT_EDITS and name in EDIT_TOOLS:
            return PermissionDecision("allow", source=DenialSource.MODE)
        if name in self.context.developer_tools:
            return PermissionDecision("allow", source=DenialSource.RULE)
        sandboxed = self.context.sandboxed_bash
        if name == "Bash" and call.subject and sandboxed is not None and sandboxed(call.subject):
            return PermissionDecision("allow", source=DenialSource.MODE)
        mode = self.context.mode.value
        return PermissionDecision("ask", f"no allow rule matches it and {mode} mode asks")

    def _read_only_bash(self, call: _Call, ctx: ToolContext) -> PermissionDecision:
        """A read-only command still may not read outside the working folders.

        `cat ~/.ssh/id_rsa` is read-only; it asks like the Read tool would (files under a
        Read deny rule were already caught by the fail-closed guard).
        """
        command = call.subject or ""
        analysis = bash.analyze(command)
        if analysis.unknowns:
            return PermissionDecision(
                "ask", f"the command could not be analysed: {analysis.unknowns[0]}"
            )
        for word, _is_glob in bash.path_words(command):
            path = ctx.resolve(word)
            if not paths.is_within(path, ctx.working_dirs):
                return PermissionDecision(
                    "ask", f"the command reads {path}, outside the working folders"
                )
        return PermissionDecision("allow", source=DenialSource.MODE)

    async def _ask(
        self,
        tool: Tool,
        input: Mapping[str, Any],
        ctx: ToolContext,
        reason: str,
        *,
        guarded: bool = False,
        suggest: bool = True,
        protected: ProtectedWrite | None = None,
    ) -> PermissionDecision:
        call = _Call.of(tool, input, ctx, self.context)
        rule = _suggest_rule(tool.name, call, protected) if suggest else ""
        request = PermissionRequest(
            tool.name,
            input,
            reason,
            rule,
            ctx.cwd,
            self.context.mode,
            ctx.agent_id,
            tool_use_id=CURRENT_TOOL_USE_ID.get() or None,
        )
        try:
            answer = await self._answer(request)
        except Exception as exc:  # a broken prompt or callback must not crash the session
            log.warning("permission prompt failed: %r", exc)
            return PermissionDecision(
                "deny",
                f"{tool.name} was not approved: the prompt failed ({exc}).",
                source=DenialSource.NO_APPROVER,
            )
        if answer is None:
            message = (
                guard.headless_message(_describe(tool.name, call), reason)
                if guarded
                else _headless_message(tool.name, call, request, protected=protected is not None)
            )
            return PermissionDecision("deny", message, source=DenialSource.NO_APPROVER)
        return self._apply(answer, request)

    async def _answer(self, request: PermissionRequest) -> object:
        if self.context.deny_instead_of_prompting:
            return None  # every ask is a denial with the headless message
        if self.can_use_tool is not None:
            result = self.can_use_tool(request.tool_name, request.input, request)
            return await result if inspect.isawaitable(result) else result
        if self.ask_handler is not None:
            return await self.ask_handler(request)
        return None

    def _apply(self, answer: object, request: PermissionRequest) -> PermissionDecision:
        if isinstance(answer, PermissionDecision):
            if answer.source is None:
                return dataclasses.replace(answer, source=DenialSource.USER)
            return answer
        if answer is True or isinstance(answer, PermissionAllow):
            remember = isinstance(answer, PermissionAllow) and answer.remember
            if remember and request.suggested_rule:
                rule = PermissionRule.parse(request.suggested_rule, "allow", source="session")
                self.context.session_allow.append(rule)
            updated = answer.updated_input if isinstance(answer, PermissionAllow) else None
            return PermissionDecision("allow", updated_input=updated, source=DenialSource.USER)
        message = answer.message if isinstance(answer, PermissionDeny) else ""
        text = f"The user denied this {request.tool_name} call."
        return PermissionDecision("deny", f"{text} {message}".strip(), source=DenialSource.USER)


@dataclass(frozen=True, slots=True)
class _Call:
    """One call's facts the steps share: parsed input, subject, resolved path."""

    parsed: Any
    subject: str | None
    path: Path | None
    mc: MatchContext

    @classmethod
    def of(
        cls, tool: Tool, input: Mapping[str, Any], ctx: ToolContext, context: PermissionContext
    ) -> _Call:
        parsed = _parse_input(tool, input)
        subject = _subject(tool, parsed, input, ctx)
        path = ctx.resolve(subject) if tool.name in FILE_TOOLS and subject else None
        subject = str(path) if path is not None else subject
        return cls(parsed, subject, path, MatchContext(ctx.cwd, context.home))


def _granted(name: str, call: _Call, ctx: ToolContext) -> PermissionDecision | None:
    """Step 6b: a running skill's `allowed-tools` (`ctx.grants`) allows the call. Only here,
    after deny and ask rules, plan mode, the tool's own deny and protected paths: a grant is
    an allow rule for the rest of the prompt and never overrides what comes before."""
    for grant in ctx.grants.active:
        rule = RuleSet(allow=grant.rules).find("allow", name, call.subject, call.mc)
        if rule is not None:
            return PermissionDecision(
                "allow", rule=f"{rule} (allowed-tools of {grant.skill})", source=DenialSource.RULE
            )
    return None


def _parse_input(tool: Tool, input: Mapping[str, Any]) -> Any:
    """The tool's own input model when it validates (what its methods expect), else the dict."""
    model = getattr(tool, "input_model", BaseModel)
    if model is BaseModel:
        return dict(input)
    try:
        return model.model_validate(dict(input))
    except Exception:
        return dict(input)


def _subject(tool: Tool, parsed: Any, input: Mapping[str, Any], ctx: ToolContext) -> str | None:
    try:
        subject = tool.permission_subject(parsed)
    except Exception:
        subject = None
    if subject is not None:
        return str(subject)
    for key in ("command", "file_path", "notebook_path", "path", "url"):
        value = input.get(key)
        if isinstance(value, str) and value:
            return value
    return str(ctx.cwd) if tool.name in FILE_TOOLS else None


async def _tool_check(tool: Tool, parsed: Any, ctx: ToolContext) -> PermissionDecision:
    try:
        return await tool.check_permissions(parsed, ctx)
    except Exception as exc:
        return PermissionDecision("ask", f"{tool.name}'s permission check failed ({exc})")


def _safe_bool(fn: Callable[[], bool]) -> bool:
    try:
        return bool(fn())
    except Exception:
        return False


def _deny_by_rule(name: str, call: _Call, rule: PermissionRule) -> PermissionDecision:
    return PermissionDecision(
        "deny",
        f"Permission to use {_describe(name, call)} was denied by the rule {rule} "
        f"(from {rule.source}).",
        rule=str(rule),
        source=DenialSource.RULE,
    )


def _tool_env(ctx: ToolContext) -> dict[str, str]:
    """The environment the Bash tool runs a command with (`$TMPDIR` in a write target)."""
    return {**os.environ, **ctx.env}


def _describe(name: str, call: _Call) -> str:
    if name == "Bash" and call.subject:
        return f"Bash with command {call.subject!r}"
    if call.path is not None:
        return f"{name} on {call.path}"
    return name


def _suggest_rule(name: str, call: _Call, protected: ProtectedWrite | None = None) -> str:
    """An allow rule for calls like this one; for a protected path, one that names it (a
    broad rule would not let the next such call through)."""
    if protected is not None and name == "Bash" and call.subject:
        exact = _exact_bash_rule(call.subject)
        if exact is not None:
            return exact
    if protected is not None and name not in EDIT_TOOLS:
        return name
    if name == "Skill" and call.subject:  # this skill, not every skill
        return f"Skill({call.subject})"
    if name == "Bash" and call.subject:
        try:
            words = shlex.split(call.subject.splitlines()[0] if call.subject.strip() else "")
        except ValueError:
            words = call.subject.split()
        has_sub = len(words) > 1 and words[0] in _SUBCOMMAND_TOOLS and not words[1].startswith("-")
        keep = words[:2] if has_sub else words[:1]
        return f"Bash({' '.join(keep)}:*)" if keep else "Bash"
    if call.path is not None:
        family = "Edit" if name in EDIT_TOOLS else "Read"
        try:
            return f"{family}({call.path.relative_to(call.mc.cwd)})"
        except ValueError:
            return f"{family}(/{call.path})"
    return name


def _exact_bash_rule(command: str) -> str | None:
    """`Bash(<the whole command>)` when it is a valid rule (an exact rule names what the
    command writes)."""
    text = f"Bash({command.strip()})"
    try:
        PermissionRule.parse(text, "allow")
    except ConfigError:
        return None
    return text


def _protected_reason(write: ProtectedWrite) -> str:
    return (
        f"it writes {write.path}, a protected path ({write.entry.why}) that only an allow "
        "rule naming it or bypassPermissions lets through"
    )


def _headless_message(
    name: str, call: _Call, request: PermissionRequest, *, protected: bool = False
) -> str:
    """Why nobody could approve the call, and how its user allows calls like it, whether
    they run the command (a flag) or embed the Agent (a keyword)."""
    rule = request.suggested_rule
    how = (
        f"To allow calls like it, add the allow rule '{rule}' (command line: --allowed-tools "
        f"'{rule}'; Python: Agent(allowed_tools=[{rule!r}]); or permissions.allow in settings)"
    )
    if name in EDIT_TOOLS and not protected:
        how += ", or use the acceptEdits permission mode"
    return (
        f"{_describe(name, call)} requires approval ({request.reason}), and no one can approve "
        f"it in this non-interactive session. {how}."
    )


if TYPE_CHECKING:  # mypy proves the checker satisfies the executor's protocol
    from ..tools import base as _base

    def _conforms(checker: PermissionChecker) -> _base.PermissionChecker:
        return checker
