"""GNU sed's commands that run shell: `e COMMAND`, `e` alone and the `s///e` flag.

sed(1) (GNU): "e command: executes command and sends its output to the output stream";
"e" without a command executes the pattern space; the `e` flag of `s` executes the pattern
space after the substitution. `--sandbox` rejects them. `e COMMAND` is shell code, parsed
like `bash -c`; the other two run text of the input, so they are foreign to the parse: a deny
rule whose program appears in the replacement (or the script) asks. Every other sed script
(`s/curl/wget/`, `/x/d`, …) runs nothing: the look-alike `sed -i 's/curl/wget/' setup.sh`
stays allowed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .parse import Word
from .runs import Run, code, unknown

_SED_ARG = frozenset("lf")
_SED_LONG_ARG = frozenset({"expression", "file", "line-length"})


def sed_runs(words: Sequence[Word]) -> list[Run]:
    """GNU sed runs shell commands with `e COMMAND`, `e` (the pattern space) and `s///e`;
    `--sandbox` turns them off."""
    scripts: list[Word] = []
    operands: list[Word] = []
    from_file = False
    i = 1
    while i < len(words):
        value = words[i].value
        after = words[i + 1] if i + 1 < len(words) else Word(None)
        if value == "--sandbox":
            return []
        if value is None or not value.startswith("-") or value == "-":
            operands.append(words[i])
        elif value.startswith("--"):
            name, eq, attached = value[2:].partition("=")
            name = next((n for n in _SED_LONG_ARG if len(name) >= 2 and n.startswith(name)), name)
            if name == "expression":
                scripts.append(Word(attached) if eq else after)
            from_file = from_file or name == "file"
            i += 1 if eq or name not in _SED_LONG_ARG else 2
            continue
        else:
            letters = value[1:]
            for j, letter in enumerate(letters):
                if letter == "e":
                    scripts.append(Word(letters[j + 1 :]) if letters[j + 1 :] else after)
                    i += 0 if letters[j + 1 :] else 1
                    break
                if letter in _SED_ARG:
                    from_file = from_file or letter == "f"
                    i += 0 if letters[j + 1 :] else 1
                    break
                if letter == "i":  # `-i[SUFFIX]`: the rest of the cluster is the suffix
                    break
        i += 1
    if not scripts and not from_file and operands:
        scripts = operands[:1]
    runs: list[Run] = []
    for script in scripts:
        runs += sed_script_runs(script, words)
    return runs


_SED_TEXT = frozenset("aic")
_SED_FILE = frozenset("rRwW")
_SED_LABEL = frozenset("bBtTvL:")
_SED_ADDRESS = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/\\])*/[IM]*|\\(.)(?:\\.|.)*?\1[IM]*)")


def sed_script_runs(script: Word, words: Sequence[Word]) -> list[Run]:
    """What one sed script runs: `e COMMAND` is shell code; `e` alone and the `s///e` flag run
    text of the input (foreign to the parse). A script that cannot be scanned and holds an `e`
    is taken as foreign."""
    text = script.value
    if text is None:
        return [unknown("sed is given a script that is not statically known")]
    try:
        return _SedScanner(text, words).runs()
    except ValueError:
        if "e" in text:
            return [Run("foreign", "a sed script that may use `e`", Word(text), tuple(words[1:]))]
        return []


class _SedScanner:
    def __init__(self, text: str, words: Sequence[Word]) -> None:
        self.s, self.i, self.words = text, 0, words
        self.out: list[Run] = []

    def runs(self) -> list[Run]:
        s = self.s
        while self.i < len(s):
            self.skip(" \t\n;")
            if self.i >= len(s):
                break
            self.address()
            self.skip(" \t")
            if s.startswith("!", self.i):
                self.i += 1
                self.skip(" \t")
            if self.i >= len(s):
                raise ValueError("address without a command")
            self.command(s[self.i])
        return self.out

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def address(self) -> None:
        for _ in range(2):
            match = _SED_ADDRESS.match(self.s, self.i)
            if match is None or match.end() == self.i:
                return
            self.i = match.end()
            if self.s.startswith(",", self.i):
                self.i += 1
                if self.s.startswith(("+", "~"), self.i):
                    self.i += 1
                continue
            return

    def line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def command(self, c: str) -> None:
        self.i += 1
        if c in "{}":
            return
        if c == "#" or c in _SED_TEXT or c in _SED_FILE:
            self.line()
        elif c in _SED_LABEL:
            while self.i < len(self.s) and self.s[self.i] not in ";\n":
                self.i += 1
        elif c == "e":
            command = self.line().strip()
            if command:
                self.out.append(code("sed e", Word(command)))
            else:
                self.out.append(unknown("sed `e` runs lines of its input as shell commands"))
        elif c in "sy":
            self.substitute(c)
        elif c not in "=dDgGhHlnNpPqQxzF" and not c.isspace():
            raise ValueError(f"unknown sed command {c!r}")
        else:
            self.skip("0123456789")

    def substitute(self, c: str) -> None:
        if self.i >= len(self.s):
            raise ValueError("s without a delimiter")
        delim = self.s[self.i]
        self.i += 1
        parts = [self.part(delim), self.part(delim)]
        if c == "y":
            return
        flags = ""
        while self.i < len(self.s) and self.s[self.i] not in ";\n}":
            if self.s[self.i] == "w":
                self.line()
                break
            flags += self.s[self.i]
            self.i += 1
        if "e" in flags:
            what = "sed's s///e flag runs the pattern space as a shell command"
            self.out.append(Run("foreign", what, Word(parts[1]), tuple(self.words[1:])))

    def part(self, delim: str) -> str:
        out: list[str] = []
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\" and self.i + 1 < len(self.s):
                out.append(self.s[self.i : self.i + 2])
                self.i += 2
                continue
            self.i += 1
            if ch == delim:
                return "".join(out)
            out.append(ch)
        raise ValueError("unterminated s command")
