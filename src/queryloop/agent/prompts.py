"""What a prompt adds before the loop runs (`prepare_prompt`): the user's message, a typed
`/name`'s expansion, the hooks' context and the prompt's attachments, or why a hook blocked
it. It works on the started session's parts (`Runtime`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..hooks import HookEvent, HookOutcome, HookRunner
from ..messages.constructors import meta_user_message, user_message
from ..messages.types import Message
from ..providers.models import model_for
from ..skills.commands import Invocation, InvokedMessages, invocation_messages, parse_invocation
from ..skills.loader import SkillSource
from ..skills.shell import ThreadShell
from .runtime import Runtime


@dataclass
class PreparedPrompt:
    """The messages a prompt adds before the loop runs, or why a hook blocked it."""

    messages: list[Message]
    blocked: str | None = None
    model: str | None = None
    """The model of this prompt when a command asks for one (its `model`), else None."""


async def prepare_prompt(
    runtime: Runtime, prompt: str, messages: Sequence[Message]
) -> PreparedPrompt:
    """The user's message, its attachments (@-mentions first), UserPromptSubmit hooks."""
    hooks = runtime.hooks
    await _config_changes(runtime)
    outcome = await hooks.user_prompt_submit(prompt)
    if outcome.blocked or outcome.stop_reason:
        return PreparedPrompt([], blocked=outcome.reason or outcome.stop_reason or "blocked")
    invocation = parse_invocation(prompt, runtime.skills)
    expansion = await _expansion_hooks(hooks, prompt, invocation)
    if expansion.blocked or expansion.stop_reason:
        return PreparedPrompt([], blocked=expansion.reason or expansion.stop_reason or "blocked")
    runtime.agents.refresh()  # agent files added or removed since: the delta says so
    end_prompt(runtime)  # a new message: the last prompt's skill grants are over
    new: list[Message] = [user_message(prompt)]
    runtime.checkpoints.begin(new[0].uuid, prompt)  # files Write/Edit change from here on
    references = prompt
    if invocation is not None:  # /<name> [args]: the skill's text after the prompt
        invoked = await _invoke(runtime, invocation)
        new.extend(invoked.messages)
        references = f"{prompt}\n{invoked.references}"
    for context in (outcome.additional_context, expansion.additional_context):
        if context:
            new.append(meta_user_message(context))
    new.extend(await runtime.attachments.prompt(references, messages, new))
    return PreparedPrompt(new, model=_prompt_model(runtime, invocation))


def end_prompt(runtime: Runtime) -> None:
    """The prompt's run is over: the grants of the skills it invoked end with it (Claude
    Code: the `allowed-tools` grant "clears when you send your next message")."""
    runtime.params.tool_context.grants.clear()


async def _expansion_hooks(
    hooks: HookRunner, prompt: str, invocation: Invocation | None
) -> HookOutcome:
    """UserPromptExpansion hooks for a typed `/name args`, before its text expands and
    its `!` lines run (Claude Code's event; the matcher filters the command's name)."""
    if invocation is None or not hooks.has_hooks(HookEvent.USER_PROMPT_EXPANSION):
        return HookOutcome()
    skill = invocation.skill
    source = "plugin" if skill.source is SkillSource.PLUGIN else "skill"
    return await hooks.user_prompt_expansion(prompt, skill.name, invocation.args, source)


async def _invoke(runtime: Runtime, invocation: Invocation) -> InvokedMessages:
    """The messages a typed `/<name>` adds: its `allowed-tools` are granted for the
    prompt, then its `!` commands run as the main thread's Bash calls (rules, grant,
    hooks, sandbox); files a Read deny rule covers are not inlined."""
    ctx, permission = runtime.params.tool_context, runtime.permission
    ctx.grants.grant(invocation.skill.name, invocation.skill.options.allowed_tools)
    shell = ThreadShell(runtime.tools.all, ctx, permission, runtime.params.tool_hooks)
    return await invocation_messages(
        invocation,
        shell,
        denials=lambda: list(shell.denials),
        read_denied=lambda path: permission.denies_read(ctx.resolve(path), ctx),
        session_id=runtime.session.session_id,
    )


def _prompt_model(runtime: Runtime, invocation: Invocation | None) -> str | None:
    """A command's `model` for its prompt (an alias resolved as for subagents)."""
    requested = invocation.skill.options.model if invocation is not None else None
    if requested is None:
        return None
    return model_for(requested, runtime.model, getattr(runtime.params.provider, "name", ""))


async def _config_changes(runtime: Runtime) -> None:
    """ConfigChange hooks for settings files changed since the last prompt (they apply
    from the next session; a block is noted)."""
    hooks = runtime.hooks
    if not hooks.has_hooks(HookEvent.CONFIG_CHANGE):
        return
    for source, path in runtime.settings_watch.changed():
        if await hooks.config_change(source, str(path)):
            runtime.notices.add(f"a ConfigChange hook blocked the change to {path}")
