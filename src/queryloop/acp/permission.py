"""Every permission question goes to the editor: `session/request_permission`.

The choices are Claude Code's: "Always Allow" (where a rule can describe the call: it joins
the session and the project's local settings, as the REPL's `[a]lways` writes it), "Allow"
once, and "Reject". A cancelled question (the client cancelled the prompt) rejects the
call and stops the turn, as Ctrl-C at the REPL's question does.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallProgress, ToolCallUpdate

from .host import AcpHost
from .tool_calls import raw, tool_info

if TYPE_CHECKING:
    from acp.interfaces import Client

    from ..permissions import PermissionRequest

log = logging.getLogger("queryloop.acp")

ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ONCE = "allow_always", "allow", "reject"
"""The option ids (Zed's Claude Code adapter uses the same)."""


def options(rule: str | None) -> list[PermissionOption]:
    """The choices for one call: "Always Allow" only where a rule describes it."""
    always = (
        [PermissionOption(option_id=ALLOW_ALWAYS, name="Always Allow", kind="allow_always",
                          field_meta={"queryloop": {"rule": rule}})]
        if rule is not None else []
    )  # fmt: skip
    return [
        *always,
        PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once"),
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    ]


@dataclass(frozen=True)
class PermissionBridge:
    """The Agent's `can_use_tool` for one ACP session."""

    client: Client
    session_id: Callable[[], str]
    """The session's id as the client knows it (read at each question)."""
    host: AcpHost
    on_cancelled: Callable[[], None]
    """Stops the turn (the question was cancelled)."""

    async def __call__(
        self, tool: str, input: Mapping[str, Any], request: PermissionRequest
    ) -> Any:
        """Ask the client; True (once), False (reject) or `PermissionAllow(remember=True)`."""
        from ..permissions import PermissionAllow

        rule = self.host.always_rule(request)
        response = await self.client.request_permission(
            session_id=self.session_id(),
            tool_call=_tool_call(tool, input, request),
            options=options(rule),
        )
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            self.on_cancelled()
            return False
        if outcome.option_id not in (ALLOW_ONCE, ALLOW_ALWAYS):
            return False
        await self._running(request)
        if outcome.option_id == ALLOW_ALWAYS and rule is not None:
            self._save(request, rule)
            return PermissionAllow(remember=True)
        return True

    async def _running(self, request: PermissionRequest) -> None:
        """An allowed call runs now: its status goes from pending to in_progress."""
        if request.tool_use_id:
            update = ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=request.tool_use_id,
                status="in_progress",
            )
            await self.client.session_update(session_id=self.session_id(), update=update)

    def _save(self, request: PermissionRequest, rule: str) -> None:
        try:
            path = self.host.save_rule(request.cwd, rule)
        except (OSError, ValueError) as exc:
            log.warning("allowed %s for this session; could not save it: %s", rule, exc)
            return
        log.info("added allow rule %s to this session and to %s", rule, path)


def _tool_call(tool: str, input: Mapping[str, Any], request: PermissionRequest) -> ToolCallUpdate:
    info = tool_info(tool, input, request.cwd)
    reason = str(request.reason or "")
    return ToolCallUpdate(
        tool_call_id=request.tool_use_id or f"question-{uuid.uuid4().hex[:12]}",
        title=info.title,
        kind=info.kind,
        status="pending",
        content=info.content or None,
        locations=info.locations or None,
        raw_input=raw(dict(input)),
        field_meta={"queryloop": {"reason": reason}} if reason else None,
    )
