"""Options of everyday programs whose value is a command the program runs itself.

`ssh -o ProxyCommand=CMD` runs CMD on this machine (ssh_config(5): ProxyCommand,
LocalCommand, KnownHostsCommand; `scp`/`sftp -S PROGRAM`); `rsync -e/--rsh CMD` (rsync(1));
GNU tar's `--to-command`, `-I/--use-compress-program`, `--checkpoint-action=exec=CMD`,
`-F/--info-script/--new-volume-script` (tar(1)); `man -P/--pager` (man(1)); `zip -TT/
--unzip-command` (zip(1)); `at`/`batch` read shell code from stdin (at(1)); GNU `parallel`
runs its command as shell code (parallel(1)); `tmux new-session/new-window/split-window/
respawn-pane/run-shell CMD` and `send-keys` (typed into a shell) (tmux(1)). Each value is
parsed as shell code, like `bash -c`; `ssh -F FILE` (a config file that may hold a
ProxyCommand) fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence

from .parse import Word
from .runs import Run, code, quoted_tail, unknown

_SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
_TMUX_COMMAND = frozenset(
    "new-session new new-window neww split-window splitw respawn-pane respawnp respawn-window "
    "respawnw run-shell run display-popup popup".split()
)

PROGRAMS = frozenset(
    {"ssh", "scp", "sftp", "rsync", "tar", "man", "zip", "at", "batch", "parallel", "tmux"}
)
"""Programs `program_runs` looks at."""


def program_runs(name: str, words: Sequence[Word], stdin: Word | None, piped: bool) -> list[Run]:
    """The commands `words` (an argv of `name`) makes its program run."""
    if name in ("ssh", "scp", "sftp"):
        return _ssh(name, words)
    if name == "rsync":
        return _options(name, words, {"e"}, {"rsh"})
    if name == "tar":
        return _tar(words)
    if name == "man":
        return _options(name, words, {"P"}, {"pager"})
    if name == "zip":
        return _options(name, words, {"TT"}, {"unzip-command"}, single_dash={"TT"})
    if name in ("at", "batch"):
        if any((w.value or "") == "-f" for w in words):
            return []
        if stdin is not None:
            return [code(name, stdin)]
        return [unknown(f"{name} reads shell commands from a pipe")] if piped else []
    if name == "parallel":
        return _parallel(words)
    return _tmux(words)


def _options(
    name: str,
    words: Sequence[Word],
    short: set[str],
    long: set[str],
    *,
    single_dash: frozenset[str] | set[str] = frozenset(),
) -> list[Run]:
    runs: list[Run] = []
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        after = words[i + 1] if i + 1 < len(words) else Word("")
        if value.startswith("--"):
            key, eq, attached = value[2:].partition("=")
            if any(option.startswith(key) and len(key) >= 3 for option in long):
                runs.append(code(f"{name} --{key}", Word(attached) if eq else after))
        elif value[1:] in single_dash:
            runs.append(code(f"{name} {value}", after))
        elif value.startswith("-") and len(value) > 1 and value[1] in short:
            rest = value[2:]
            runs.append(code(f"{name} -{value[1]}", Word(rest) if rest else after))
    return runs


def _ssh(name: str, words: Sequence[Word]) -> list[Run]:
    runs = _options(name, words, {"S"} if name != "ssh" else set(), set())
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        if value in ("-o", "-F") and i + 1 < len(words):
            option, given = value, words[i + 1]
        elif value.startswith(("-o", "-F")) and len(value) > 2:
            option, given = value[:2], Word(value[2:])
        else:
            continue
        if option == "-F":
            if given.value not in ("/dev/null", "none"):
                runs.append(unknown(f"{name} -F reads a config file that may run commands"))
            continue
        runs += _ssh_option(name, given)
    return runs


def _ssh_option(name: str, given: Word) -> list[Run]:
    """`-o Key=Value` or `-o 'Key Value'` (ssh_config(5) allows both)."""
    if given.value is None:
        return [unknown(f"{name} -o sets an option that is not statically known")]
    text = given.value.strip()
    cut = min((i for i in (text.find("="), text.find(" ")) if i >= 0), default=-1)
    if cut < 0:
        return []
    key, value = text[:cut].strip().lower(), text[cut + 1 :].strip()
    if key in _SSH_COMMAND_KEYS:
        return [code(f"{name} -o {text[:cut]}", Word(value))]
    return []


def _tar(words: Sequence[Word]) -> list[Run]:
    runs = _options(
        "tar",
        words,
        {"I", "F"},
        {"to-command", "use-compress-program", "info-script", "new-volume-script"},
    )
    for word in words[1:]:
        value = word.value or ""
        if value.startswith("--checkpoint-action=") and "exec=" in value:
            runs.append(code("tar --checkpoint-action=exec", Word(value.split("exec=", 1)[1])))
    return runs


def _parallel(words: Sequence[Word]) -> list[Run]:
    """`parallel [OPTIONS] CMD… ::: ARGS`: the command words before `:::` are shell code."""
    values = [w.value for w in words]
    end = next((i for i, v in enumerate(values) if v in (":::", "::::", ":::+")), len(words))
    i = 1
    while i < end and (values[i] or "").startswith("-"):
        i += 1
    if i >= end:
        return []
    first = words[i].value
    return [code("parallel", None if first is None else quoted_tail(first, words[i + 1 : end]))]


def _tmux(words: Sequence[Word]) -> list[Run]:
    """`tmux [-L sock] SUBCOMMAND [-flags] [CMD [ARGS]]`: CMD is shell code; `send-keys` types
    into a shell. Which words are option values differs by subcommand (`-d` is a flag of
    `new-session` and takes a folder in `display-popup`), so every non-option word is tried
    as the start of the command: a session named like a denied program may be refused, a
    command is never missed."""
    i = 1
    while i < len(words) and (words[i].value or "").startswith("-"):
        i += 2 if (words[i].value or "")[1:] in ("L", "S", "f", "T") else 1
    if i >= len(words):
        return []
    sub, rest = words[i].value, list(words[i + 1 :])
    if sub in ("send-keys", "send"):
        keys = [w for w in rest if not (w.value or "").startswith("-")]
        typed = (
            None if any(w.value is None for w in keys) else " ".join(w.value or "" for w in keys)
        )
        return [code("tmux send-keys", Word(typed))] if keys else []
    if sub not in _TMUX_COMMAND:
        return []
    runs: list[Run] = []
    for j, word in enumerate(rest):
        first = word.value
        if first is None or not first.startswith("-"):
            tail = None if first is None else quoted_tail(first, rest[j + 1 :])
            runs.append(code(f"tmux {sub}", tail))
    return runs
