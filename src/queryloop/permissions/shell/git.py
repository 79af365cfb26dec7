"""What git runs besides itself: config keys whose value is a command, and subcommands that run one.

Sources: git-config(1) (https://git-scm.com/docs/git-config), the manual of each subcommand
(git-bisect(1) `run`, git-submodule(1) `foreach`, git-rebase(1) `--exec`, git-filter-branch(1),
git-difftool(1) `--extcmd`, git-grep(1) `--open-files-in-pager`, git-send-email(1) `--to-cmd`,
git-fetch(1)/git-clone(1) `--upload-pack`, git-push(1) `--receive-pack`) and
git-remote-ext(1). Config is given on the command line (`git -c KEY=VALUE`,
`--config-env=KEY=ENVVAR`), in the environment (`GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` /
`GIT_CONFIG_VALUE_<n>`, `GIT_CONFIG_PARAMETERS`), or written by `git config KEY VALUE` for a
later command of the same line; all are looked at the same way (`config_runs`).

Config files git reads (the repository's `.git/config`, `~/.gitconfig`) are not read: writing
them is what the protected-path guard asks about, and the sandbox holds beyond that.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

from .parse import Word
from .runs import Run, code, ext_url_argv, quoted_tail, unknown

GIT_ARG = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--attr-source",
        "--exec-path",
        "--list-cmds",
    }
)
"""git global options that take a value (`git -C DIR`, `--git-dir=DIR`)."""
GIT_FLAG = frozenset(
    {
        "--no-pager",
        "-p",
        "--paginate",
        "-P",
        "--bare",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
        "--html-path",
        "--man-path",
        "--info-path",
    }
)
"""git global options without a value."""
GIT_OPTIONAL_ARG = frozenset({"--exec-path", "--list-cmds"})
"""Global options whose value is optional and attached with `=` only."""

ConfigKind = Literal["code", "code_or_bool", "helper", "bang_code", "path_code", "file", "folder"]

CONFIG_KEYS: tuple[tuple[str, ConfigKind], ...] = (
    ("core.pager", "code"),
    ("core.editor", "code"),
    ("core.sshcommand", "code"),
    ("core.askpass", "code"),
    ("core.gitproxy", "code"),
    ("core.alternaterefscommand", "code"),
    ("core.fsmonitor", "code_or_bool"),
    ("core.hookspath", "folder"),
    ("init.templatedir", "folder"),
    ("include.path", "file"),
    ("includeif.*.path", "file"),
    ("sequence.editor", "code"),
    ("pager.*", "code_or_bool"),
    ("diff.external", "code"),
    ("diff.*.textconv", "code"),
    ("diff.*.command", "code"),
    ("difftool.*.cmd", "code"),
    ("difftool.*.path", "code"),
    ("mergetool.*.cmd", "code"),
    ("mergetool.*.path", "code"),
    ("merge.*.driver", "code"),
    ("filter.*.clean", "code"),
    ("filter.*.smudge", "code"),
    ("filter.*.process", "code"),
    ("credential.helper", "helper"),
    ("credential.*.helper", "helper"),
    ("gpg.program", "code"),
    ("gpg.*.program", "code"),
    ("gpg.ssh.defaultkeycommand", "code"),
    ("uploadpack.packobjectshook", "code"),
    ("remote.*.uploadpack", "code"),
    ("remote.*.receivepack", "code"),
    ("interactive.difffilter", "code"),
    ("sendemail.tocmd", "code"),
    ("sendemail.cccmd", "code"),
    ("sendemail.headercmd", "code"),
    ("sendemail.sendmailcmd", "code"),
    ("sendemail.*.tocmd", "code"),
    ("sendemail.*.cccmd", "code"),
    ("sendemail.smtpserver", "path_code"),
    ("imap.tunnel", "code"),
    ("submodule.*.update", "bang_code"),
    ("trailer.*.command", "code"),
    ("trailer.*.cmd", "code"),
    ("hook.*.command", "code"),
    ("tar.*.command", "code"),
    ("man.*.cmd", "code"),
    ("browser.*.cmd", "code"),
    ("guitool.*.cmd", "code"),
    ("instaweb.httpd", "code"),
)
"""Config keys (lower case; `*` is a subsection) whose value git runs, and how:

- `code`: a shell command (git runs it with `sh -c`, or as a program: parsing it as shell
  covers both);
- `code_or_bool`: a boolean (nothing runs) or a command (`pager.<cmd>`, `core.fsmonitor`);
- `helper`: `credential.helper`: `!code` is shell code, an absolute path a command, a bare name
  `NAME` runs `git credential-NAME`;
- `bang_code`: `submodule.<name>.update`: only `!code` runs code;
- `path_code`: `sendemail.smtpServer`: an absolute path is a program run as the mailer;
- `file`, `folder`: a file of configuration or a folder of hooks/templates: fail closed.
"""

_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", ""})


def config_kind(key: str) -> ConfigKind | None:
    """How git runs the value of `key`, or None when it does not."""
    lowered = key.lower()
    for pattern, kind in CONFIG_KEYS:
        if fnmatchcase(lowered, pattern):
            return kind
    return None


def config_runs(key: str, value: Word | None, via: str) -> list[Run]:
    """What setting `key` to `value` (None: known only at run time) makes git run."""
    runs = _url_runs(key, value)
    what = f"{via} {key}"
    text = value.value if value is not None else None
    if key.lower().startswith("alias.") and via != "git -c":  # `-c alias.x` is resolved on use
        if text is None:
            return [*runs, unknown(f"{what} sets an alias that is not statically known")]
        body = text[1:] if text.startswith("!") else "git " + text
        return [*runs, code(what, Word(body))]
    kind = config_kind(key)
    if kind is None:
        return runs
    if text is None:
        return [*runs, unknown(f"{what} sets a command that is not statically known")]
    if kind in ("file", "folder"):
        if text in ("", "/dev/null"):
            return runs
        noun = "a file of configuration" if kind == "file" else "a folder of hooks or templates"
        return [*runs, unknown(f"{what} names {noun} that may run code ({text})")]
    if kind == "code_or_bool" and text.lower() in _BOOLEANS:
        return runs
    if kind == "bang_code" and not text.startswith("!"):
        return runs
    if kind == "path_code" and not text.startswith("/"):
        return runs
    if kind == "helper":
        return [*runs, *_helper(what, text)]
    body = text[1:] if kind == "bang_code" else text
    return [*runs, code(what, Word(body))]


def _helper(what: str, text: str) -> list[Run]:
    if not text:
        return []
    if text.startswith("!"):
        return [code(what, Word(text[1:]))]
    if text.startswith("/") or text.startswith("~"):
        return [code(what, Word(text))]
    return [code(what, Word("git credential-" + text))]


def _url_runs(key: str, value: Word | None) -> list[Run]:
    """`ext::` URLs in a config key (`url.<base>.insteadOf`) or value (`remote.x.url`)."""
    runs: list[Run] = []
    lowered = key.lower()
    if lowered.startswith("url.") and lowered.endswith(("insteadof", "pushinsteadof")):
        base = key[len("url.") : key.rfind(".")]
        runs += ext_runs([Word(base)], "git url.<base>.insteadOf")
    if value is not None and value.value is not None:
        runs += ext_runs([value], f"git config {key}")
    return runs


def ext_runs(words: Sequence[Word], via: str = "git ext:: URL") -> list[Run]:
    """The command of every `ext::` URL among `words` (also after `--opt=`)."""
    runs: list[Run] = []
    for word in words:
        value = word.value or ""
        if "ext::" not in value:
            continue
        url = value[value.index("ext::") :]
        argv = ext_url_argv(url)
        if argv:
            runs.append(Run("argv", via, argv=argv))
    return runs


@dataclass(frozen=True, slots=True)
class SubOptions:
    """A subcommand's options whose value is shell code (or names a folder of code)."""

    long_code: frozenset[str] = field(default_factory=frozenset)
    """`--exec CMD` and `--exec=CMD`."""
    short_code: str = ""
    """`-x CMD`, `-xCMD`, also at the end of a cluster (`-ix CMD`)."""
    short_arg: str = ""
    """Other short options that take a value (they end a cluster)."""
    attached_code: str = ""
    """Short options whose optional value is attached only (`grep -Ocmd`)."""
    long_attached: frozenset[str] = field(default_factory=frozenset)
    """Long options whose optional value is given with `=` only (`--open-files-in-pager=cmd`)."""
    long_folder: frozenset[str] = field(default_factory=frozenset)
    """Options naming a folder of code (`clone --template`): fail closed."""


def _sub(
    long_code: str = "",
    short_code: str = "",
    short_arg: str = "",
    *,
    attached_code: str = "",
    long_attached: str = "",
    long_folder: str = "",
) -> SubOptions:
    return SubOptions(
        frozenset(long_code.split()),
        short_code,
        short_arg,
        attached_code,
        frozenset(long_attached.split()),
        frozenset(long_folder.split()),
    )


_TRANSPORT = "upload-pack receive-pack exec"
SUBCOMMANDS: dict[str, SubOptions] = {
    "rebase": _sub("exec", "x", "sXCS"),
    "filter-branch": _sub(
        "setup env-filter tree-filter index-filter parent-filter msg-filter commit-filter "
        "tag-name-filter"
    ),
    "difftool": _sub("extcmd", "x", "t"),
    "grep": _sub(short_arg="efABCm", attached_code="O", long_attached="open-files-in-pager"),
    "send-email": _sub("to-cmd cc-cmd header-cmd sendmail-cmd"),
    "fetch": _sub(_TRANSPORT),
    "pull": _sub(_TRANSPORT),
    "push": _sub(_TRANSPORT),
    "ls-remote": _sub(_TRANSPORT),
    "fetch-pack": _sub(_TRANSPORT),
    "send-pack": _sub(_TRANSPORT),
    "archive": _sub(_TRANSPORT),
    "clone": _sub(_TRANSPORT, "u", "obcj", long_folder="template"),
    "init": _sub(long_folder="template"),
    "web--browse": _sub("cmd", "c", "bt"),
    "instaweb": _sub("httpd browser", "db", "pm"),
}
"""Subcommands with options that run a command (see the module docstring for the manuals)."""


def subcommand_runs(sub: str, rest: Sequence[Word]) -> list[Run]:
    """What `git SUB REST…` runs besides git."""
    runs = ext_runs(rest)
    if sub == "bisect" and rest and rest[0].value == "run" and len(rest) > 1:
        return [*runs, Run("argv", "git bisect run", argv=tuple(rest[1:]))]
    if sub == "submodule":
        return [*runs, *_foreach(rest)]
    if sub == "config":
        return [*runs, *_config_set(rest)]
    if sub == "clone":  # `clone -c KEY=VALUE` configures the new repository, checkout included
        runs += _clone_config(rest)
    options = SUBCOMMANDS.get(sub)
    if options is not None:
        runs += _option_runs(f"git {sub}", options, rest)
    return runs


def _option_runs(what: str, spec: SubOptions, rest: Sequence[Word]) -> list[Run]:
    runs: list[Run] = []
    for i, word in enumerate(rest):
        value = word.value
        if value is None or value == "--":
            if value == "--":
                break
            continue
        after = rest[i + 1] if i + 1 < len(rest) else None
        if value.startswith("--"):
            name, eq, attached = value[2:].partition("=")
            name = _unabbreviated(name, spec.long_code | spec.long_attached | spec.long_folder)
            given = Word(attached) if eq else after
            if name in spec.long_code or (eq and name in spec.long_attached):
                runs.append(code(f"{what} --{name}", given))
            elif name in spec.long_folder:
                runs.append(unknown(f"{what} --{name} names a folder of hooks that may run code"))
        elif value.startswith("-") and len(value) > 1:
            runs += _cluster(what, spec, value[1:], after)
    return runs


def _unabbreviated(name: str, known: frozenset[str]) -> str:
    """git's option parser accepts any unambiguous prefix (`--ex` is `--exec`): a prefix of
    one of `known` is taken as it (whether or not another option shares the prefix: the
    liberal reading cannot hide a command)."""
    if name in known or len(name) < 2:
        return name
    return next((option for option in sorted(known) if option.startswith(name)), name)


def _cluster(what: str, spec: SubOptions, letters: str, after: Word | None) -> list[Run]:
    for j, letter in enumerate(letters):
        attached = letters[j + 1 :]
        if letter in spec.short_code:
            return [code(f"{what} -{letter}", Word(attached) if attached else after)]
        if letter in spec.attached_code:
            return [code(f"{what} -{letter}", Word(attached))] if attached else []
        if letter in spec.short_arg:
            return []
    return []


def _foreach(rest: Sequence[Word]) -> list[Run]:
    """`git submodule [--quiet] foreach [--recursive] CMD…`: CMD is shell code, more words
    are its arguments (git runs `sh -c 'CMD "$@"'`)."""
    values = [w.value for w in rest]
    if "foreach" not in values:
        return []
    i = values.index("foreach") + 1
    while i < len(rest) and (rest[i].value or "").startswith("-"):
        i += 1
    if i >= len(rest):
        return []
    first = rest[i].value
    if first is None:
        return [code("git submodule foreach", None)]
    return [code("git submodule foreach", quoted_tail(first, rest[i + 1 :]))]


_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment"})


def _config_set(rest: Sequence[Word]) -> list[Run]:
    """`git config [set|--add|…] KEY VALUE`: the value runs in a later git command."""
    positional: list[Word] = []
    skip = False
    for word in rest:
        value = word.value
        if skip:
            skip = False
        elif value is not None and value in _CONFIG_VALUE_OPTIONS:
            skip = True
        elif value is None or not value.startswith("-"):
            positional.append(word)
    if positional and positional[0].value == "set":
        positional = positional[1:]
    if len(positional) < 2 or positional[0].value is None:
        return []
    return config_runs(positional[0].value, positional[1], "git config")


def _clone_config(rest: Sequence[Word]) -> list[Run]:
    runs: list[Run] = []
    for i, word in enumerate(rest):
        value = word.value or ""
        if value in ("-c", "--config") and i + 1 < len(rest):
            runs += command_line_config("clone -c", rest[i + 1])
        elif value.startswith("--config="):
            runs += command_line_config("clone -c", Word(value[len("--config=") :]))
    return runs


def command_line_config(option: str, argument: Word) -> list[Run]:
    """`git -c KEY=VALUE` (`-c KEY` alone is `true`) or `git --config-env KEY=ENVVAR`."""
    text = argument.value
    if text is None:
        return [unknown(f"git {option} sets configuration that is not statically known")]
    key, eq, value = text.partition("=")
    if option == "--config-env":
        return config_runs(key, None, f"git {option}") if eq else []
    return config_runs(key, Word(value) if eq else Word("true"), f"git {option}")


def environment_config(env: Mapping[str, Word]) -> list[Run]:
    """Config git reads from the environment: `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`
    (every pair, whatever `GIT_CONFIG_COUNT` says) and `GIT_CONFIG_PARAMETERS`."""
    runs: list[Run] = []
    for name, word in env.items():
        if name.startswith("GIT_CONFIG_KEY_"):
            value = env.get("GIT_CONFIG_VALUE_" + name[len("GIT_CONFIG_KEY_") :], Word(""))
            if word.value is None:
                runs.append(unknown(f"{name} names configuration that is not statically known"))
            else:
                runs += config_runs(word.value, value, name)
        elif name == "GIT_CONFIG_PARAMETERS":
            runs += _parameters(word)
    return runs


def _parameters(word: Word) -> list[Run]:
    """`GIT_CONFIG_PARAMETERS="'key'='value' 'key2'='value2'"` (git's own quoting)."""
    if word.value is None:
        return [unknown("GIT_CONFIG_PARAMETERS is not statically known")]
    try:
        items = shlex.split(word.value)
    except ValueError:
        return [unknown("GIT_CONFIG_PARAMETERS cannot be parsed")]
    runs: list[Run] = []
    for item in items:
        key, eq, value = item.partition("=")
        runs += config_runs(key, Word(value) if eq else Word("true"), "GIT_CONFIG_PARAMETERS")
    return runs
