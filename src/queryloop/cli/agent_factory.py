"""The Agent a command line describes: new, resumed (`--resume`) or continued (`--continue`).

Print mode (`main`) and the REPL (`repl`, and its /model and /resume) build their Agent here,
so neither imports the other to make one. Nothing heavy is imported until `make_agent` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .args import CliOptions, UsageError

if TYPE_CHECKING:
    from ..agent import Agent, Decision


def make_agent(options: CliOptions, **extra: Any) -> Agent[Any]:
    """The Agent the options describe: new, resumed (--resume) or continued (--continue).
    `extra` are Agent keywords added to the options' own (callbacks, mostly); `--json-schema`
    is its `output_type` (a schema that cannot work is a `ConfigError`, exit status 2)."""
    from ..session import find_session, latest_session

    # Resolve the session first: a wrong id fails in milliseconds, before the SDKs load.
    path = None
    if options.resume:
        path = find_session(options.resume, cwd=options.cwd)
    elif options.continue_latest:
        path = latest_session(options.cwd)
        if path is None:
            raise UsageError(
                f"no session to continue in {options.cwd}; start one without --continue"
            )
    from ..agent import Agent

    kwargs = options.agent_kwargs()
    kwargs.update(extra)
    schema = options.json_schema
    if path is not None:
        return Agent.resume(
            path, options.model, decisions=_decisions(options), output_type=schema, **kwargs
        )
    if schema is not None:
        return Agent(options.model, output_type=schema, **kwargs)
    return Agent(options.model, **kwargs)


def _decisions(options: CliOptions) -> dict[str, Decision]:
    """`--approve` and `--deny` as the Agent's decisions on deferred calls."""
    from ..permissions import PermissionAllow, PermissionDeny

    decided: dict[str, Decision] = {ident: PermissionAllow() for ident in options.approve}
    decided.update({ident: PermissionDeny(message) for ident, message in options.deny})
    return decided
