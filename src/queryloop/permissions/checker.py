"""`PermissionChecker`: modes, rules and the user (or an SDK callback) decide each tool call.

The decision is `permissions.pipeline`: the call's facts are built once, then one ordered walk
of steps (deny rule, fail-closed doubt, plan mode, ask rule, …, protected path, hook allow,
allow rule, …, otherwise ask) gives allow, deny or ask. What PreToolUse hooks answered is an
input to that walk, never a second copy of it: a hook's `allow` stands where an allow rule
stands, so it never approves what a deny rule refuses or what fails closed.

"ask" goes to `can_use_tool` (SDK) if given, else to the `ask` handler (the REPL prompt): a
person may approve any ask, a fail-closed doubt included. With neither (print mode,
headless), or with `denyInsteadOfPrompting`, an ask is a denial whose message says how to
allow the call (for a protected path: the rule that names it). An input the person rewrote
(`updated_input`) still meets the deny rules.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..tools.base import (
    CURRENT_TOOL_USE_ID,
    DenialSource,
    PermissionDecision,
    PreToolUseOutcome,
    Tool,
    ToolContext,
)
from . import call as call_facts
from . import guard, pipeline
from .call import Target, build_call, denied_by_rule
from .context import (
    BYPASS_DISABLED,
    DEFAULT_MANAGED_SETTINGS,
    TRUST_HINT,
    PermissionContext,
    PermissionSettings,
)
from .modes import EDIT_TOOLS, PermissionMode
from .rules import MatchContext, PermissionRule

if TYPE_CHECKING:
    from .shell.write_guard import ProtectedWrite

__all__ = [
    "BYPASS_DISABLED",
    "DEFAULT_MANAGED_SETTINGS",
    "AskHandler",
    "CanUseTool",
    "PermissionAllow",
    "PermissionChecker",
    "PermissionContext",
    "PermissionDefer",
    "PermissionDeny",
    "PermissionRequest",
    "PermissionResult",
    "PermissionSettings",
]

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


@dataclass(frozen=True, slots=True)
class PermissionDefer:
    """Put the call off: nobody can answer now, someone will later, maybe from another
    process. The run ends with terminal `deferred`, the call waits in the session
    (`RunResult.deferred`) until `Agent.resume(..., decisions={id: allow | deny})`; see
    docs/approvals.md. `reason` is recorded with the call."""

    reason: str = ""


PermissionResult: TypeAlias = PermissionAllow | PermissionDeny | PermissionDefer


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """What the user (or `can_use_tool`) is asked about."""

    tool_name: str
    input: Mapping[str, Any]
    reason: str
    """Why approval is needed, one sentence."""
    suggested_rule: str
    """An allow rule that would approve calls like this one (`Bash(git diff:*)`); for a
    compound Bash line, the first of `suggested_rules`."""
    cwd: Path
    mode: PermissionMode
    agent_id: str | None = None
    """The subagent whose call it is (None on the main thread), as Claude Agent SDK's
    `ToolPermissionContext.agent_id`: a UI says who asks."""
    tool_use_id: str | None = None
    """The id of the tool_use asking (None where no call is running, as in a test)."""
    suggested_rules: tuple[str, ...] = ()
    """Every allow rule calls like this one need: one per stage of a pipeline or `&&`
    list that no rule allows yet (`git status | sort | uniq -c` under `Bash(git status:*)`:
    `Bash(sort:*)`, `Bash(uniq:*)`); never a rule already given. Empty: none is offered."""


AskHandler: TypeAlias = Callable[[PermissionRequest], Awaitable[PermissionResult | bool]]
"""The REPL's prompt: show the request, return the user's answer."""

CanUseTool: TypeAlias = Callable[
    [str, Mapping[str, Any], PermissionRequest],
    "Awaitable[PermissionResult | PermissionDecision | bool]"
    " | PermissionResult | PermissionDecision | bool",
]
"""SDK callback `can_use_tool(tool_name, input, request)`; sync or async."""


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
        """The verdict for one validated call (asks the user when the steps leave it open).

        `hook` is what PreToolUse hooks answered, an input to the one walk of steps: its
        `allow` skips the question as an allow rule would, never a deny rule, a fail-closed
        doubt, plan mode, an ask rule or a protected path; its `ask` asks even where the
        rules or the mode would allow."""
        call = await build_call(tool, input, ctx, self.context, hook)
        verdict = pipeline.walk(call)
        if verdict.decision.behavior != "ask":
            return verdict.decision
        return await self._ask(call, verdict)

    def denied_by_rule(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> PermissionDecision | None:
        """The deny decision if a deny rule matches, else None (the first step of the walk)."""
        target = Target.of(tool, input, ctx, self.context.home)
        return denied_by_rule(self.context, tool.name, target)

    def denies_read(self, path: Path, ctx: ToolContext) -> bool:
        """Whether a `Read` deny rule covers `path` (a command's `@path` is then not inlined)."""
        mc = MatchContext(ctx.cwd, self.context.home)
        return self.context.rules.find("deny", "Read", str(path), mc) is not None

    async def evaluate(
        self,
        tool: Tool,
        input: Mapping[str, Any],
        ctx: ToolContext,
        *,
        hook: PreToolUseOutcome | None = None,
    ) -> PermissionDecision:
        """The walk of steps without asking anyone: allow, deny, or ask (with the reason)."""
        call = await build_call(tool, input, ctx, self.context, hook)
        return pipeline.walk(call).decision

    def protected_write(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext
    ) -> ProtectedWrite | None:
        """The protected path this call writes (a file tool's file, a Bash write target, or a
        path an opaque program names), or None; see `permissions.protected`."""
        target = Target.of(tool, input, ctx, self.context.home)
        return call_facts.protected_write(tool, target, ctx, self.context)

    async def _ask(self, call: call_facts.Call, verdict: pipeline.Verdict) -> PermissionDecision:
        """Put the walk's ask to a person; with nobody to ask, the denial says what to do."""
        name, target, reason = call.name, call.target, verdict.decision.message
        guarded = verdict.step is pipeline.fail_closed_doubt
        protected = None if guarded else call.protected
        # A hook's ask gets no suggested rule: the hook asks whatever the allow rules say, so
        # an "always" answer would save a rule the hook overrides next time.
        suggested = (
            _suggest_rules(call, protected) if verdict.step is not pipeline.hook_refusal else ()
        )
        request = PermissionRequest(
            name,
            call.input,
            reason,
            suggested[0] if suggested else "",
            call.ctx.cwd,
            self.context.mode,
            call.ctx.agent_id,
            tool_use_id=CURRENT_TOOL_USE_ID.get() or None,
            suggested_rules=suggested,
        )
        try:
            answer = await self._answer(request)
        except Exception as exc:  # a broken prompt or callback must not crash the session
            log.warning("permission prompt failed: %r", exc)
            return PermissionDecision(
                "deny",
                f"{name} was not approved: the prompt failed ({exc}).",
                source=DenialSource.NO_APPROVER,
            )
        if answer is None:
            message = (
                guard.headless_message(target.describe(name), reason)
                if guarded
                else _untrusted_message(call, request)
                or _headless_message(name, target, request, protected=protected is not None)
            )
            return PermissionDecision("deny", message, source=DenialSource.NO_APPROVER)
        return self._denied_rewrite(call, self._apply(answer, request))

    def _denied_rewrite(
        self, call: call_facts.Call, decision: PermissionDecision
    ) -> PermissionDecision:
        """A person's approval with a rewritten input still meets the deny rules (and
        `blockWritesOutsideWorkingDirectories`): nothing overrides them."""
        if decision.behavior != "allow" or decision.updated_input is None:
            return decision
        tool, ctx = call.tool, call.ctx
        target = Target.of(tool, decision.updated_input, ctx, self.context.home)
        return (
            denied_by_rule(self.context, tool.name, target)
            or call_facts.blocked(tool, target, ctx, self.context)
            or decision
        )

    async def _answer(self, request: PermissionRequest) -> object:
        if self.context.deny_instead_of_prompting:
            return None  # every ask is a denial with the headless message
        if self.can_use_tool is not None:
            result = self.can_use_tool(request.tool_name, request.input, request)
            return await result if inspect.isawaitable(result) else result
        if self.ask_handler is not None:
            return await self.ask_handler(request)
        return None

    def _remember(self, request: PermissionRequest) -> None:
        """ "Always allow": the offered rules become session allow rules."""
        for text in request.suggested_rules or (request.suggested_rule,):
            if text:
                rule = PermissionRule.parse(text, "allow", source="session")
                self.context.session_allow.append(rule)

    def _apply(self, answer: object, request: PermissionRequest) -> PermissionDecision:
        if isinstance(answer, PermissionDecision):
            if answer.source is None:
                return dataclasses.replace(answer, source=DenialSource.USER)
            return answer
        if isinstance(answer, PermissionDefer):
            return PermissionDecision("defer", answer.reason, source=DenialSource.USER)
        if answer is True or isinstance(answer, PermissionAllow):
            remember = isinstance(answer, PermissionAllow) and answer.remember
            if remember:
                self._remember(request)
            updated = answer.updated_input if isinstance(answer, PermissionAllow) else None
            return PermissionDecision("allow", updated_input=updated, source=DenialSource.USER)
        message = answer.message if isinstance(answer, PermissionDeny) else ""
        text = f"The user denied this {request.tool_name} call."
        return PermissionDecision("deny", f"{text} {message}".strip(), source=DenialSource.USER)


def _suggest_rules(call: call_facts.Call, protected: ProtectedWrite | None) -> tuple[str, ...]:
    """The allow rules that would approve calls like this one, none already given: for a
    compound Bash line one per stage nothing allows yet; when every such rule is given (a
    redirection or substitution makes the line ask), the exact line."""
    split = None if protected is not None else pipeline.stages(call)
    if split is None:
        wanted = [_suggest_rule(call.name, call.target, protected)]
    else:
        wanted = [
            _suggest_rule(call.name, stage.target)
            for stage in map(call.stage, split)
            if not _allowed(pipeline.stage_verdict(stage))
        ]
    given = {str(r) for r in (*call.context.rules.allow, *call.context.session_allow)}
    fresh = tuple(dict.fromkeys(r for r in wanted if r and r not in given))
    if fresh or call.name != "Bash" or not call.subject:
        return fresh
    exact = _exact_bash_rule(call.subject)
    return () if exact is None or exact in given else (exact,)


def _allowed(decision: PermissionDecision | None) -> bool:
    return decision is not None and decision.behavior == "allow"


def _suggest_rule(name: str, call: Target, protected: ProtectedWrite | None = None) -> str:
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
    if name == "WebFetch" and call.subject:  # this host (Claude Code's "domain:" rule)
        host = urlsplit(call.subject).hostname
        return f"WebFetch(domain:{host})" if host else name
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


def _untrusted_message(call: call_facts.Call, request: PermissionRequest) -> str | None:
    """When an allow rule of the untrusted folder's (ignored) settings covers the call: the
    denial says so and how to trust the folder; advising that rule would be no help."""
    rule = call.context.untrusted_rules.find("allow", call.name, call.subject, call.target.mc)
    if rule is None:
        return None
    return (
        f"{call.target.describe(call.name)} requires approval ({request.reason}), and no one "
        f"can approve it in this non-interactive session. The allow rule '{rule}' in "
        f"{rule.source or 'the project settings'} would allow it, but this folder is not "
        f"trusted, so its settings are ignored; {TRUST_HINT}."
    )


def _headless_message(
    name: str, target: Target, request: PermissionRequest, *, protected: bool = False
) -> str:
    """Why nobody could approve the call, and how its user allows calls like it, whether
    they run the command (a flag) or embed the Agent (a keyword)."""
    rules = request.suggested_rules or ((request.suggested_rule,) if request.suggested_rule else ())
    named = " and ".join(f"'{r}'" for r in rules)
    how = (
        f"To allow calls like it, add the allow rule{'s' if len(rules) > 1 else ''} {named} "
        f"(command line: --allowed-tools '{' '.join(rules)}'; Python: "
        f"Agent(allowed_tools={list(rules)!r}); or permissions.allow in settings)"
        if rules
        else "No allow rule approves it as written; run it where someone can approve it"
    )
    if name in EDIT_TOOLS and not protected:
        how += ", or use the acceptEdits permission mode"
    return (
        f"{target.describe(name)} requires approval ({request.reason}), and no one can approve "
        f"it in this non-interactive session. {how}."
    )


if TYPE_CHECKING:  # mypy proves the checker satisfies the executor's protocol
    from ..tools import base as _base

    def _conforms(checker: PermissionChecker) -> _base.PermissionChecker:
        return checker
