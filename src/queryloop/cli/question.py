"""What the permission question shows before `[y]es / [n]o`: the whole call, and for Bash what
the analysis found in it.

A person approves what they can see. The call is never cut (a side effect at the end of a long
line, `python3 -c '…' ; touch /tmp/x/HIDDEN`, is the part that matters): a one-line subject
stands in the question, wrapped to the terminal; one of several lines follows it, indented, as
it is. For a Bash command the permission analysis (`permissions.shell.bash.summarize`, the same
parse the rules use) lists the commands it runs when there is more than the line itself, the
files it writes, the programs whose writes no parse can tell, and what it could not see.

Pure functions of the call: rich markup lines, unit-tested, drawn by the REPL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.markup import escape

from ..permissions.shell.bash import CommandSummary, summarize
from ..permissions.shell.writes import WriteTarget

SUBJECT_KEYS = ("command", "file_path", "path", "url", "pattern", "query")
"""The input field a tool's question is about, in the order they are looked for."""
MAX_LISTED = 20
"""Commands or files listed by name; the call itself is always shown whole above them."""
_LABEL = 10


def call_subject(input: Mapping[str, Any]) -> str:
    """The text the question is about: the main field as given (a command with its newlines),
    else the input as compact JSON."""
    for key in SUBJECT_KEYS:
        value = input.get(key)
        if isinstance(value, str) and value:
            return value
    return json.dumps(dict(input), ensure_ascii=False, separators=(",", ":"))


def question_lines(
    tool: str, input: Mapping[str, Any], *, reason: str = "", asker: str = ""
) -> list[str]:
    """The markup lines above the answer prompt (the diff of an edit is drawn after them)."""
    subject = call_subject(input)
    who = f"[bold]{escape(asker)}[/] asks: " if asker else ""
    why = f" [dim]({escape(reason)})[/]" if reason else ""
    if "\n" in subject.strip("\n"):
        lines = [f"{who}[yellow]Allow {escape(tool)}?[/]{why}"]
        lines += [f"  {escape(line)}" for line in subject.strip("\n").splitlines()]
    else:
        lines = [f"{who}[yellow]Allow {escape(tool)}({escape(subject.strip())})?[/]{why}"]
    if tool == "Bash" and isinstance(input.get("command"), str):
        lines += analysis_lines(summarize(str(input["command"])))
    return lines


def analysis_lines(found: CommandSummary) -> list[str]:
    """`runs` / `writes` / `unknown` lines for a command: the commands when there are
    several (one is the line itself), then whatever is known about what it writes."""
    lines: list[str] = []
    if len(found.commands) > 1:
        lines += _labelled("runs", list(found.commands))
    writes = [_target(t) for t in found.writes]
    if found.writes_at_run_time:
        writes.append("files named only when it runs")
    lines += _labelled("writes", writes)
    unknown = [f"what {program} writes" for program in found.opaque]
    unknown += [f"not analysable: {reason}" for reason in found.unseen]
    lines += _labelled("unknown", unknown)
    return lines


def _labelled(label: str, items: list[str]) -> list[str]:
    shown = items[:MAX_LISTED]
    if len(items) > MAX_LISTED:
        shown.append(f"… {len(items) - MAX_LISTED} more")
    return [
        f"  [dim]{(label if i == 0 else ''):<{_LABEL}}[/]{escape(item)}"
        for i, item in enumerate(shown)
    ]


def _target(target: WriteTarget) -> str:
    what = f"{target.word} and everything in it" if target.tree else target.word
    if target.names:
        what += f" (files named {', '.join(target.names)})"
    return f"{what} ({target.program})"
