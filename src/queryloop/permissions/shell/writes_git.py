"""What a git subcommand writes in the working tree or in git's config (`shell_writes`).

- `git config` writes of a key that makes git run code (`shell_git.config_runs`; →
  `.git/config`, `~/.gitconfig` with `--global`), to a `--file` other than a git config
  file, or `--edit`;
- `git checkout`/`restore`/`rm`/`mv` paths;
- `git clone`/`init`/`worktree add`/`submodule add`: the folder they fill;
- `git clean -f`: the protected paths that exist below its pathspecs;
- `git apply`/`git am`: the files the patch names (`Contents`, read by `write_guard`).

The global options (`-C DIR`, `-c`) are handled where the line is unwrapped: this sees the
`git SUBCOMMAND …` view without them, and `-C DIR` is one of the line's folders.
Sources: git-config(1), git-clone(1), git-init(1), git-worktree(1), git-submodule(1),
git-clean(1), git-apply(1), git-am(1).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .git import config_runs
from .git_trees import REWRITES, tree_change
from .parse import Word
from .write_model import Contents, Writes, basename_of, split_options, unabbreviated

_CONFIG_READS = frozenset(
    "--get --get-all --get-regexp --get-urlmatch --list -l --get-color --get-colorbool "
    "--show-origin --show-scope --name-only".split()
)
_CONFIG_WRITES = frozenset(
    "--unset --unset-all --add --replace-all --rename-section --remove-section -e --edit".split()
)
_CONFIG_VERBS = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})
_CLONE_VALUES = (
    "-b --branch -o --origin -u --upload-pack --reference --reference-if-able "
    "--separate-git-dir --depth -c --config --template -j --jobs --filter --shallow-since "
    "--shallow-exclude --bundle-uri --server-option --ref-format"
)


def git(out: Writes, name: str, args: Sequence[Word]) -> None:
    """The writes of `git SUBCOMMAND …` (global options were removed by the unwrap)."""
    if not args or (args[0].value or "-").startswith("-"):
        return
    sub, rest = args[0].value or "", args[1:]
    if sub not in _READS:
        out.moves_refs += 1
    _outputs(out, sub, rest)
    if sub in REWRITES:
        tree_change(out, sub, rest)
    if sub == "config":
        _config(out, rest)
    elif sub in ("checkout", "restore", "rm", "mv"):
        for word in split_options(rest, "-s --source -b -B --orphan").positionals:
            out.word(word, f"git {sub}", tree=sub in ("rm", "mv"))
    elif sub in ("clone", "submodule", "worktree"):
        _fills(out, sub, rest)
    elif sub == "init":
        options = split_options(rest, "--template --separate-git-dir -b --initial-branch")
        for word in options.positionals[:1]:
            out.word(word, "git init")
    elif sub == "clean":
        _clean(out, rest)
    elif sub in ("apply", "am"):
        _patches(out, sub, rest)


_READS = frozenset(
    "status log diff show rev-parse ls-files ls-tree cat-file grep blame shortlog describe "
    "whatchanged diff-tree diff-index diff-files rev-list for-each-ref show-ref format-patch "
    "archive bundle merge-file".split()
)
"""Subcommands that move no ref and leave the index alone."""
_OUTPUT_OPTIONS = {
    "format-patch": ("-o --output-directory", "--output"),
    "archive": ("", "-o --output"),
    "index-pack": ("", "-o"),
    "mailsplit": ("-o", ""),
    "fast-export": ("", "--export-marks"),
    "fast-import": ("", "--export-marks"),
    "credential-store": ("", "--file"),
}
"""(folders, files) an option names, for subcommands whose options take abbreviations;
every other subcommand writes the file of `--output` (the diff family: git-diff(1))."""


def _outputs(out: Writes, sub: str, rest: Sequence[Word]) -> None:
    """Files and folders a subcommand's options name: `git log --output=F`, `git
    format-patch -o DIR`, `git archive -o F`, `git bundle create F`, `git merge-file F …`,
    `git mailinfo MSG PATCH`."""
    folders, files = _OUTPUT_OPTIONS.get(sub, ("", "--output"))
    longs = " ".join(k for k in f"{folders} {files}".split() if k.startswith("--"))
    words = unabbreviated(rest, longs) if sub in _OUTPUT_OPTIONS else list(rest)
    options = split_options(words, f"{folders} {files} -L")
    for key in files.split():
        if key in options.values:
            out.word(options.values[key], f"git {sub}")
    for key in folders.split():
        if key in options.values:
            out.word(options.values[key], f"git {sub}", tree=True)
    positionals = options.positionals
    if sub == "bundle" and len(positionals) > 1 and positionals[0].value == "create":
        out.word(positionals[1], "git bundle")
    elif sub == "merge-file" and positionals and not options.flags & {"-p", "--stdout"}:
        out.word(positionals[0], "git merge-file")
    elif sub == "mailinfo":
        for word in positionals[:2]:
            out.word(word, "git mailinfo")


def _fills(out: Writes, sub: str, rest: Sequence[Word]) -> None:
    """`git clone URL [DIR]`, `git submodule add URL [DIR]`, `git worktree add DIR`."""
    if sub == "clone":
        positionals = split_options(rest, _CLONE_VALUES).positionals
    elif sub in ("submodule", "worktree") and rest and rest[0].value == "add":
        positionals = split_options(
            rest[1:], "-b --branch --name --reference --depth -B --reason"
        ).positionals
    else:
        return
    if sub == "worktree":
        dest = positionals[0] if positionals else None
    else:
        dest = positionals[1] if len(positionals) >= 2 else None
    if dest is not None:
        out.word(dest, f"git {sub}", tree=True)
    elif positionals and positionals[0].value is not None:  # the URL's name, as git does
        folder = basename_of(positionals[0].value).removesuffix(".git") or "."
        out.word(Word(folder), f"git {sub}", tree=True)


def _clean(out: Writes, rest: Sequence[Word]) -> None:
    options = split_options(rest, "-e --exclude")
    if options.flags & {"-n", "--dry-run"} or not options.flags & {"-f", "--force"}:
        return
    for word in options.positionals or (Word("."),):
        out.word(word, "git clean", tree=True, existing=True)


def _patches(out: Writes, sub: str, rest: Sequence[Word]) -> None:
    options = split_options(
        rest,
        "--directory -p -C --exclude --include --whitespace --build-fake-ancestor "
        "-S --gpg-sign --patch-format --resolvemsg --quoted-cr --empty",
    )
    flags = options.flags
    reports = bool(flags & {"--stat", "--numstat", "--summary", "--check"})
    index_only = "--cached" in flags and "--index" not in flags
    if sub == "apply" and ((reports and "--apply" not in flags) or index_only):
        return
    if sub == "am" and flags & {"--abort", "--quit", "--show-current-patch", "--skip"}:
        return
    directory = options.value("--directory")
    prefix = directory.value if directory is not None and directory.value else ""
    program = f"git {sub}"
    files = [w.value for w in options.positionals] or [None]
    for file in files:
        source = None if file in (None, "-") else file
        out.content(Contents("patch", source, program, ".", 0, prefix))


def _config(out: Writes, args: Sequence[Word]) -> None:
    """A `git config` write whose key makes git run code (`core.hooksPath`, `core.pager`,
    `alias.x '!…'`, … as `shell_git` knows them), whose file is not a git config file
    (`--file .gitmodules`), or that opens an editor on it (`--edit`)."""
    values = [w.value for w in args]
    if any(v is None for v in values):
        out.dynamic = True
        return
    texts = [v or "" for v in values]
    options: set[str] = set()
    positionals: list[str] = []
    file: str | None = None
    i = 0
    while i < len(texts):
        text = texts[i]
        if text in ("-f", "--file", "--blob", "--type", "--default", "--comment"):
            file = texts[i + 1] if text in ("-f", "--file") and i + 1 < len(texts) else file
            i += 2
            continue
        keyed = [p for p in positionals if p not in _CONFIG_VERBS]
        if keyed:  # after the key every word is a value (`alias.l '-c x=y log'`)
            positionals.append(text)
        elif text.startswith("--file="):
            file = text[len("--file=") :]
        elif text.startswith("-"):
            options.add(text.split("=", 1)[0])
        else:
            positionals.append(text)
        i += 1
    if positionals[:1] in (["get"], ["list"]) or options & _CONFIG_READS:
        return
    if positionals[:1] and positionals[0] in _CONFIG_VERBS:
        options.add("--" + positionals.pop(0))
    if not (options & (_CONFIG_WRITES | {"--set", "--edit"}) or len(positionals) >= 2):
        return  # `git config KEY` reads the value
    key = positionals[0] if positionals else ""
    value = positionals[1] if len(positionals) > 1 else None
    runs_code = bool(options & {"--edit", "-e"}) or _config_runs_code(key, value)
    if file is not None:
        if runs_code or os.path.basename(file) not in ("config", ".gitconfig"):
            out.word(Word(file), "git config")
    elif runs_code:
        target = "~/.gitconfig" if "--global" in options else ".git/config"
        out.word(Word("/etc/gitconfig" if "--system" in options else target), "git config")


def _config_runs_code(key: str, value: str | None) -> bool:
    """Does setting `key` make git run code later? A plain alias (`alias.st status`) runs a
    git subcommand; one starting with `!` or passing `-c` runs what it says."""
    if key.lower().startswith("alias."):
        words = (value or "").split()
        return (
            value is None
            or (value or "").startswith("!")
            or "-c" in words
            or any(w.startswith("--config-env") for w in words)
        )
    return bool(config_runs(key, Word(value) if value is not None else None, "git config"))
