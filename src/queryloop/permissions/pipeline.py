"""The one decision pipeline: the facts of a call, built once, then one ordered walk of steps.

Each step looks at the `Call` and answers allow, deny or ask, or None ("no opinion": the next
step decides). The first answer is the verdict. The order (`STEPS`, Claude Code's, with its
known gaps closed) is:

1. `deny_rule` — a deny rule matches → deny (nothing overrides it, not even
   bypassPermissions, a PreToolUse hook or a person);
2. `blocked_outside` — `blockWritesOutsideWorkingDirectories` and the call writes outside
   the working folders → deny;
3. `fail_closed_doubt` — a Bash deny or ask rule *may* apply although the parse cannot tell
   (`$X …`, `$(…)` as the program, code from a pipe, an unknown wrapper option), or the
   command names a file a `Read`/`Edit` deny rule protects → ask, in every mode
   (`permissions.guard`); only a person may approve it, never an allow rule, a mode or a
   hook's `allow`;
4. `plan_mode` — plan mode and the call is not read-only → deny;
5. `ask_rule` — an ask rule matches → ask (a hook's `allow` does not skip it, as in Claude
   Code);
6. `tool_deny` — the tool's own `check_permissions` says deny → deny;
7. `hook_refusal` — a PreToolUse hook answered deny → deny, or ask → ask (even where a rule
   or the mode below would allow);
8. `bypass_mode` — bypassPermissions → allow (unless `disableBypassPermissionsMode`);
9. `protected_path` — the call writes a *protected path* (settings, `.mcp.json`,
   agent/skill/command/hook folders, memory files, `.git`, shell start-up files, …;
   `permissions.protected`, found for Bash by `permissions.shell.writes`) → allow only if an
   allow rule that NAMES the path approves it (`Edit(.queryloop/skills/**)`, the exact Bash
   command), else ask — no broad rule (`Bash(*)`, `Edit(**)`), acceptEdits or hook `allow`;
10. `hook_allow` — a PreToolUse hook answered allow → allow: it stands where an allow rule
    stands, so everything above still refuses or asks first;
11. `allow_rule` — an allow rule (settings, `--allowed-tools`, or remembered this session)
    matches → allow;
12. `skill_grant` — a running skill's `allowed-tools` (`ToolContext.grants`, for the rest of
    the prompt that invoked it) matches → allow, an allow rule like those above;
13. `tool_verdict` — the tool's own check says allow → allow, ask → ask;
14. `outside_folders` — a file tool's path lies outside the working folders (symlinks
    resolved) → ask;
15. `read_only` — a read-only call → allow (not MCP tools: their readOnlyHint is only the
    server's claim; a read-only Bash command must not name a path outside the folders);
16. `allowed_stages` — a Bash pipeline or `&&`/`||`/`;` list that hides nothing
    (`shell.bash.stages`) whose every command, called alone, steps 11, 12 or 15 would allow
    (an allow rule, a skill's grant, read-only inside the folders) → allow: `git status |
    head -3` under `Bash(git status:*)`, `ls | head -3`, `cat README.md | wc -l`, as Claude
    Code runs them; `ls | xargs rm` and `cat x | sh` still ask;
17. `accept_edits` — acceptEdits and a file edit (inside the folders, step 14) → allow;
18. `developer_tool` — a tool the embedding program passed in (`Agent(tools=[...])`,
    `PermissionContext.developer_tools`) → allow;
19. `sandboxed` — a Bash command `PermissionContext.sandboxed_bash` says runs in the OS
    sandbox → allow;
20. `otherwise_ask` — ask.

A tool the program passed in is one its developer means the model to use, so it needs no
rule; deny and ask rules, plan mode and the tool's own check (`@tool(needs_approval=True)`)
still apply to it. An "ask" goes to a person (`permissions.checker`): the REPL prompt or the
SDK's `can_use_tool`; their answer settles only that ask, after every step above had its say.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ..tools.base import DenialSource, PermissionDecision, ToolContext
from . import paths, protected_rules
from .call import Call, Unanalysable, blocked, denied_by_rule, protected_reason
from .modes import EDIT_TOOLS, PermissionMode
from .rules import RuleSet

Step = Callable[[Call], PermissionDecision | None]
"""One step of the walk: a verdict, or None for no opinion."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The walk's result: the decision and the step that made it."""

    decision: PermissionDecision
    step: Step


def walk(call: Call) -> Verdict:
    """The first verdict in `STEPS` order (the last step always answers)."""
    for step in STEPS:
        decision = step(call)
        if decision is not None:
            return Verdict(decision, step)
    raise AssertionError("otherwise_ask always answers")  # pragma: no cover


# --- the steps, in their order ---


def deny_rule(call: Call) -> PermissionDecision | None:
    """A deny rule matches → deny."""
    return denied_by_rule(call.context, call.name, call.target)


def blocked_outside(call: Call) -> PermissionDecision | None:
    """`blockWritesOutsideWorkingDirectories`: a write outside the working folders → deny
    (no rule, mode or person can approve it)."""
    return blocked(call.tool, call.target, call.ctx, call.context)


def fail_closed_doubt(call: Call) -> PermissionDecision | None:
    """A Bash deny or ask rule may apply and the parse cannot prove otherwise → ask."""
    if call.doubt is None:
        return None
    return PermissionDecision("ask", call.doubt.reason, rule=call.doubt.rule)


def plan_mode(call: Call) -> PermissionDecision | None:
    """Plan mode runs only read-only calls."""
    if call.context.mode is not PermissionMode.PLAN or call.read_only:
        return None
    return PermissionDecision(
        "deny",
        f"{call.name} is not available in plan mode: only read-only tools run. Finish the "
        "plan and let the user leave plan mode before changing anything.",
        source=DenialSource.MODE,
    )


def ask_rule(call: Call) -> PermissionDecision | None:
    """An ask rule matches → ask."""
    rule = call.context.rules.find("ask", call.name, call.subject, call.target.mc)
    if rule is None:
        return None
    return PermissionDecision("ask", f"the rule {rule} asks for approval", rule=str(rule))


def tool_deny(call: Call) -> PermissionDecision | None:
    """The tool's own check refuses the call."""
    if call.own.behavior != "deny":
        return None
    return dataclasses.replace(call.own, source=call.own.source or DenialSource.TOOL)


def hook_refusal(call: Call) -> PermissionDecision | None:
    """A PreToolUse hook's deny refuses the call; its ask asks whatever the rules below say."""
    hook = call.hook
    if hook is None or hook.decision not in ("deny", "ask"):
        return None
    reason = hook.reason or "no reason given"
    if hook.decision == "deny":
        return PermissionDecision(
            "deny",
            f"PreToolUse hook denied this {call.name} call: {reason}",
            source=DenialSource.HOOK,
        )
    return PermissionDecision("ask", f"a PreToolUse hook asks for approval: {reason}")


def bypass_mode(call: Call) -> PermissionDecision | None:
    """bypassPermissions allows what no step above refused or asked about."""
    context = call.context
    if context.mode is not PermissionMode.BYPASS or context.disable_bypass:
        return None
    return PermissionDecision(
        "allow", updated_input=call.own.updated_input, source=DenialSource.MODE
    )


def protected_path(call: Call) -> PermissionDecision | None:
    """A protected write runs only under an allow rule that names the path; else ask (and
    ask when what the call writes could not be analysed)."""
    write = call.writes
    if write is None:
        return None
    if isinstance(write, Unanalysable):
        return PermissionDecision("ask", write.reason)
    context = call.context
    for rule in (*context.rules.allow, *context.session_allow):
        if not rule.applies_to(call.name):
            continue
        if not protected_rules.rule_names(rule, write, call.target.mc):
            continue
        if RuleSet(allow=(rule,)).find("allow", call.name, call.subject, call.target.mc):
            return PermissionDecision("allow", rule=str(rule), source=DenialSource.RULE)
    return PermissionDecision("ask", protected_reason(write))


def hook_allow(call: Call) -> PermissionDecision | None:
    """A PreToolUse hook's allow: an allow rule's answer, given after every step that
    refuses, fails closed or asks."""
    if call.hook is None or call.hook.decision != "allow":
        return None
    return PermissionDecision("allow", source=DenialSource.HOOK)


def allow_rule(call: Call) -> PermissionDecision | None:
    """An allow rule (settings, command line, or remembered this session) matches."""
    context = call.context
    allowed = RuleSet(allow=context.rules.allow + tuple(context.session_allow))
    rule = allowed.find("allow", call.name, call.subject, call.target.mc)
    if rule is None:
        return None
    return PermissionDecision("allow", rule=str(rule), source=DenialSource.RULE)


def skill_grant(call: Call) -> PermissionDecision | None:
    """A running skill's `allowed-tools` (`ctx.grants`): an allow rule for the rest of the
    prompt, so it never overrides what comes before."""
    for grant in call.ctx.grants.active:
        rule = RuleSet(allow=grant.rules).find("allow", call.name, call.subject, call.target.mc)
        if rule is not None:
            return PermissionDecision(
                "allow", rule=f"{rule} (allowed-tools of {grant.skill})", source=DenialSource.RULE
            )
    return None


def tool_verdict(call: Call) -> PermissionDecision | None:
    """The tool's own check: allow → allow, ask → ask."""
    if call.own.behavior == "allow":
        return dataclasses.replace(call.own, source=call.own.source or DenialSource.TOOL)
    if call.own.behavior == "ask":
        return call.own
    return None


def outside_folders(call: Call) -> PermissionDecision | None:
    """A file tool's path outside the working folders asks."""
    path, dirs = call.target.path, call.ctx.working_dirs
    if path is None or paths.is_within(path, dirs):
        return None
    folders = ", ".join(str(d) for d in dirs)
    return PermissionDecision("ask", f"{path} is outside the working folders ({folders})")


def read_only(call: Call) -> PermissionDecision | None:
    """A read-only call runs (a Bash command only when it reads inside the folders)."""
    if not call.read_only:
        return None
    if call.name == "Bash" and call.subject:
        return _read_only_bash(call.subject, call.ctx)
    if call.name.startswith("mcp__"):
        # An MCP server's readOnlyHint is the server's claim, not ours to trust: it lets a
        # tool run in plan mode and in parallel, but never without a rule or approval.
        return None
    return PermissionDecision("allow", source=DenialSource.MODE)


def allowed_stages(call: Call) -> PermissionDecision | None:
    """A compound Bash line runs when each of its commands alone would run by a rule, a
    skill's grant or as a read-only command. The deny, ask, doubt and protected-path steps
    above have judged the whole line already (they match any command in it)."""
    split = stages(call)
    if split is None:
        return None
    rules: list[str] = []
    for stage in split:
        decision = stage_verdict(call.stage(stage))
        if decision is None or decision.behavior != "allow":
            return None
        if decision.rule is not None:
            rules.append(decision.rule)
    source = DenialSource.RULE if rules else DenialSource.MODE
    return PermissionDecision("allow", rule=", ".join(rules) or None, source=source)


def stages(call: Call) -> tuple[str, ...] | None:
    """The stages of a compound Bash call (`shell.bash.stages`), or None."""
    if call.name != "Bash" or not call.subject:
        return None
    from .shell import bash

    return bash.stages(call.subject)


def stage_verdict(stage: Call) -> PermissionDecision | None:
    """What allows one stage alone: an allow rule, a skill's grant, or being read-only."""
    return allow_rule(stage) or skill_grant(stage) or read_only(stage)


def accept_edits(call: Call) -> PermissionDecision | None:
    """acceptEdits runs file edits (inside the folders: `outside_folders` came first)."""
    if call.context.mode is PermissionMode.ACCEPT_EDITS and call.name in EDIT_TOOLS:
        return PermissionDecision("allow", source=DenialSource.MODE)
    return None


def developer_tool(call: Call) -> PermissionDecision | None:
    """A tool the embedding program passed in needs no rule."""
    if call.name in call.context.developer_tools:
        return PermissionDecision("allow", source=DenialSource.RULE)
    return None


def sandboxed(call: Call) -> PermissionDecision | None:
    """A Bash command that runs inside the OS sandbox (`autoAllowBashIfSandboxed`)."""
    check = call.context.sandboxed_bash
    if call.name == "Bash" and call.subject and check is not None and check(call.subject):
        return PermissionDecision("allow", source=DenialSource.MODE)
    return None


def otherwise_ask(call: Call) -> PermissionDecision:
    """Nothing decided: ask."""
    mode = call.context.mode.value
    return PermissionDecision("ask", f"no allow rule matches it and {mode} mode asks")


STEPS: tuple[Step, ...] = (
    deny_rule,
    blocked_outside,
    fail_closed_doubt,
    plan_mode,
    ask_rule,
    tool_deny,
    hook_refusal,
    bypass_mode,
    protected_path,
    hook_allow,
    allow_rule,
    skill_grant,
    tool_verdict,
    outside_folders,
    read_only,
    allowed_stages,
    accept_edits,
    developer_tool,
    sandboxed,
    otherwise_ask,
)
"""The order of the steps, declared once (the module docstring lists it)."""


def _read_only_bash(command: str, ctx: ToolContext) -> PermissionDecision:
    """A read-only command still may not read outside the working folders.

    `cat ~/.ssh/id_rsa` is read-only; it asks like the Read tool would (files under a Read
    deny rule were already caught by `fail_closed_doubt`).
    """
    from .shell import bash

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
