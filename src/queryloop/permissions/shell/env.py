"""Environment variables that make a program run code, and what setting one runs.

Found in a line as `VAR=… cmd` prefixes, `env`/`sudo` arguments (`env VAR=… cmd`), and
`export VAR=…` / `declare -x` / plain `VAR=…` assignments anywhere in the line (a later
command of the line inherits them; the analysis does not track which one, it looks at every
such assignment). Sources: git(1) "Environment variables", ssh(1) `SSH_ASKPASS`, less(1)
`LESSOPEN`, bash(1) `BASH_ENV`, `ENV`, `PROMPT_COMMAND`, `PS0`-`PS4` and exported functions,
ld.so(8) `LD_PRELOAD`/`LD_AUDIT`, node(1) `NODE_OPTIONS`, perlrun(1) `PERL5OPT`/`PERL5DB`,
ruby(1) `RUBYOPT`, python(1) `PYTHONSTARTUP`.

Deliberately not here: `PATH`, `PYTHONPATH`, `NODE_PATH`, `PERL5LIB`, `RUBYLIB`,
`LD_LIBRARY_PATH`. They choose where a program's code is found (`PYTHONPATH=src pytest` is
everyday use), like running a script from that folder directly would; the OS sandbox, not
the parse, holds what such code does.
"""

from __future__ import annotations

from .parse import Word
from .runs import Run, code, unknown

CODE_VARIABLES = frozenset(
    "GIT_SSH_COMMAND GIT_SSH GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF "
    "GIT_ASKPASS GIT_PROXY_COMMAND SSH_ASKPASS SUDO_ASKPASS PAGER EDITOR VISUAL SUDO_EDITOR "
    "MANPAGER SYSTEMD_PAGER SYSTEMD_EDITOR KUBE_EDITOR SVN_EDITOR SVN_SSH BROWSER FCEDIT "
    "PROMPT_COMMAND RSYNC_RSH RSYNC_CONNECT_PROG CVS_RSH LESSOPEN LESSCLOSE".split()
)
"""Variables whose value is a command a program runs (through `sh -c` or as a program)."""

FILE_VARIABLES = frozenset(
    "BASH_ENV ENV ZDOTDIR LD_PRELOAD LD_AUDIT DYLD_INSERT_LIBRARIES PYTHONSTARTUP GIT_EXEC_PATH "
    "GIT_TEMPLATE_DIR GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG".split()
)
"""Variables naming a file or folder of code a program loads: the parse cannot read it, so a
deny rule fails closed (`/dev/null` and the empty value are safe)."""

PROMPT_VARIABLES = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4"})
"""Expanded by bash when it prints a prompt (`PS4` under `set -x`): `$(…)` in them runs."""

_OPTION_VARIABLES = frozenset({"NODE_OPTIONS", "RUBYOPT", "PERL5OPT", "PERL5DB"})


def executes(name: str) -> bool:
    """True when setting the variable `name` may make a program run code."""
    return (
        name in CODE_VARIABLES
        or name in FILE_VARIABLES
        or name in PROMPT_VARIABLES
        or name in _OPTION_VARIABLES
        or name.startswith(("BASH_FUNC_", "GIT_CONFIG_"))
    )


_NODE_LOADERS = ("-r", "--require", "--import", "--loader", "--experimental-loader")


def assignment_runs(name: str, value: Word) -> list[Run]:
    """What setting `name` to `value` makes a program run."""
    what = f"{name}=…"
    text = value.value
    if name in CODE_VARIABLES:
        if text is not None and name in ("LESSOPEN", "LESSCLOSE"):
            text = text.lstrip("|-")  # `|cmd %s`, `||cmd`, `-cmd`: the command itself
        return [] if text == "" else [code(what, Word(text) if text is not None else None)]
    if name in FILE_VARIABLES:
        if text in ("", "/dev/null"):
            return []
        shown = text if text is not None else "a value known only at run time"
        return [
            unknown(f"{name} names a file or folder of code the analysis cannot read ({shown})")
        ]
    if name in PROMPT_VARIABLES:
        if text is None or "$(" in text or "`" in text:
            return [unknown(f"{name} is expanded as a prompt and may run command substitutions")]
        return []
    if name.startswith("BASH_FUNC_"):  # an exported function: bash defines it at start-up
        if text is None:
            return [unknown(f"{name} defines a function that is not statically known")]
        return (
            [code(f"the exported function {name}", Word("f" + text))]
            if text.startswith("(")
            else []
        )
    return _option_variable(name, text)


def _option_variable(name: str, text: str | None) -> list[Run]:
    """Interpreter option variables: code to load (`NODE_OPTIONS`, `RUBYOPT`) or to inline."""
    if name not in _OPTION_VARIABLES:
        return []
    if text is None:
        return [unknown(f"{name} is not statically known and may load code")]
    if name in ("PERL5OPT", "PERL5DB"):  # `-M'X;system(…)'` becomes `use X;system(…)`
        return [Run("foreign", f"Perl code in {name}", Word(text))]
    tokens = text.split()
    if name == "NODE_OPTIONS" and any(t.split("=", 1)[0] in _NODE_LOADERS for t in tokens):
        return [unknown(f"NODE_OPTIONS loads a file of code ({text})")]
    if name == "RUBYOPT" and any(t.startswith("-r") for t in tokens):
        return [unknown(f"RUBYOPT requires a file of code ({text})")]
    return []
