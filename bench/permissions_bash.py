"""A Bash permission check with 100 rules and a 1 kB command (plain script, prints numbers).

.venv/bin/python bench/permissions_bash.py

Three figures: a *cold* check (a command text never seen before: one tree-sitter parse, the
wrapper analysis and every rule compared), a *warm* check (the same text again: the analysis
and the per-rule verdicts come from the cache keyed by the command text) and the parse alone.
Times are CPU time of this process (`time.process_time`), so a busy machine does not inflate
them. Goal: under 1 ms per check.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from queryloop.permissions import PermissionChecker, PermissionContext, PermissionMode, RuleSet
from queryloop.permissions.shell.parse import parse_line
from queryloop.tools.base import ToolContext
from queryloop.tools.builtin import BashTool

PIECES = [
    "git -C . status --short",
    "ls -la src | grep -v __pycache__",
    'echo "building $TARGET" > /dev/null',
    "timeout 60 python3 -m pytest -q tests/unit",
    "find . -name '*.pyc' -exec wc -l {} +",
    "sudo -u build make -j4 all",
    "env -i PATH=/usr/bin npm run lint",
    "{ cat README.md; wc -l src/*.py; }",
]


def command(n: int) -> str:
    """A ~1 kB line, different for each n (so the cache cannot help the cold figure)."""
    parts: list[str] = []
    i = 0
    while len(" && ".join(parts)) < 1000:
        parts.append(PIECES[i % len(PIECES)] + (f" a{n}" if i == 0 else ""))
        i += 1
    return " && ".join(parts)[:1024]


def rules() -> RuleSet:
    deny = [f"Bash(danger{i}:*)" for i in range(40)]
    deny += ["Bash(rm -rf:*)", "Bash(curl:*)", "Bash(git push:*)", "Bash(*gcloud*)"]
    deny += [f"Read(./secret{i}.env)" for i in range(6)]
    allow = [f"Bash(tool{i}:*)" for i in range(44)] + ["Bash(git status:*)", "Bash(ls:*)"]
    allow += ["Bash(grep:*)", "Bash(echo:*)", "Bash(timeout:*)", "Bash(find:*)"]
    return RuleSet.from_strings(allow=allow, deny=deny)


async def bench(cwd: Path) -> None:
    ruleset = rules()
    count = len(ruleset.allow) + len(ruleset.deny)
    checker = PermissionChecker(
        PermissionContext(mode=PermissionMode.DEFAULT, rules=ruleset, home=cwd)
    )
    ctx, tool = ToolContext(cwd=cwd), BashTool()
    lines = [command(n) for n in range(400)]
    assert all(900 <= len(line) <= 1024 for line in lines), [len(x) for x in lines[:3]]
    for line in lines[:20]:  # warm up imports and the parser
        await checker.evaluate(tool, {"command": line + " x"}, ctx)
    cold: list[float] = []
    for line in lines:
        start = time.process_time()
        await checker.evaluate(tool, {"command": line}, ctx)
        cold.append(time.process_time() - start)
    warm: list[float] = []
    for line in lines:
        start = time.process_time()
        await checker.evaluate(tool, {"command": line}, ctx)
        warm.append(time.process_time() - start)
    parse: list[float] = []
    for line in lines:
        start = time.process_time()
        parse_line(line)
        parse.append(time.process_time() - start)
    print(f"{count} rules, {len(lines[0])}-byte commands, {len(lines)} checks each")
    for name, values in (("cold check", cold), ("warm check", warm), ("parse only", parse)):
        median = statistics.median(values) * 1e3
        p90 = statistics.quantiles(values, n=10)[-1] * 1e3
        print(f"{name:>11}: median {median:.3f} ms, p90 {p90:.3f} ms")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp)))


if __name__ == "__main__":
    main()
