"""The permission prompt's `[a]lways`: which rule it adds, whether it can, and where it is saved.

As in Claude Code ("Yes, and don't ask again for: cd:*" writes `Bash(cd:*)` to
`.claude/settings.local.json`; see anthropics/claude-code#29400), the rule goes to the
project's *local* settings, `.queryloop/settings.local.json` (personal, not committed), and
also applies for the rest of this session. A chained, piped, substituted or redirected command
cannot be approved "always": a `Bash(prefix:*)` rule never matches such a command (see
docs/settings.md), so the rule would be useless and the prompt would come back; the prompt says
so instead of offering it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCAL_SETTINGS = Path(".queryloop") / "settings.local.json"


@dataclass(frozen=True, slots=True)
class AlwaysOffer:
    """What `[a]lways` would do for one call: the rule, or why there is none."""

    rule: str | None
    why_not: str = ""


def always_offer(request: Any) -> AlwaysOffer:
    """The rule `[a]lways` adds for a `PermissionRequest`, or why it cannot be offered."""
    from ..permissions import MatchContext, PermissionRule, RuleSet

    rule = str(request.suggested_rule or "")
    if not rule:
        return AlwaysOffer(None, "no rule describes this call")
    subject: str | None = None
    if request.tool_name == "Bash":
        from ..permissions.shell.bash import analyze

        subject = str(request.input.get("command", ""))
        analysis = analyze(subject)
        if analysis.hazards:
            return AlwaysOffer(None, _bash_reason(rule, "; ".join(analysis.hazards)))
        if len(analysis.commands) > 1:
            return AlwaysOffer(None, _bash_reason(rule, "it chains several commands"))
    else:
        raw = request.input.get("file_path") or request.input.get("path")
        if isinstance(raw, str) and raw:
            path = Path(raw).expanduser()
            subject = str(path if path.is_absolute() else Path(request.cwd) / path)
    rules = RuleSet(allow=(PermissionRule.parse(rule, "allow", source="session"),))
    context = MatchContext(Path(request.cwd), Path.home())
    if rules.find("allow", request.tool_name, subject, context) is None:
        return AlwaysOffer(None, f"the rule {rule} would not match this call")
    return AlwaysOffer(rule)


def _bash_reason(rule: str, what: str) -> str:
    return (
        f"{what}, and an allow rule such as {rule} never approves a command like that "
        "(approve it once, or allow each command on its own)"
    )


def save_local_rule(cwd: Path, rule: str) -> Path:
    """Add `rule` to `permissions.allow` in the project's local settings; returns the file.

    Keeps everything else in the file; writes atomically. Raises `ValueError` when the file
    exists but is not a JSON object (it is left untouched)."""
    path = cwd / LOCAL_SETTINGS
    data: dict[str, Any] = {}
    if path.is_file():
        loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} is not a JSON object")
        data = loaded
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ValueError(f"{path}: permissions is not an object")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ValueError(f"{path}: permissions.allow is not a list")
    if rule not in allow:
        allow.append(rule)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings.local.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
