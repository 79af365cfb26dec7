"""The values of the shell variables a line assigns, so a write target built from them is known.

`F=.mcp.json; echo x > $F` writes `.mcp.json`, and `d=.mcp; cp x "${d}.json"` does too. A word
made of literal text and variable references gets a *template* (`Word.template`): its text,
with each variable replaced by what the line gave it. Anything else is known only at run time,
and the write guard fails closed on it (docs/settings.md, "Protected paths").

The rules are narrow so that they stay sound (`Scope.value_at`):

- a variable is known at a use when an assignment `NAME=literal` runs before the use on every
  path — a statement of the line's top level, the first of an `&&`/`||` list, or `export`/
  `declare`/`typeset`/`readonly NAME=literal` there; not in a pipeline, a subshell, a loop, a
  branch, a function or in the background — and every assignment of NAME anywhere in the line
  (prefixes, branches, functions, subshells) gives the same value;
- `for NAME in WORDS; do BODY; done` gives NAME its words inside BODY when nothing else sets it;
- a variable is unknown when anything else may set it: `read`, `mapfile`, `printf -v`,
  `getopts`, `unset`, namerefs, `((NAME=…))`, `${NAME:=…}`, `+=`, arrays. Rather than list
  every way, the name may appear nowhere in the line's text but in `$NAME`, `${NAME}` and its
  literal assignments (a value a builtin is given by an escape, `printf -v $'\\x66'`, counts
  too); and every variable is unknown after `eval`, `source`, `.`, `trap`, a program whose
  name is not static, or a variable-setting builtin given a word known only at run time;
- an unquoted use is split and globbed by the shell: a value with blanks (or any value once
  `IFS` is touched) is unknown, one with `*?[` is a glob;
- `$HOME`, `$PWD`, `$TMPDIR` that the line leaves alone stay references (`Ref`), resolved
  from the session and the tool's environment when the call is checked; `$$`, `$?`, `$#`,
  `$RANDOM`, … are numbers, written `0` (no protected name depends on a run of digits, and
  `/proc/0/cwd` is read as the command's folder as `/proc/$$/cwd` is).

This module sees only syntax nodes: the caller hands it the decoder of a plain word
(`shell_parse.word_of`), so the two do not import each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Query, QueryCursor


class Ref(NamedTuple):
    """A variable the line leaves to the session (`$HOME`, `$TMPDIR`)."""

    name: str
    quoted: bool
    """Inside double quotes (not split into words)."""


Template = tuple[str | Ref, ...]
"""A word's text in pieces: literal text and session variables."""

Decoder = Callable[[Node], tuple[str | None, bool]]
"""A plain word's value (None: not static) and whether it is a glob."""

NUMERIC = frozenset("$ ! ? # PPID BASHPID RANDOM SRANDOM SECONDS UID EUID LINENO".split())
"""Variables whose value is always a number."""
FROM_SESSION = frozenset({"HOME", "PWD", "TMPDIR", "HISTFILE"})
"""Variables the check can resolve when the line leaves them alone."""
RESETS = frozenset({"eval", "source", ".", "trap", "alias", "enable"})
"""Builtins after which any variable may hold anything."""
SETTERS = frozenset(
    "read mapfile readarray printf getopts wait unset let declare typeset local export "
    "readonly coproc".split()
)
"""Builtins that set the variables their arguments name (all unknown when a name is not
static)."""
MAX_ALTERNATIVES = 64

_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_ORDINARY = re.compile(rb"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
"""A command name that is its own value (no quotes, escapes or expansions)."""
_SPECIAL = frozenset(n.encode() for n in RESETS | SETTERS | {"command", "builtin"})
_GLOB = re.compile(r"[*?\[]")
_BLANK = re.compile(r"[ \t\n]")
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_REFERENCES = ("simple_expansion", "expansion")
_NAMES = ("variable_name", "special_variable_name")
_NOT_ARGUMENTS = frozenset(
    {"command_name", "variable_assignment", "file_redirect", "herestring_redirect", "comment"}
)
_FIRST_KEYWORDS = frozenset({"export", "declare", "typeset", "readonly"})
"""Declarations that set a global at the top level (`local` fails there)."""


def unescape_double_quoted(text: str) -> str:
    """The text of a `"…"` piece after bash removes its backslashes (`\\$`, `\\"`, `\\⏎`)."""
    return _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def set_in(line: str, name: str, *, assignments: bool = True) -> bool:
    """Whether `line` may set NAME: the name appears other than as `$NAME` or `${NAME}`
    (`assignments` False: other than in `NAME=` too, which the caller reads itself)."""
    rest = re.sub(rf"\$(?:{name}(?![A-Za-z0-9_])|\{{{name}\}})", "", line)
    if not assignments:
        rest = re.sub(rf"(?<![A-Za-z0-9_$]){name}=", "", rest)
    return re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", rest) is not None


def resets(values: Sequence[str | None]) -> bool:
    """Whether a command with these words (None: known only at run time) may set any
    variable: `eval`, `source`, a program not statically known, a setter given a name known
    only at run time (`read "$n"`)."""
    if not values:
        return False
    if values[0] is None or values[0] in RESETS:
        return True
    args = _setter_arguments(values)
    if args is None and values[0] in ("command", "builtin"):
        return resets(_after_options(values[1:]))
    return args is not None and None in args


def _setter_arguments(values: Sequence[str | None]) -> Sequence[str | None] | None:
    """The arguments of a builtin that sets the variables they name, or None when the
    command is no such builtin (`printf` without `-v`, `wait` without `-p`)."""
    program, args = values[0], values[1:]
    if program in ("command", "builtin"):
        rest = _after_options(args)
        return _setter_arguments(rest) if rest and rest[0] is not None else None
    if program in ("printf", "wait"):
        flag = "-v" if program == "printf" else "-p"
        if not (None in args[:1] or any(a and a.startswith(flag) for a in args)):
            return None
    return args if program in SETTERS else None


def _after_options(values: Sequence[str | None]) -> Sequence[str | None]:
    rest = list(values)
    while rest and rest[0] is not None and rest[0].startswith("-"):
        rest = rest[1:]
    return rest


@dataclass(frozen=True, slots=True)
class _Site:
    """One place the line sets a variable."""

    start: int
    end: int
    value: Node | None
    """The assigned word (None: `NAME=`, the empty string)."""
    first: bool
    """Runs before everything after it, on every path."""
    body: tuple[int, int] | None = None
    """A `for` loop's body (byte range): the variable takes `words` there."""
    words: tuple[Node, ...] = ()


class Scope:
    """What one piece of shell code (a line, or the code of a nested `bash -c`) assigns."""

    def __init__(self, root: Node, source: bytes, decode: Decoder) -> None:
        self._decode = decode
        self._sites: dict[str, list[_Site]] = {}
        self._touched: set[str] = set()
        self._untouched: set[str] = set()
        self._reset = False
        self._values: dict[int, Template | None] = {}
        self._scan(root, source)

    # -- the scan ---------------------------------------------------------------------------

    def _scan(self, root: Node, source: bytes) -> None:
        allowed: set[tuple[int, int]] = set()
        found = QueryCursor(_query()).captures(root)  # in C: only the nodes that matter
        for node in found.get("reference", ()):
            name = _reference_node(node)
            if name is not None:
                allowed.add((name.start_byte, name.end_byte))
        for node in found.get("assignment", ()):
            self._assignment(node, allowed)
        for node in found.get("loop", ()):
            self._loop(node, allowed)
        for node in found.get("command", ()):
            self._command(node)
        for node in found.get("declaration", ()):
            self._declaration(node)
        self._source, self._allowed = source, allowed

    def _is_touched(self, name: str) -> bool:
        """Whether NAME appears in the code other than as `$NAME`, `${NAME}` or the name of
        a literal assignment (looked up for the names a write target uses, and remembered)."""
        if name in self._touched:
            return True
        if name in self._untouched:
            return False
        pattern = re.compile(
            rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])"
        )
        touched = any(m.span() not in self._allowed for m in pattern.finditer(self._source))
        (self._touched if touched else self._untouched).add(name)
        return touched

    def _assignment(self, node: Node, allowed: set[tuple[int, int]]) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        operator = next((c.type for c in node.children if not c.is_named), "=")
        if name is None or name.type != "variable_name" or operator != "=":
            return  # `a[0]=x`, `a+=x`: the name stays touched
        if value is not None and value.type == "array":
            return
        allowed.add((name.start_byte, name.end_byte))
        site = _Site(node.start_byte, node.end_byte, value, _runs_first(node))
        self._sites.setdefault(_text(name), []).append(site)

    def _loop(self, node: Node, allowed: set[tuple[int, int]]) -> None:
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        keyword = node.children[0].type if node.children else ""
        has_in = any(c.type == "in" for c in node.children if not c.is_named)
        if keyword != "for" or not has_in or variable is None or body is None:
            return  # `select`, `for NAME; do` (the positional parameters)
        allowed.add((variable.start_byte, variable.end_byte))
        words = tuple(node.children_by_field_name("value"))
        site = _Site(
            node.start_byte, node.end_byte, None, False, (body.start_byte, body.end_byte), words
        )
        self._sites.setdefault(_text(variable), []).append(site)

    def _command(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is None or not name.named_children:
            return
        if _ORDINARY.fullmatch(name.text or b"") and (name.text or b"") not in _SPECIAL:
            return  # `ls`, `git`: no decoding needed to know it sets nothing
        args = [c for c in node.named_children if c.type not in _NOT_ARGUMENTS]
        values = [self._decode(w)[0] for w in [name.named_children[0], *args]]
        if resets(values):
            self._reset = True
            return
        for value in _setter_arguments(values) or ():
            self._touched.update(
                m.group().decode() for m in _IDENT.finditer((value or "").encode())
            )

    def _declaration(self, node: Node) -> None:
        keyword = node.children[0].type if node.children else ""
        words = [c for c in node.named_children if c.type != "variable_assignment"]
        for word in words:
            value, _ = self._decode(word)
            if value is None or value.startswith(("-", "+")):
                self._reset = True  # `declare -n r=f` (a nameref), `declare "$n=x"`
                return
        if keyword not in ("export", "readonly"):  # `export f` does not change f
            self._arguments(words)

    def _arguments(self, words: list[Node]) -> None:
        """A declaration's names: every name they spell is touched."""
        for word in words:
            value, _ = self._decode(word)
            self._touched.update(
                m.group().decode() for m in _IDENT.finditer((value or "").encode())
            )

    # -- values -----------------------------------------------------------------------------

    def value_at(self, name: str, at: int, *, quoted: bool) -> tuple[Template, bool] | None:
        """NAME's value at byte `at`, placed as the use places it (`quoted`), and whether it
        is a glob; None when it is known only at run time."""
        if name in NUMERIC:
            return ("0",), False
        if self._reset or self._is_touched(name):
            return None
        sites = self._sites.get(name)
        if not sites:
            return ((Ref(name, quoted),), False) if name in FROM_SESSION else None
        if len(sites) == 1 and sites[0].body is not None:
            return self._loop_value(sites[0], at, quoted)
        if any(s.body is not None for s in sites):
            return None
        if not any(s.first and s.end <= at for s in sites):
            return None
        values = {self._site_value(s) for s in sites}
        if len(values) != 1:
            return None
        value = values.pop()
        return None if value is None else self._placed(value, quoted)

    def _site_value(self, site: _Site) -> Template | None:
        if site.value is None:
            return ("",)
        if site.start in self._values:
            return self._values[site.start]
        self._values[site.start] = None  # `f=$f.x` refers to itself: unknown
        found = template_of(site.value, self, self._decode, assignment=True)
        value = found[0] if found is not None else None
        self._values[site.start] = value
        return value

    def _placed(self, value: Template, quoted: bool) -> tuple[Template, bool] | None:
        if quoted:
            return value, False
        if "IFS" in self._sites or self._is_touched("IFS"):
            return None
        texts = [p for p in value if isinstance(p, str)]
        if any(_BLANK.search(t) for t in texts):
            return None  # split into words
        placed = tuple(p if isinstance(p, str) else Ref(p.name, False) for p in value)
        return placed, any(_GLOB.search(t) for t in texts)

    def _loop_value(self, site: _Site, at: int, quoted: bool) -> tuple[Template, bool] | None:
        """Inside the body, one of the loop's words: as `{a,b}` when there are several (the
        check expands braces), a glob's matches when it is one (quoted uses only: a matched
        name may hold blanks)."""
        if site.body is None or not site.body[0] <= at < site.body[1]:
            return None
        values: list[str] = []
        glob = False
        for word in site.words:
            found = template_of(word, self, self._decode)
            if found is None or not all(isinstance(p, str) for p in found[0]):
                return None
            text = "".join(p for p in found[0] if isinstance(p, str))
            if any(c in text for c in "{},\\") or (not quoted and _BLANK.search(text)):
                return None
            values.append(text)
            glob = glob or found[1]
        if not values or len(values) > MAX_ALTERNATIVES or (glob and not quoted):
            return None
        text = values[0] if len(values) == 1 else "{" + ",".join(values) + "}"
        return (text,), glob


def template_of(
    node: Node, scope: Scope, decode: Decoder, *, assignment: bool = False, whole: bool = True
) -> tuple[Template, bool] | None:
    """The template of a word and whether it is a glob; None when some piece is known only
    at run time (a command substitution, `${X:-…}`, an array element, arithmetic).
    `assignment`: the word is the value of `NAME=…` (no splitting, no globbing); `whole`:
    the node is the whole word (a loop variable that stands for a glob's matches must be)."""
    kind = node.type
    if kind in _REFERENCES:
        return _referenced(node, scope, quoted=assignment, whole=whole)
    if kind == "string":
        return _double_quoted(node, scope, whole=whole)
    if kind == "concatenation":
        parts: list[str | Ref] = []
        glob = False
        for child in node.children:
            found = template_of(child, scope, decode, assignment=assignment, whole=False)
            if found is None:
                return None
            parts += found[0]
            glob = glob or found[1]
        return tuple(parts), glob
    if kind == "process_substitution":
        return ("/dev/fd/63",), False  # what bash passes: a pipe, not a file
    if kind == "$" and not node.is_named:  # tree-sitter's `x.$$` at a word's end, and `x$`
        text = _text(node)
        return ((("0",) if text == "$$" else ("$",)), False) if text in ("$", "$$") else None
    value, glob = decode(node)
    if value is None:
        return None
    return (value,), glob and not assignment


def _referenced(
    node: Node, scope: Scope, *, quoted: bool, whole: bool
) -> tuple[Template, bool] | None:
    name = _reference_node(node)
    if name is None:
        return None
    found = scope.value_at(_text(name), node.start_byte, quoted=quoted)
    if found is None:
        return None
    if found[1] and quoted and not whole:
        return None  # `"$f.bak"` for f in a glob's matches: not the glob `*.py.bak`
    if not quoted and whole and found[0] == ("",):
        return None  # an unquoted empty word disappears: the arguments shift
    return found


def _double_quoted(node: Node, scope: Scope, *, whole: bool) -> tuple[Template, bool] | None:
    parts: list[str | Ref] = []
    glob = False
    alone = whole and len(node.named_children) == 1
    for child in node.named_children:
        if child.type == "string_content":
            parts.append(unescape_double_quoted(_text(child)))
            continue
        found = None
        if child.type in _REFERENCES:
            found = _referenced(child, scope, quoted=True, whole=alone)
        if found is None:
            return None
        parts += found[0]
        glob = glob or found[1]
    return tuple(parts), glob


def _reference_node(node: Node) -> Node | None:
    """The name of a plain `$NAME` or `${NAME}` (None for `${NAME:-x}`, `${a[0]}`, `${#x}`)."""
    named = node.named_children
    if len(named) != 1 or named[0].type not in _NAMES:
        return None
    if node.type == "expansion" and node.child_count != 3:
        return None
    return named[0]


def _runs_first(node: Node) -> bool:
    """Whether the assignment runs, before what follows it, whatever happens."""
    child, parent = node, node.parent
    while parent is not None and parent.type != "program":
        kind = parent.type
        if kind == "declaration_command":
            keyword = parent.children[0].type if parent.children else ""
            if keyword not in _FIRST_KEYWORDS:
                return False
        elif kind == "list":
            if parent.named_children[0] != child:
                return False
        elif kind == "redirected_statement":
            if parent.child_by_field_name("body") != child:
                return False
        elif kind != "variable_assignments":
            return False
        child, parent = parent, parent.parent
    if parent is None:
        return False
    after = child.next_sibling
    return after is None or after.type != "&"  # `f=x &` sets f in a background subshell


@lru_cache(maxsize=1)
def _query() -> Query:
    return Query(
        Language(tree_sitter_bash.language()),
        """[(simple_expansion) (expansion)] @reference
        (variable_assignment) @assignment
        (for_statement) @loop
        (command) @command
        [(declaration_command) (unset_command)] @declaration""",
    )


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "surrogateescape") if raw is not None else ""
