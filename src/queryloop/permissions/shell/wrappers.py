"""Programs that run another command, and how to find that command among their options.

`sudo -u root rm -rf x` runs `rm -rf x`; `timeout -s KILL 5 rm -rf x` too. Each wrapper has an
option `Spec` (which options take a value, how many operands come before the command) so the
inner command is found exactly. An option the spec does not know makes the position uncertain:
the caller then tries every later word as the start of the inner command, each match capped at
"might match" (the user is asked) — an unknown option never hides a denied command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .parse import Word


@dataclass(frozen=True, slots=True)
class Spec:
    """A wrapper's command line: `WRAPPER [OPTIONS] [OPERANDS] COMMAND [ARGS]`."""

    short_arg: str = ""
    """Short options that take a value (`-u root`, `-uroot`)."""
    short_flags: str = ""
    """Short options without a value; `*` accepts any letter."""
    long_arg: frozenset[str] = field(default_factory=frozenset)
    long_flags: frozenset[str] = field(default_factory=frozenset)
    short_optarg: str = ""
    """Short options whose value, if any, is attached (`xargs -i{}`)."""
    operands: int = 0
    """Words between the options and the command (`timeout DURATION`, `flock FILE`)."""
    numeric_operand: bool = False
    """The operand is optional and present only when it is a number (`chrt [PRIO]`)."""
    assignments: bool = False
    """`NAME=value` words may precede the command (`env`, `sudo`)."""
    numeric_flags: bool = False
    """`-10` is an option (`nice -10 cmd`)."""
    no_command: str = ""
    """Short options that mean no command runs (`command -v`)."""


def _spec(
    short_arg: str = "",
    short_flags: str = "",
    long_arg: str = "",
    long_flags: str = "",
    *,
    short_optarg: str = "",
    operands: int = 0,
    numeric_operand: bool = False,
    assignments: bool = False,
    numeric_flags: bool = False,
    no_command: str = "",
) -> Spec:
    return Spec(
        short_arg,
        short_flags,
        frozenset(long_arg.split()),
        frozenset(long_flags.split()),
        short_optarg,
        operands,
        numeric_operand,
        assignments,
        numeric_flags,
        no_command,
    )


WRAPPERS: dict[str, Spec] = {
    "sudo": _spec(
        "ugpCDrtTUhR",
        "AbEeHiKklnPSsVvNB",
        "user group prompt chdir close-from role type command-timeout other-user host",
        "askpass background preserve-env edit set-home login remove-timestamp reset-timestamp "
        "list non-interactive preserve-groups stdin shell version validate bell",
        assignments=True,
    ),
    "doas": _spec("uC", "nsL"),
    "env": _spec(
        "uCSa",
        "i0v",
        "unset chdir split-string argv0",
        "ignore-environment null debug list-signal-handling block-signal default-signal "
        "ignore-signal",
        assignments=True,
    ),
    "nice": _spec("n", "", "adjustment", numeric_flags=True),
    "nohup": _spec(),
    "time": _spec("fo", "apvq", "format output", "append verbose portability quiet"),
    "timeout": _spec(
        "sk", "v", "signal kill-after", "preserve-status foreground verbose", operands=1
    ),
    "stdbuf": _spec("ioe", "", "input output error"),
    "setsid": _spec("", "cfw", "", "ctty fork wait"),
    "xargs": _spec(
        "adEILnPs",
        "0prtx",
        "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var eof replace",
        "null interactive no-run-if-empty verbose exit show-limits open-tty",
        short_optarg="eil",
    ),
    "command": _spec("", "pvV", no_command="vV"),
    "builtin": _spec(),
    "exec": _spec("a", "cl"),
    "ionice": _spec("cnpPu", "t", "class classdata pid pgid uid", "ignore", no_command="pPu"),
    "chrt": _spec(
        "TPD",
        "bdfioramevR",
        "sched-runtime sched-period sched-deadline",
        "batch deadline fifo idle other rr all-tasks max verbose reset-on-fork",
        operands=1,
        numeric_operand=True,
        no_command="p",
    ),
    "unbuffer": _spec("", "p"),
    "noglob": _spec(),
    "chroot": _spec("", "", "userspec groups", "skip-chdir", operands=1),
    "taskset": _spec("", "ac", "", "all-tasks cpu-list", operands=1, no_command="p"),
    "faketime": _spec("f", "m", operands=1),
    "strace": _spec("abeEIoOpPsSuUX", "cCdDfFhiknNqrTtvVwxyYzZ"),
    "ltrace": _spec("aAeFlnopsuxX", "bCcDfhiLrStTV"),
    "unshare": _spec("", "*"),
    "busybox": _spec(),
    "dbus-run-session": _spec(),
    "proxychains": _spec("f", "q"),
    "proxychains4": _spec("f", "q"),
    "torsocks": _spec("uapP", "iqd"),
    "caffeinate": _spec("tw", "dimsu"),
    "firejail": _spec("", "*"),
    "catchsegv": _spec(),
    "valgrind": _spec("", "*"),
    "systemd-run": _spec("pEMuHsrtS", "*"),
    "flock": _spec(
        "wE",
        "sxenuoF",
        "timeout conflict-exit-code",
        "shared exclusive nonblock unlock close no-fork verbose",
        operands=1,
    ),
    "watch": _spec(
        "nq",
        "dtbegcxpwCr",
        "interval equexit",
        "differences no-title beep errexit chgexit color exec precise no-wrap no-linewrap",
    ),
    "ssh": _spec("BbcDEeFIiJLlmOoPpQRSWw", "46AaCfGgKkMNnqsTtVvXxYy", operands=1),
}
"""Wrappers whose inner command is an argv (see `shell_unwrap` for `watch`, `flock -c`, `ssh`,
`env -S`, `find -exec` and the shells, which hand over code)."""

SUBCOMMAND_WRAPPERS: dict[tuple[str, str], Spec] = {
    ("uv", "run"): _spec("p", "*"),
    ("poetry", "run"): _spec("", "*"),
    ("pipenv", "run"): _spec("", "*"),
    ("pdm", "run"): _spec("", "*"),
    ("bundle", "exec"): _spec("", "*"),
    ("conda", "run"): _spec("np", "*"),
    ("npm", "exec"): _spec("", "*"),
    ("pnpm", "exec"): _spec("", "*"),
    ("mise", "exec"): _spec("", "*"),
}
"""`uv run CMD`, `poetry run CMD`, …: a subcommand that runs any program."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """Where the inner command starts, and whether that is certain."""

    index: int | None
    """None: no command runs (`command -v x`) or none is given."""
    certain: bool
    options: tuple[tuple[str, Word | None], ...] = ()
    """Each option seen, with its value (for `env -S`, `flock -c`, `watch -x`)."""


def skip_options(words: Sequence[Word], start: int, spec: Spec) -> Skipped:
    """Find the inner command in `words[start:]` according to `spec`."""
    i, n, certain = start, len(words), True
    seen: list[tuple[str, Word | None]] = []
    while i < n:
        value = words[i].value
        if value is None:
            certain = False  # a dynamic word may be an option or the command itself
            break
        if value == "--":
            i += 1
            break
        if value.startswith("--") and len(value) > 2:
            name, eq, attached = value[2:].partition("=")
            if name in spec.long_arg and not eq:
                seen.append((name, words[i + 1] if i + 1 < n else None))
                i += 2
                continue
            seen.append((name, Word(attached) if eq else None))
            certain = certain and (name in spec.long_arg or name in spec.long_flags)
            i += 1
            continue
        if value.startswith("-") and len(value) > 1:
            step, ok = _short(words, i, spec, seen)
            certain = certain and ok
            i += step
            continue
        break
    if any(name in spec.no_command for name, _ in seen if len(name) == 1):
        return Skipped(None, certain, tuple(seen))
    i = _skip_operands(words, i, spec)
    return Skipped(i if i < n else None, certain, tuple(seen))


def _short(
    words: Sequence[Word], i: int, spec: Spec, seen: list[tuple[str, Word | None]]
) -> tuple[int, bool]:
    """One `-abc` cluster: (words consumed, every letter known)."""
    value = words[i].value or ""
    letters = value[1:]
    if spec.numeric_flags and letters.isdigit():
        return 1, True
    known = True
    for j, letter in enumerate(letters):
        rest = letters[j + 1 :]
        if letter in spec.short_arg:
            if rest:
                seen.append((letter, Word(rest)))
                return 1, known
            seen.append((letter, words[i + 1] if i + 1 < len(words) else None))
            return 2, known
        if letter in spec.short_optarg:
            seen.append((letter, Word(rest) if rest else None))
            return 1, known
        seen.append((letter, None))
        known = known and (letter in spec.short_flags or spec.short_flags == "*")
    return 1, known


def _skip_operands(words: Sequence[Word], i: int, spec: Spec) -> int:
    if spec.assignments:
        while i < len(words) and is_assignment(words[i].value):
            i += 1
    for _ in range(spec.operands):
        if i >= len(words):
            break
        if spec.numeric_operand and not (words[i].value or "").isdigit():
            break
        i += 1
    return i


def is_assignment(value: str | None) -> bool:
    """True for a `NAME=value` argument of `env`/`sudo`: like GNU env, any word with a `=`
    that does not start with one (`BASH_FUNC_ls%%=() {…}` too, which bash imports as a
    function); not an option (`--chdir=DIR`)."""
    return bool(value) and "=" in (value or "") and not (value or "").startswith(("=", "-"))
