"""Where the session meets its hooks outside the loop and the executor: the model prompt
hooks ask, PermissionRequest before anyone is asked, the memory files a session starts with
(InstructionsLoaded) and settings files that change while it runs (ConfigChange).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..abort import AbortSignal
from ..context.user_context import MemoryFile
from ..hooks import HookEvent, HookRunner, PromptModel
from ..messages.blocks import TextBlock
from ..permissions.checker import CanUseTool, PermissionRequest
from ..providers.base import ModelProvider, ModelRequest, complete
from ..tools.base import DenialSource, PermissionDecision

PROMPT_HOOK_PURPOSE = "prompt_hook"
PROMPT_HOOK_MAX_TOKENS = 512


def prompt_model(
    provider: ModelProvider, fast_model: str, abort: AbortSignal | None = None
) -> PromptModel:
    """How prompt hooks ask: one small request through the session's (metered) provider;
    `fast_model` unless the hook names its own."""

    async def ask(system: str, prompt: str, model: str | None) -> str:
        request = ModelRequest(
            model=model or fast_model,
            max_tokens=PROMPT_HOOK_MAX_TOKENS,
            system=[{"type": "text", "text": system}],
            messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        )
        response = await complete(provider, request, abort)
        return "".join(b.text for b in response.content if isinstance(b, TextBlock))

    return ask


def with_permission_hooks(hooks: HookRunner, inner: CanUseTool | None) -> CanUseTool:
    """The approver the checker asks, with PermissionRequest hooks first: a hook's allow or
    deny answers for the user (deny rules were already applied). Without an approver behind
    it (print mode, headless) the answer is None, and the checker refuses the call exactly as
    it would have: Claude Code runs these hooks there too, and denies when none decides."""

    async def approve(tool_name: str, input: Mapping[str, Any], request: PermissionRequest) -> Any:
        if hooks.has_hooks(HookEvent.PERMISSION_REQUEST):
            said = await hooks.permission_request(tool_name, input, suggestions(request))
            if said.behavior == "allow":
                return PermissionDecision(
                    "allow", updated_input=said.updated_input, source=DenialSource.HOOK
                )
            if said.behavior == "deny":
                why = said.message or "no reason given"
                text = f"A PermissionRequest hook denied this {tool_name} call: {why}"
                return PermissionDecision("deny", text, source=DenialSource.HOOK)
        if inner is None:
            return None  # the checker's own "nobody could approve it" denial follows
        answer = inner(tool_name, input, request)
        return await answer if inspect.isawaitable(answer) else answer

    return cast(CanUseTool, approve)


_RULE = re.compile(r"^([^()]+)(?:\((.*)\))?$", re.DOTALL)


def suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """`permission_suggestions`: the "always allow" the user would be offered."""
    match = _RULE.match(request.suggested_rule or "")
    if match is None:
        return []
    rule: dict[str, Any] = {"toolName": match.group(1)}
    if match.group(2):
        rule["ruleContent"] = match.group(2)
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


SCOPE_MEMORY_TYPES = {"user": "User", "project": "Project", "local": "Local", "managed": "Managed"}


async def memory_loaded(hooks: HookRunner, files: Sequence[MemoryFile], reason: str) -> None:
    """InstructionsLoaded for each memory file that reached the context; a file an `@path`
    imported is announced with load_reason `include` and its `parent_file_path` (Claude
    Code's fields)."""
    if not hooks.has_hooks(HookEvent.INSTRUCTIONS_LOADED):
        return
    for file in files:
        kind = SCOPE_MEMORY_TYPES.get(file.level, "Project")
        if file.parent is None:
            await hooks.instructions_loaded(str(file.path), kind, reason)
        else:
            parent = str(file.parent)
            await hooks.instructions_loaded(
                str(file.path), kind, "include", parent_file_path=parent
            )


SETTINGS_SOURCES = {
    "user": "user_settings",
    "project": "project_settings",
    "local": "local_settings",
    "managed": "policy_settings",
}


@dataclass
class SettingsWatch:
    """The settings files a session read and their modification times; `changed()` says
    which changed since (checked at each prompt: ConfigChange hooks). queryloop applies
    settings when a session starts, so a change takes effect in the next one."""

    files: Sequence[tuple[Path, str]]
    """(path, scope) of each settings file."""
    _seen: dict[Path, float | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._seen = {path: _mtime(path) for path, _scope in self.files}

    def changed(self) -> list[tuple[str, Path]]:
        """(ConfigChange source, path) of every file changed since the last call."""
        found: list[tuple[str, Path]] = []
        for path, scope in self.files:
            now = _mtime(path)
            if now != self._seen.get(path):
                self._seen[path] = now
                found.append((SETTINGS_SOURCES.get(scope, "project_settings"), path))
        return found


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns / 1e9
    except OSError:
        return None
