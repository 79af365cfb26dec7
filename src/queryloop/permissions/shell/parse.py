"""Parse one Bash command line with tree-sitter-bash into simple commands with resolved words.

This is the first half of how Bash permission rules see a command (the second half, looking
through wrappers and nested shells, is `shell_unwrap`). For every simple command anywhere in
the line — in lists, pipelines, subshells, `{ …; }` groups, `if`/`for`/`while`/`case` bodies,
function bodies, command and process substitutions — it yields the words the shell will pass to
`execve`, after quote and escape removal: `'r''m'`, `\\rm`, `"rm"` and `$'\\x72m'` are all `rm`.

A word whose value depends on the run (`$X`, `${…}`, `$(…)`, backticks, globs, brace
expansion) is *dynamic*: its value is None. Callers treat a dynamic program as unknown and fail
closed. A line tree-sitter cannot parse without errors sets `ParsedLine.error`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .vars import Scope, Template, template_of, unescape_double_quoted

_LINE_CONTINUATION = re.compile(r"(?<!\\)((?:\\\\)*)\\\n")
_GLOB = re.compile(r"(?<!\\)(?:\\\\)*[*?\[]")
_UNESCAPED_BLANK = re.compile(rb"(?<!\\)(?:\\\\)*[ \t\n]")
"""A blank the shell would split a word at (an even number of backslashes before it)."""
_BRACE = re.compile(r"(?<!\\)(?:\\\\)*\{[^{}]*(?:,|\.\.)[^{}]*\}")
_SPECIAL = re.compile(r"[\\*?\[{]")
_PLAIN_UNSAFE = re.compile(rb"['\"\\$`*?\[\]{}()<>;&|#\n]|^\S*=")
_BACKSLASH = re.compile(r"\\(.)", re.DOTALL)
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)")
_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "-"})


class Word(NamedTuple):
    """One shell word after quote removal; `value` None means not statically known.

    A NamedTuple rather than a frozen dataclass: a long line has hundreds of words and a
    dataclass's frozen `__init__` would be most of the parse's cost.
    """

    value: str | None
    glob: bool = False
    """Contains unquoted `*`, `?` or `[` (pathname expansion may change it)."""
    code: str | None = None
    """For `<(echo …)`: the text the process substitution prints (sourced code)."""
    template: Template | None = None
    """For a word known only at run time: its text in pieces when it is built from literal
    text and variables the line assigns literals or leaves to the session (`"$D/x"`,
    `$HOME/x`; see `shell_vars`); None when no check can know it (`$(…)`, `$1`)."""
    text: str | None = None
    """For a word known only at run time: the word as written (`"$F"`), for messages."""

    @property
    def static(self) -> bool:
        """True when the shell passes exactly `value`."""
        return self.value is not None and not self.glob


DYNAMIC = Word(None)


class SimpleCommand(NamedTuple):
    """One simple command: its words (program first) and what feeds its stdin."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    """Names of `NAME=value` prefixes."""
    stdin: Word | None = None
    """A here-document, here-string or `echo …|` text the command reads (None: none known)."""
    piped: bool = False
    """Reads the output of an earlier pipeline stage that is not a static `echo`."""


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """Every simple command of a line, the redirection targets, and what an allow rule
    cannot see through (`hazards`)."""

    commands: tuple[SimpleCommand, ...]
    redirect_targets: tuple[Word, ...]
    hazards: tuple[str, ...]
    error: str | None = None
    assignments: tuple[tuple[str, Word], ...] = ()
    """Every `NAME=value` of the line with its value: prefixes, `export`/`declare`/`local`
    arguments and plain assignments (for the variables that make programs run code)."""
    write_targets: tuple[Word, ...] = ()
    """The redirection targets written to (`>`, `>>`, `>|`, `&>`, `<>`; not `<`)."""


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "surrogateescape") if raw is not None else ""


def parse_line(command: str) -> ParsedLine:
    """Parse `command` (not cached: `shell_unwrap.analyze` caches the whole analysis)."""
    source = _LINE_CONTINUATION.sub(r"\1", command) if "\\\n" in command else command
    # tree-sitter-bash glues a word that starts a line with `\` to the line before
    # (`ls⏎\rm` would be one command); leading blanks change nothing for the shell.
    source = source.replace("\n\\", "\n \\")
    encoded = source.encode("utf-8", "surrogateescape")
    tree = _parser().parse(encoded)
    walker = _Walker(tree.root_node, encoded)
    walker.walk(tree.root_node)
    failed = tree.root_node.has_error or walker.misparsed
    error = "the command could not be parsed" if failed else None
    hazards = tuple(dict.fromkeys(walker.hazards + (["unparsable"] if error else [])))
    return ParsedLine(
        tuple(walker.commands),
        tuple(walker.targets),
        hazards,
        error,
        tuple(walker.assignments),
        tuple(walker.writes),
    )


class _Walker:
    """Collects simple commands from a syntax tree (iteratively: no recursion limit)."""

    def __init__(self, root: Node, source: bytes) -> None:
        self._root, self._source = root, source
        self._scope: Scope | None = None
        self.commands: list[SimpleCommand] = []
        self.targets: list[Word] = []
        self.writes: list[Word] = []
        self.hazards: list[str] = []
        self.assignments: list[tuple[str, Word]] = []
        self._extra_args: dict[int, list[Node]] = {}
        self._stdin: dict[int, Word] = {}
        self._piped: set[int] = set()
        self.misparsed = False
        """An unquoted word holds a newline or an unescaped blank (tree-sitter reads
        `sudo { {` with `{ {` as one word; bash splits it): the parse disagrees with the
        shell's."""

    def walk(self, root: Node) -> None:
        """Visit the nodes that matter, found by one tree-sitter query (in C, not Python);
        pipelines and redirections first, so their commands know what feeds them."""
        found = QueryCursor(_query()).captures(root)
        for name in _CAPTURE_ORDER:
            handler = _HANDLERS[name]
            for node in found.get(name, ()):
                handler(self, node)

    def word(self, node: Node) -> Word:
        """`word_of`, and for a word known only at run time its template and text."""
        word = word_of(node)
        if word.value is not None:
            return word
        if self._scope is None:  # built once, for the first such word of the line
            self._scope = Scope(self._root, self._source, _decode)
        found = template_of(node, self._scope, _decode)
        if found is None:
            return Word(None, code=word.code, text=_text(node))
        return Word(None, found[1], word.code, found[0], _text(node))

    # -- handlers -------------------------------------------------------------------------

    def command(self, node: Node) -> None:
        """Record one simple command."""
        raw = node.text or b""
        if _PLAIN_UNSAFE.search(raw) is None:
            # the common case, a plain `prog arg arg`: its words are the text split at blanks
            plain = raw.decode("utf-8", "surrogateescape").split()
            self._add(node, [Word(w) for w in plain], [])
            return
        words: list[Word] = []
        names: list[str] = []
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                names.append(_text(name) if name is not None else "?")
            elif kind == "command_name":
                words.append(
                    self.word(child.named_children[0]) if child.named_children else DYNAMIC
                )
            elif kind == "herestring_redirect":
                self.hazards.append("here-document")
                self._stdin[node.id] = _redirect_word(child)
            elif kind == "file_redirect":
                self.file_redirect(child)
            elif kind != "comment" and words:
                words.append(self.word(child))
            if kind == "word" and _UNESCAPED_BLANK.search(child.text or b""):
                self.misparsed = True
        self._add(node, words, names)

    def _add(self, node: Node, words: list[Word], names: list[str]) -> None:
        if self._extra_args or self._stdin or self._piped:
            key = node.id
            words.extend(self.word(extra) for extra in self._extra_args.get(key, ()))
            stdin = self._stdin.get(key)
            piped = key in self._piped and stdin is None
        else:
            stdin, piped = None, False
        if names:
            self.hazards.append("environment assignment")
        if words:
            self.commands.append(SimpleCommand(tuple(words), tuple(names), stdin, piped))

    def redirected_statement(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        for child in node.named_children:
            if child.type == "file_redirect":  # `> f` alone (no body) truncates f too
                extras = self.file_redirect(child)
                if extras and body is not None and body.type == "command":
                    self._extra_args.setdefault(body.id, []).extend(extras)
            elif child.type in ("heredoc_redirect", "herestring_redirect") and body is not None:
                self.hazards.append("here-document")
                word = _heredoc_word(child) if child.type == "heredoc_redirect" else None
                self._feed(body, word or _redirect_word(child))
                for inner in child.named_children:
                    if inner.type == "pipeline":  # `cat <<EOF | sh`: the rest reads a pipe
                        for stage in inner.named_children:
                            self._feed(stage, None)
                    elif inner.type == "file_redirect":  # `cat <<EOF > f`
                        self.file_redirect(inner)

    def file_redirect(self, node: Node) -> list[Node]:
        """Record the target; returns words tree-sitter attached after it (they are args)."""
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        operator = next((c.type for c in node.children if not c.is_named), ">")
        if targets:
            target = self.word(targets[0])
            duplicate = operator in (">&", "<&") and (target.value or "").rstrip("-").isdigit()
            if not duplicate and target.value not in _SAFE_TARGETS:
                self.targets.append(target)
                if operator not in ("<", "<&"):
                    self.writes.append(target)
                self.hazards.append("redirection")
        return targets[1:]

    def pipeline(self, node: Node) -> None:
        stages = [c for c in node.named_children if c.type != "comment"]
        for before, stage in itertools.pairwise(stages):
            text = _echo_output(before)
            self._feed(stage, None if text is None else Word(text))

    def _feed(self, node: Node, stdin: Word | None) -> None:
        """`node` reads `stdin` (None: a pipe of unknown content)."""
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            node = body if body is not None else node
        if node.type == "command":
            if stdin is None:
                self._piped.add(node.id)
            else:
                self._stdin[node.id] = stdin
            return
        stack = list(node.named_children)
        while stack:  # a compound stage: every command inside may read the pipe
            inner = stack.pop()
            if inner.type == "command":
                self._piped.add(inner.id)
            stack.extend(inner.named_children)

    def substitution(self, node: Node) -> None:
        self.hazards.append(node.type.replace("_", " "))

    def declaration(self, node: Node) -> None:
        self.hazards.append("declaration")

    def assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        word = word_of(value) if value is not None else Word("")
        self.assignments.append((_text(name) if name is not None else "?", word))
        parent = node.parent
        if parent is None or parent.type != "command":
            self.hazards.append("environment assignment")


_HANDLERS: dict[str, Any] = {
    "redirected_statement": _Walker.redirected_statement,
    "pipeline": _Walker.pipeline,
    "command": _Walker.command,
    "command_substitution": _Walker.substitution,
    "process_substitution": _Walker.substitution,
    "declaration_command": _Walker.declaration,
    "unset_command": _Walker.declaration,
    "variable_assignment": _Walker.assignment,
}
_CAPTURE_ORDER = tuple(_HANDLERS)


@lru_cache(maxsize=1)
def _query() -> Query:
    patterns = " ".join(f"({kind}) @{kind}" for kind in _HANDLERS)
    return Query(Language(tree_sitter_bash.language()), patterns)


def _redirect_word(node: Node) -> Word:
    values = [c for c in node.named_children if c.type not in ("file_descriptor", "pipeline")]
    return word_of(values[-1]) if values else DYNAMIC


def _heredoc_word(node: Node) -> Word | None:
    start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
    body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
    if body is None:
        return Word("")
    quoted = start is not None and any(q in _text(start) for q in "'\"\\")
    if not quoted and body.named_children:  # unquoted body with $… or `…`: run-time text
        return DYNAMIC
    return Word(_text(body))


def _echo_output(node: Node) -> str | None:
    """What a static `echo WORDS` pipeline stage prints (None: not such a stage)."""
    if node.type != "command":
        return None
    names = [c for c in node.named_children if c.type != "comment"]
    if not names or names[0].type != "command_name":
        return None
    words = [word_of(names[0].named_children[0]) if names[0].named_children else DYNAMIC]
    words += [word_of(c) for c in names[1:]]
    if words[0].value != "echo" or not all(w.static for w in words):
        return None
    args = [w.value or "" for w in words[1:]]
    if args and args[0] in ("-e", "-E", "-n", "-en", "-ne"):
        args = args[1:]
    return " ".join(args)


def word_of(node: Node) -> Word:
    """The value of one word-like node after quote and escape removal."""
    kind = node.type
    if kind == "word":
        return _unquoted(_text(node))
    if kind == "number":
        return Word(_text(node))
    if kind == "raw_string":
        return Word(_text(node)[1:-1])
    if kind == "string":
        return _double_quoted(node)
    if kind == "translated_string":
        inner = [c for c in node.named_children if c.type == "string"]
        return _double_quoted(inner[0]) if inner else Word("")
    if kind == "ansi_c_string":
        return _ansi_c(_text(node)[2:-1])
    if kind == "concatenation":
        parts = [word_of(c) for c in node.children]
        if any(p.value is None for p in parts):
            return DYNAMIC
        return Word("".join(p.value or "" for p in parts), glob=any(p.glob for p in parts))
    if kind == "process_substitution":
        return Word(None, code=_substituted_echo(node))
    return DYNAMIC


def _decode(node: Node) -> tuple[str | None, bool]:
    word = word_of(node)
    return word.value, word.glob


def _unquoted(text: str) -> Word:
    if _SPECIAL.search(text) is None or text in ("{", "}"):
        return Word(text)
    if "{" in text and _BRACE.search(text):
        return DYNAMIC
    glob = _GLOB.search(text) is not None
    return Word(_BACKSLASH.sub(r"\1", text) if "\\" in text else text, glob=glob)


def _double_quoted(node: Node) -> Word:
    parts: list[str] = []
    for child in node.named_children:
        if child.type != "string_content":
            return DYNAMIC
        parts.append(unescape_double_quoted(_text(child)))
    return Word("".join(parts))


def _ansi_c(body: str) -> Word:
    """Decode `$'…'` escapes as bash does; a NUL ends the word (bash truncates there)."""

    def decode(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc[0] in "xuU":
            return chr(int(esc[1:], 16))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc[0] == "c" and len(esc) == 2:
            return chr(ord(esc[1].upper()) ^ 0x40)
        return _ANSI_SIMPLE.get(esc, "\\" + esc)

    try:
        value = _ANSI.sub(decode, body)
    except (ValueError, OverflowError):
        return DYNAMIC
    return Word(value.split("\0", 1)[0])


def _substituted_echo(node: Node) -> str | None:
    commands = [c for c in node.named_children if c.type != "comment"]
    return _echo_output(commands[0]) if len(commands) == 1 else None
