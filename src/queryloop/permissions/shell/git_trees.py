"""Git commands that rewrite work-tree files from a tree git holds (`shell_writes_git`).

A command line names the commit and the pathspec, never the files: `git checkout REV -- .`
writes whatever REV holds, `git stash pop` whatever the stash recorded. This reads which
tree and which pathspec (`TreeChange`); `write_trees` lists the files at check time.

- `git checkout [-f] [REV] [--] [PATHSPEC…]`, `git switch [-f] [-c NEW] [REV]`,
  `git restore [-s REV] [-W] [PATHSPEC…]` (not `--staged` alone: only the index);
- `git checkout-index [-a] [--prefix=P] [FILE…]`, `git read-tree -u (-m|--reset)
  [--prefix=P] TREE…` (and `--index-output=F`, a file it writes);
- `git reset --hard|--merge|--keep [REV]`;
- `git stash [push|save] [-u|-a] [-- PATHSPEC]` (it resets what it saves), `git stash
  pop|apply [STASH]`, `git stash branch NAME [STASH]`.

Sources: git-checkout(1), git-switch(1), git-restore(1), git-checkout-index(1),
git-read-tree(1), git-reset(1), git-stash(1).
"""

from __future__ import annotations

from collections.abc import Sequence

from .parse import Word
from .write_model import TreeChange, Untracked, Writes, split_options

_CHECKOUT_VALUES = "-b -B --orphan --conflict --pathspec-from-file -U --unified"
_SWITCH_VALUES = "-c -C --create --force-create --orphan --conflict"
_RESTORE_VALUES = "-s --source --pathspec-from-file --conflict -U --unified"
_FORCE = frozenset({"-f", "--force", "--discard-changes"})
_STASH_READS = frozenset({"show", "list", "drop", "clear", "create", "store"})
WHOLE_TREE = ":/"
"""The pathspec that matches every file of the work tree (git's `:/` magic: from the top)."""


def tree_change(out: Writes, sub: str, rest: Sequence[Word]) -> None:
    """The `TreeChange` of `git SUB REST…`, if it rewrites the work tree."""
    if any(w.value is None for w in rest):
        out.dynamic = True  # a rev or pathspec known only at run time: every token is named
        return
    handler = _HANDLERS.get(sub)
    if handler is not None:
        handler(out, f"git {sub}", rest)


def _split_dashes(rest: Sequence[Word]) -> tuple[list[Word], list[str] | None]:
    """The words before `--`, and the pathspecs after it (None: no `--`)."""
    values = [w.value for w in rest]
    if "--" not in values:
        return list(rest), None
    at = values.index("--")
    return list(rest[:at]), [v or "" for v in values[at + 1 :]]


def _checkout(out: Writes, program: str, rest: Sequence[Word]) -> None:
    before, after = _split_dashes(rest)
    options = split_options(before, _CHECKOUT_VALUES)
    force = bool(options.flags & _FORCE)
    positionals = [w.value or "" for w in options.positionals]
    from_file = "--pathspec-from-file" in options.values
    created = options.value("-b", "-B", "--orphan") is not None
    if after is not None or from_file:
        pathspecs = (WHOLE_TREE,) if from_file else tuple(after or ())
        out.tree(TreeChange("paths", program, tuple(positionals[:1]), pathspecs, force=force))
    elif created or "--detach" in options.flags:
        if positionals:  # `git checkout -b NEW START`: a switch to START
            out.tree(TreeChange("switch", program, (positionals[0],), force=force))
    elif positionals:  # REV, REV PATHSPEC…, or PATHSPEC… (from the index): git decides
        out.tree(
            TreeChange("checkout", program, (positionals[0],), tuple(positionals[1:]), force=force)
        )


def _switch(out: Writes, program: str, rest: Sequence[Word]) -> None:
    options = split_options(rest, _SWITCH_VALUES)
    positionals = [w.value or "" for w in options.positionals]
    if positionals:
        force = bool(options.flags & _FORCE)
        out.tree(TreeChange("switch", program, (positionals[0],), force=force))


def _restore(out: Writes, program: str, rest: Sequence[Word]) -> None:
    before, after = _split_dashes(rest)
    options = split_options(before, _RESTORE_VALUES)
    flags = options.flags
    if flags & {"-S", "--staged"} and not flags & {"-W", "--worktree"}:
        return
    source = options.value("-s", "--source")
    revs = (source.value,) if source is not None and source.value else ()
    pathspecs = [w.value or "" for w in options.positionals] + (after or [])
    if "--pathspec-from-file" in options.values:
        pathspecs = [WHOLE_TREE]
    out.tree(TreeChange("restore", program, revs, tuple(pathspecs)))


def _checkout_index(out: Writes, program: str, rest: Sequence[Word]) -> None:
    options = split_options(rest, "--stage")
    prefix = options.value("--prefix")
    if "--temp" in options.flags:
        return  # temporary files named `.merge_file_*`
    everything = bool(options.flags & {"-a", "--all", "--stdin"})
    paths = (WHOLE_TREE,) if everything else tuple(w.value or "" for w in options.positionals)
    if paths:
        text = prefix.value or "" if prefix is not None else ""
        out.tree(TreeChange("index", program, (), paths, prefix=text))


def _read_tree(out: Writes, program: str, rest: Sequence[Word]) -> None:
    options = split_options(rest)
    index_output = options.value("--index-output")
    if index_output is not None:
        out.word(index_output, program)
    if "-u" not in options.flags or options.flags & {"-n", "--dry-run"}:
        return
    prefix = options.value("--prefix")
    revs = tuple(w.value or "" for w in options.positionals)
    if revs:
        text = prefix.value or "" if prefix is not None else ""
        out.tree(TreeChange("read-tree", program, revs[-1:], prefix=text))


def _reset(out: Writes, program: str, rest: Sequence[Word]) -> None:
    before, after = _split_dashes(rest)
    options = split_options(before)
    if not options.flags & {"--hard", "--merge", "--keep"} or after:
        return
    revs = tuple(w.value or "" for w in options.positionals[:1])
    out.tree(TreeChange("reset", program, revs))


def _stash(out: Writes, program: str, rest: Sequence[Word]) -> None:
    verb = rest[0].value if rest and not (rest[0].value or "-").startswith("-") else "push"
    args = rest[1:] if rest and rest[0].value == verb else rest
    if verb in _STASH_READS:
        return
    if verb in ("pop", "apply", "branch"):
        options = split_options(args)
        positionals = [w.value or "" for w in options.positionals]
        stash = positionals[1:2] if verb == "branch" else positionals[:1]
        out.tree(TreeChange("stash-apply", f"{program} {verb}", tuple(stash or ["stash@{0}"])[:1]))
        return
    before, after = _split_dashes(args)
    options = split_options(before, "-m --message --pathspec-from-file")
    flags = options.flags
    untracked: Untracked = ""
    if flags & {"-a", "--all"}:
        untracked = "all"
    elif flags & {"-u", "--include-untracked"}:
        untracked = "untracked"
    if verb == "save":
        pathspecs: list[str] = []  # `git stash save MESSAGE`: the words are the message
    else:
        pathspecs = [w.value or "" for w in options.positionals] + (after or [])
    if "--pathspec-from-file" in options.values:
        pathspecs = []
    out.tree(
        TreeChange(
            "stash-push", f"{program} {verb}", ("HEAD",), tuple(pathspecs), untracked=untracked
        )
    )


_HANDLERS = {
    "checkout": _checkout,
    "switch": _switch,
    "restore": _restore,
    "checkout-index": _checkout_index,
    "read-tree": _read_tree,
    "reset": _reset,
    "stash": _stash,
}
REWRITES = frozenset(_HANDLERS)
"""The subcommands `tree_change` reads."""
