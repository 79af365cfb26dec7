"""Option spellings that mean the same thing, so `Bash(rm -rf:*)` also denies `rm -fr`.

The rule, applied to the rule's words and to the command's words alike (documented in
docs/settings.md):

1. Words before `--` that start with `-` are options; the others are positional words.
2. A short cluster is split: `-rf` is `-r -f` (except for programs with single-dash long
   options: find, terraform, go, java, …).
3. `--name=value` is `--name`; a long option the program knows may be abbreviated to any
   unambiguous prefix (`rm --rec` is `rm --recursive`), as GNU getopt allows.
4. Known equivalents are one option: for rm `-R`, `--recursive` are `-r` and `--force` is `-f`;
   `git branch -D` is `--delete --force`; … (`EQUIVALENTS` below).
"""

from __future__ import annotations

from functools import lru_cache

NO_CLUSTER = frozenset(
    {"find", "terraform", "tofu", "go", "java", "javac", "gcc", "clang", "ffmpeg", "xcodebuild"}
)

SUBCOMMAND_PROGRAMS = frozenset(
    "git npm pnpm yarn bun cargo go docker podman kubectl pip pip3 uv poetry make gh brew apt "
    "apt-get dnf yum dotnet mvn gradle terraform tofu helm conda rustup systemctl aws gcloud "
    "az npx deno gem bundle mix composer".split()
)
"""Programs whose first positional word is a subcommand: a rule's first positional word must be
the command's first positional word (`Bash(git push:*)` is not `git log --grep push`)."""

_RM: dict[str, tuple[str, ...]] = {
    "-R": ("-r",),
    "--recursive": ("-r",),
    "--force": ("-f",),
    "--dir": ("-d",),
    "--verbose": ("-v",),
    "--interactive": ("-i",),
}
_RECURSIVE_R: dict[str, tuple[str, ...]] = {"-r": ("-R",), "--recursive": ("-R",)}
_CP: dict[str, tuple[str, ...]] = {
    "-R": ("-r",),
    "--recursive": ("-r",),
    "--force": ("-f",),
    "--verbose": ("-v",),
}

EQUIVALENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "rm": _RM,
    "cp": _CP,
    "mv": {"--force": ("-f",), "--verbose": ("-v",)},
    "chmod": {**_RECURSIVE_R, "--silent": ("-f",), "--quiet": ("-f",)},
    "chown": {**_RECURSIVE_R, "--silent": ("-f",), "--quiet": ("-f",)},
    "chgrp": {**_RECURSIVE_R, "--silent": ("-f",), "--quiet": ("-f",)},
    "shred": {"--remove": ("-u",), "--zero": ("-z",), "--force": ("-f",)},
    "rsync": {"--recursive": ("-r",), "--archive": ("-a",)},
    "curl": {
        "--output": ("-o",),
        "--remote-name": ("-O",),
        "--request": ("-X",),
        "--data": ("-d",),
        "--insecure": ("-k",),
        "--location": ("-L",),
        "--form": ("-F",),
        "--upload-file": ("-T",),
        "--silent": ("-s",),
    },
    "wget": {"--output-document": ("-O",), "--quiet": ("-q",)},
    "sed": {"--in-place": ("-i",)},
    "git push": {
        "-f": ("--force",),
        "-d": ("--delete",),
        "-u": ("--set-upstream",),
        "-n": ("--dry-run",),
    },
    "git clean": {"--force": ("-f",), "--dry-run": ("-n",), "--interactive": ("-i",)},
    "git branch": {
        "-D": ("--delete", "--force"),
        "-d": ("--delete",),
        "-f": ("--force",),
        "-M": ("--move", "--force"),
        "-m": ("--move",),
    },
    "git checkout": {"-f": ("--force",)},
    "git commit": {"-a": ("--all",), "-m": ("--message",), "-n": ("--no-verify",)},
    "git reset": {},
    "docker": {"--force": ("-f",), "--all": ("-a",)},
}

LONG_NAMES: dict[str, tuple[str, ...]] = {
    "rm": (
        "--force",
        "--interactive",
        "--one-file-system",
        "--no-preserve-root",
        "--preserve-root",
        "--recursive",
        "--dir",
        "--verbose",
        "--help",
        "--version",
    ),
    "git push": (
        "--all",
        "--mirror",
        "--tags",
        "--follow-tags",
        "--atomic",
        "--dry-run",
        "--porcelain",
        "--delete",
        "--force",
        "--force-with-lease",
        "--force-if-includes",
        "--prune",
        "--set-upstream",
        "--verbose",
        "--quiet",
        "--no-verify",
        "--repo",
        "--push-option",
        "--receive-pack",
        "--exec",
        "--thin",
        "--no-thin",
    ),
}
"""Long options of programs whose abbreviations are resolved exactly (others: by prefix)."""


def table_key(program: str, first_positional: str | None) -> str:
    """`git push` for git (its options depend on the subcommand), else the program."""
    if program == "git" and first_positional:
        return f"git {first_positional}"
    return program


@lru_cache(maxsize=8192)
def canonical(key: str, option: str) -> tuple[str, ...]:
    """The canonical spellings of one option word (`--recursive=x` → `('-r',)` for rm)."""
    name = option.split("=", 1)[0] if option.startswith("--") else option
    if name.startswith("--"):
        name = _expand_abbreviation(key, name)
    return EQUIVALENTS.get(key, {}).get(name, (name,))


def _expand_abbreviation(key: str, name: str) -> str:
    known = LONG_NAMES.get(key)
    if known is None:
        equivalents = EQUIVALENTS.get(key, {})
        known = tuple(n for n in equivalents if n.startswith("--"))
    if name in known:
        return name
    matches = [n for n in known if n.startswith(name)]
    return matches[0] if len(matches) == 1 else name


def split_option(program: str, word: str) -> list[str]:
    """`-rf` → `['-r', '-f']`; long options and `NO_CLUSTER` programs' options stay whole."""
    if word.startswith("--") or program in NO_CLUSTER or len(word) <= 2:
        return [word]
    return ["-" + letter for letter in word[1:]]
