"""Interpreters given inline code: where the code is, in which language, as data.

The parse reads shell; it stops at the language boundary. `python3 -c CODE`, `perl -e CODE`,
an awk program, … are found (`inline_runs`) and returned as *foreign* runs: a deny or ask
rule whose program appears as a word in that code, or in the words the code can read (its
arguments), asks — in every mode (`shell_match`). Code that mentions no rule's program runs as
usual. Where the inline code is shell (`sed`'s `e COMMAND`, `expect`'s `spawn`/`exec`), it is
parsed as shell. What no word check can see (code that builds the name `'r'+'m'`) is held by
the OS sandbox (docs/settings.md).

`INTERPRETERS` is the one table: each entry says which options carry code, which take another
value, whether options may follow operands, whether the first operand is the program (awk),
and whether the interpreter reads code from stdin when given none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .parse import Word
from .runs import Run, code, unknown
from .sed import sed_runs


@dataclass(frozen=True, slots=True)
class Interpreter:
    """How one interpreter's command line carries inline code."""

    language: str
    code_short: str = ""
    """Short options whose value is code (`-c CODE`, `-cCODE`, `-Ic CODE`)."""
    code_long: frozenset[str] = field(default_factory=frozenset)
    """Long options whose value is code (`--eval CODE`, `--eval=CODE`)."""
    code_attached: str = ""
    """Short options whose attached value is code (`perl -M'X;…'`, which becomes `use X;…`)."""
    short_arg: str = ""
    """Other short options taking a value (attached or the next word)."""
    rest_letters: str = ""
    """Short options whose optional value is the rest of the cluster (`perl -i.bak`)."""
    digit_letters: str = ""
    """Short options followed by optional digits (`perl -l0`, `-0777`)."""
    long_arg: frozenset[str] = field(default_factory=frozenset)
    """Long options taking the next word as value."""
    end_letters: str = ""
    """Options after which a module, not code, runs (`python -m`)."""
    file_options: frozenset[str] = field(default_factory=frozenset)
    """Options naming a program file instead of an inline program (awk `-f`)."""
    attached: bool = True
    """Short options may have their value attached (`-cCODE`); node's `-pe` is `-p -e`."""
    single_dash_long: bool = False
    """Long options may be written with one dash (`gdb -ex`, `emacs -eval`)."""
    permute: bool = False
    """Options may follow operands (GNU getopt): scan every word."""
    program_operand: bool = False
    """Without a code option or program file, the first operand is the program (awk)."""
    stdin: bool = True
    """With no code and no script, the interpreter reads code from stdin."""


def _i(language: str, code_short: str = "", code_long: str = "", **kw: object) -> Interpreter:
    for name in ("long_arg", "file_options"):
        if isinstance(kw.get(name), str):
            kw[name] = frozenset(str(kw[name]).split())
    return Interpreter(language, code_short, frozenset(code_long.split()), **kw)  # type: ignore[arg-type]


_PYTHON = _i("Python", "c", short_arg="WX", end_letters="m", long_arg="check-hash-based-pycs")
_PERL = _i(
    "Perl", "eE", code_attached="Mm", short_arg="I", rest_letters="ixdDCF", digit_letters="l0"
)
_RUBY = _i("Ruby", "e", short_arg="rICE", rest_letters="xWTKiF", digit_letters="0")
_NODE = _i(
    "JavaScript",
    "ep",
    "eval print",
    short_arg="rC",
    long_arg="require import loader experimental-loader conditions input-type env-file",
    attached=False,
)
_AWK = _i(
    "awk",
    "e",
    "source",
    short_arg="vFfiElW",
    long_arg="assign field-separator file include load exec",
    file_options="f file E exec",
    program_operand=True,
    stdin=False,
)
_LUA = _i("Lua", "e", short_arg="l")
_TCL = _i("Tcl", "c", short_arg="fD", permute=True)

INTERPRETERS: dict[str, Interpreter] = {
    "python": _PYTHON,
    "pypy": _PYTHON,
    "perl": _PERL,
    "ruby": _RUBY,
    "node": _NODE,
    "nodejs": _NODE,
    "bun": _i("JavaScript", "ep", "eval print", attached=False, stdin=False),
    "php": _i("PHP", "rBRE", short_arg="cdfzFtS"),
    "awk": _AWK,
    "gawk": _AWK,
    "mawk": _AWK,
    "nawk": _AWK,
    "lua": _LUA,
    "luajit": _LUA,
    "Rscript": _i("R", "e", stdin=False),
    "R": _i("R", "e", stdin=False),
    "julia": _i("Julia", "eE", "eval print", short_arg="tpLJCH", digit_letters="O"),
    "raku": _i("Raku", "e", short_arg="IM"),
    "perl6": _i("Raku", "e", short_arg="IM"),
    "osascript": _i("AppleScript", "e", short_arg="ls"),
    "expect": _TCL,
    "tclsh": _i("Tcl", permute=True),
    "wish": _i("Tcl", permute=True),
    "pwsh": _i("PowerShell", "c", "command", single_dash_long=True, stdin=False),
    "powershell": _i("PowerShell", "c", "command", single_dash_long=True, stdin=False),
    "gdb": _i(
        "gdb",
        "",
        "ex eval-command iex init-eval-command",
        single_dash_long=True,
        short_arg="xpcdsb",
        permute=True,
        stdin=False,
    ),
    "emacs": _i("Emacs Lisp", "", "eval execute", single_dash_long=True, permute=True, stdin=False),
    "psql": _i("SQL (psql)", "c", "command", short_arg="dfhpUoLvPTFRS", permute=True),
    "mysql": _i("SQL (mysql)", "e", "execute", short_arg="uhpPSDo", permute=True),
    "vim": _i("Vim script", "c", "cmd", short_arg="SswWTuUi", permute=True, stdin=False),
    "ipython": _i("Python", "c", end_letters="m", stdin=False),
    "ipython3": _i("Python", "c", end_letters="m", stdin=False),
    "groovy": _i("Groovy", "e", stdin=False),
    "bb": _i("Clojure", "e", "eval", stdin=False),
    "make": _i("Make", "", "eval", short_arg="CfIjlLoW", permute=True, stdin=False),
}
"""Interpreter by program name (`python3.12`, `perl5.36`, `lua5.4` are found by their stem).
`deno eval CODE`, `sed`, vim's `+CMD` and sqlite3 are handled below the table."""

for _alias in ("nvim", "vi", "view", "ex", "gvim"):
    INTERPRETERS[_alias] = INTERPRETERS["vim"]

_STDIN = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_VERSIONED = re.compile(r"^(python|pypy|perl|ruby|lua|php|node|tclsh|wish)[0-9.]*$")
_TCL_RUN = re.compile(r"(?:^|[;\n\[{])\s*(?:spawn|exec)\s+([^;\n\]}]*)")


def interpreter(name: str) -> Interpreter | None:
    """The table entry for a program name, versions included (`python3.12`)."""
    found = INTERPRETERS.get(name)
    if found is not None:
        return found
    match = _VERSIONED.match(name)
    return INTERPRETERS.get(match.group(1)) if match else None


def is_interpreter(name: str) -> bool:
    """True when `inline_runs` has something to say about `name`."""
    return name in ("sed", "gsed", "deno", "sqlite3") or interpreter(name) is not None


def inline_runs(name: str, words: Sequence[Word], stdin: Word | None, piped: bool) -> list[Run]:
    """The inline code an interpreter invocation runs (`words[0]` is the program)."""
    if name in ("sed", "gsed"):
        return sed_runs(words)
    if name == "deno":
        if len(words) > 2 and words[1].value == "eval":
            return [_foreign("TypeScript", name, _operands(words[2:])[:1], words)]
        return []
    if name == "sqlite3":
        operands = [w for w in words[1:] if not (w.value or "").startswith("-")]
        return [_foreign("SQL (sqlite3)", name, operands[1:], words)] if len(operands) > 1 else []
    spec = interpreter(name)
    if spec is None:
        return []
    codes, operands, file_given, module = _scan(spec, words)
    if spec is INTERPRETERS["vim"]:  # `vim +CMD file`
        codes += [Word((w.value or "")[1:]) for w in operands if (w.value or "").startswith("+")]
    if module:
        return []
    if not codes and spec.program_operand and not file_given and operands:
        codes = operands[:1]
    if codes:
        runs = [_foreign(spec.language, name, codes, words)]
        return runs + (_tcl_runs(name, codes) if spec.language == "Tcl" else [])
    script = operands[0] if operands else None
    if script is not None and script.code is not None:  # `python3 <(echo CODE)`
        return [_foreign(spec.language, name, [Word(script.code)], words)]
    if script is not None and script.value is None and not file_given:
        return [unknown(f"{name} runs a script that is not statically known")]
    if spec.stdin and not file_given and (script is None or script.value in _STDIN):
        return _stdin(spec, name, stdin, piped, words)
    return []


def _scan(spec: Interpreter, words: Sequence[Word]) -> tuple[list[Word], list[Word], bool, bool]:
    """(code values, operands, a program file was given, a module runs) for one argv."""
    codes: list[Word] = []
    operands: list[Word] = []
    file_given = module = False
    i, n = 1, len(words)
    while i < n:
        value = words[i].value
        after = words[i + 1] if i + 1 < n else Word("")
        if value is None or value == "-" or not value.startswith("-"):
            operands.append(words[i])
            if not spec.permute and value is not None:
                operands += words[i + 1 :]
                break
            i += 1
            continue
        if value == "--":
            operands += words[i + 1 :]
            break
        long = _long_name(spec, value)
        if long is not None:
            name, eq, attached = long.partition("=")
            if name in spec.code_long:
                codes.append(Word(attached) if eq else after)
            file_given = file_given or name in spec.file_options
            takes = name in spec.code_long or name in spec.long_arg
            i += 2 if takes and not eq else 1
            continue
        step, found, file_option, ends = _cluster(spec, value[1:], after)
        codes += found
        file_given, module = file_given or file_option, module or ends
        if ends:
            break
        i += step
    return codes, operands, file_given, module


def _long_name(spec: Interpreter, value: str) -> str | None:
    """`--name[=value]` without its dashes; `-name` too where one dash is allowed (then
    case-insensitive, as PowerShell and gdb read them). None for a short cluster."""
    if value.startswith("--"):
        return value[2:]
    if spec.single_dash_long and len(value) > 2:
        name = value[1:].lower()
        if name.partition("=")[0] in spec.code_long | spec.long_arg:
            return name
    return None


def _cluster(spec: Interpreter, letters: str, after: Word) -> tuple[int, list[Word], bool, bool]:
    """One `-abc` cluster: (words used, code values, a program file, a module ends options)."""
    j = 0
    while j < len(letters):
        letter, rest = letters[j], letters[j + 1 :]
        value_here = bool(rest) and spec.attached
        if letter in spec.code_short:
            return (1, [Word(rest)], False, False) if value_here else (2, [after], False, False)
        if letter in spec.code_attached:
            return 1, [Word(rest)] if rest else [], False, False
        if letter in spec.end_letters:
            return 1, [], False, True
        if letter in spec.short_arg:
            return (1 if value_here else 2), [], letter in spec.file_options, False
        if letter in spec.rest_letters:
            return 1, [], False, False
        j += 1
        if letter in spec.digit_letters:
            while j < len(letters) and letters[j].isdigit():
                j += 1
    return 1, [], False, False


def _operands(words: Sequence[Word]) -> list[Word]:
    return [w for w in words if not (w.value or "").startswith("-")]


def _foreign(language: str, name: str, codes: Sequence[Word], words: Sequence[Word]) -> Run:
    known = [w.value for w in codes if w.value is not None]
    text = "\n".join(known) if len(known) == len(codes) else None
    return Run("foreign", f"{language} code given to {name}", Word(text), tuple(words[1:]))


def _stdin(
    spec: Interpreter, name: str, stdin: Word | None, piped: bool, words: Sequence[Word]
) -> list[Run]:
    if stdin is not None:
        runs = [_foreign(spec.language, name, [stdin], words)]
        return runs + (_tcl_runs(name, [stdin]) if spec.language == "Tcl" else [])
    if piped:
        return [unknown(f"{name} reads {spec.language} code from a pipe")]
    return []


def _tcl_runs(name: str, codes: Sequence[Word]) -> list[Run]:
    """`spawn CMD…` and `exec CMD…` in Tcl/expect code run an argv: parse it as shell words."""
    runs: list[Run] = []
    for word in codes:
        for match in _TCL_RUN.finditer(word.value or ""):
            runs.append(code(f"{name} spawn/exec", Word(match.group(1))))
    return runs


# -- programs that run shell code --------------------------------------------------------------

_SU = _i("shell", "c", "command session-command", short_arg="sgGwu", permute=True)
SHELL_CODE: dict[str, Interpreter] = {
    "script": _i("shell", "c", "command", short_arg="ITBOmEo", rest_letters="t", permute=True),
    "su": _SU,
    "runuser": _SU,
    "nix-shell": _i("shell", "", "run command", short_arg="pAIE", permute=True),
}
"""Programs whose `-c CODE` is shell code (clusters such as `script -qc` included;
`nix-shell --run/--command CODE`). Without it they start a shell that reads its commands from
stdin."""


def shell_code_runs(name: str, words: Sequence[Word], stdin: Word | None, piped: bool) -> list[Run]:
    """The shell code `script`/`su`/`runuser` run (parsed by the caller like `bash -c`)."""
    spec = SHELL_CODE[name]
    codes, _operands, _file, _module = _scan(spec, words)
    if codes:
        return [code(f"{name} -c", word) for word in codes]
    if name == "runuser" and any(
        w.value == "-u" or (w.value or "").startswith("--user") for w in words
    ):
        return []  # `runuser -u USER CMD…` runs an argv (looked at as a wrapper would be)
    if stdin is not None:
        return [code(name, stdin)]
    if piped:
        return [unknown(f"{name} starts a shell that reads commands from a pipe")]
    return []
