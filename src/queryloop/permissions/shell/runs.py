"""What a program will run besides its own code, as plain data the analysis then follows.

`shell_git` (git's config keys and subcommands), `shell_env` (environment variables) and
`shell_inline` (interpreters given inline code) each turn one argv or one assignment into a
list of `Run`s; `shell_unwrap` follows them: shell code is parsed as `bash -c` is, an argv is
analysed like any command, an unknown fails closed, foreign code is kept for the deny rules'
word check (`shell_match`). Keeping the tables apart from the walk keeps each module small and
its table readable as documentation.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Literal, NamedTuple

from .parse import Word

RunKind = Literal["code", "argv", "unknown", "foreign"]


class Run(NamedTuple):
    """One thing a command will run.

    - `code`: shell code in `word` (parsed like `bash -c`); a dynamic word fails closed;
    - `argv`: the argv in `argv`;
    - `unknown`: code the parse cannot see (a file, a folder, a run-time value); `what` says why;
    - `foreign`: code of another language (`what` names it) in `word` plus the `argv` words it
      can read (its arguments): deny rules whose program appears in them ask.
    """

    kind: RunKind
    what: str
    word: Word | None = None
    argv: tuple[Word, ...] = ()


def code(what: str, word: Word | None) -> Run:
    """Shell code `word` run by `what`."""
    return Run("code", what, word)


def unknown(reason: str) -> Run:
    """Something runs that the analysis cannot see; `reason` is shown to the user."""
    return Run("unknown", reason)


def quoted_tail(first: str, rest: Sequence[Word]) -> Word:
    """`first "$@"` as a program runs it: the first word is code, the rest literal arguments."""
    if any(w.value is None for w in rest):
        return Word(None)
    return Word(" ".join([first, *(shlex.quote(w.value or "") for w in rest)]))


_TOKEN_SPLIT = re.compile(r"[^A-Za-z0-9_+.\-]+")


def code_tokens(text: str) -> frozenset[str]:
    """The words of code in any language, as a deny rule's program could appear in it:
    maximal runs of `[A-Za-z0-9_+.-]` (so `"/bin/rm -rf"` holds `rm`), each also without
    leading or trailing dots and dashes (`rm.` at a sentence's end, `-rf`)."""
    out: set[str] = set()
    for token in _TOKEN_SPLIT.split(text):
        if token:
            out.add(token)
            out.add(token.strip(".-"))
    out.discard("")
    return frozenset(out)


_PATH_SPLIT = re.compile(r"[^A-Za-z0-9_+.~/@%,:=\-]+")
MAX_PATH_TOKENS = 200


def path_tokens(text: str) -> tuple[Word, ...]:
    """Words of foreign code that may name files (`open(".env")` holds `.env`), so `Read`
    deny rules and the protected-path guard see them; capped, as they are only a hint."""
    tokens = [t for t in _PATH_SPLIT.split(text) if t and any(c.isalnum() or c == "." for c in t)]
    return tuple(Word(t) for t in dict.fromkeys(tokens[:MAX_PATH_TOKENS]))


_EXT_PART = re.compile(r"%(.)|( )|([^% ]+)", re.DOTALL)


def ext_url_argv(url: str) -> tuple[Word, ...] | None:
    """The argv git's `ext::` transport runs for `url` (git-remote-ext(1)): the text after
    `ext::` split at unescaped spaces; `% ` is a space, `%%` a percent sign, `%s`/`%S` the
    service name and `%G` a `git://` request (not words the command sees as code). None when
    `url` is not an `ext::` URL."""
    if not url.startswith("ext::"):
        return None
    words: list[str] = []
    current: list[str] = []
    for escape, space, text in _EXT_PART.findall(url[len("ext::") :]):
        if space:
            if current:
                words.append("".join(current))
            current = []
        elif escape:
            current.append(
                {" ": " ", "%": "%", "s": "upload-pack", "S": "git-upload-pack"}.get(escape, "")
            )
        else:
            current.append(text)
    if current:
        words.append("".join(current))
    return tuple(Word(w) for w in words)
