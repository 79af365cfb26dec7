"""Whether an allow rule NAMES a protected path (`rule_names`): the narrow way a protected
write is approved (docs/settings.md, "Protected paths"). Rule semantics, so beside the rules;
what a call writes is `shell.write_guard`'s."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import paths
from .rules import MatchContext, PermissionRule

if TYPE_CHECKING:
    from .shell.write_guard import ProtectedWrite


def rule_names(rule: PermissionRule, write: ProtectedWrite, mc: MatchContext) -> bool:
    """Does the allow rule name the protected path `write` reaches? Its literal (glob-free)
    part must reach into the protected entry: `Edit(.queryloop/skills/**)` names the skills
    folder, `Edit(**)` and `Edit(src/**)` do not; a Bash rule names it when it is the exact
    command or one of its words is the path (or lies inside the protected entry)."""
    content = (rule.content or "").strip()
    if not content:
        return False
    if rule.tool == "Bash":
        return _bash_rule_names(content, write, mc)
    return _path_rule_names(rule, content, write, mc)


def _path_rule_names(
    rule: PermissionRule, content: str, write: ProtectedWrite, mc: MatchContext
) -> bool:
    from .shell.write_guard import GLOB_CHARS  # loaded already: a write was found

    pattern = paths.compile_pattern(content, root=rule.root or mc.cwd, cwd=mc.cwd, home=mc.home)
    text = content.rstrip("/")
    for prefix in ("//", "~/", "./", "/"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    parts = text.split("/") if text else []
    anchored = content.startswith(("/", "~", "./")) or "/" in content.rstrip("/")
    cut = next((i for i, part in enumerate(parts) if GLOB_CHARS & set(part)), len(parts))
    if not anchored:  # `Edit(.mcp.json)`: a bare name names the entry called so
        return cut == len(parts) and parts[-1:] == [write.entry.path.name]
    literal = Path(os.path.normpath(os.path.join(pattern.base, *parts[:cut])))
    entry = write.entry.path
    return literal == entry or (entry in literal.parents and write.entry.is_dir)


def _bash_rule_names(content: str, write: ProtectedWrite, mc: MatchContext) -> bool:
    from .shell.writes import expand  # loaded already: a write was found

    spec = content[:-2] if content.endswith(":*") else content
    tokens = [t for t in spec.replace("*", " ").split() if t]
    for token in tokens:
        for path in expand(token.strip("'\""), False, [str(mc.cwd)], home=str(mc.home)):
            literal = Path(os.path.normpath(path))
            entry = write.entry.path
            if literal == entry or (write.entry.is_dir and entry in literal.parents):
                return True
    return "*" not in content and not content.endswith(":*")  # an exact command line
