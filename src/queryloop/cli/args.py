"""Command-line flags, parsed into a frozen `CliOptions`. Only the standard library here, so
`queryloop --help` starts fast."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..agent.options import PermissionModeName
    from ..compact.policy import CompactionName
    from ..context.cache_ttl import CacheTtlSetting
    from ..permissions.modes import PermissionMode
    from ..session.store_api import SessionStore

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
OUTPUT_FORMATS = ("text", "json", "stream-json")
COMPACTIONS = ("default", "economy")
"""`compact.policy.COMPACTION_NAMES`, repeated: `--help` must not import the compact package."""
CACHE_TTLS = ("5m", "1h", "auto")
"""`--cache-ttl` (the `CacheTtlSetting` values; tests/cli/test_cli_args.py checks)."""
SUBCOMMANDS = ("sessions", "trust", "rewind", "report", "batch", "mcp")
OWN_PARSER_SUBCOMMANDS = ("rewind", "report", "batch", "mcp")
"""Subcommands that parse their own arguments (`queryloop.cli.ops`)."""

_EPILOG = """\
subcommands:
  queryloop sessions           list this folder's sessions (id, time, first prompt, turns, cost)
  queryloop trust [PATH]       trust a folder: its hooks, MCP servers and allow rules may run
  queryloop trust --show [PATH]  list what a folder's project files would run, untrusted
  queryloop rewind [N] [--code | --conversation] [--session ID]
                               list the latest session's checkpoints, or restore one
  queryloop report [SESSION]   write a session's report: one self-contained HTML page
  queryloop batch TASKS.jsonl --out RESULTS.jsonl [--concurrency N] [--ray ADDRESS]
                               run many sessions, resumable (see docs/batch.md)
  queryloop acp [OPTIONS]      serve editors over the Agent Client Protocol on stdio
                               (Zed, JetBrains, Neovim; see docs/acp.md)
  queryloop mcp list | login NAME
                               MCP servers here; log in to an OAuth-protected one
  queryloop COMMAND --help     a subcommand's own options

environment:
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   the Anthropic API (or any server speaking it)
  OPENAI_API_KEY, OPENAI_BASE_URL         OpenAI-compatible servers: --model openai:NAME
  QUERYLOOP_MODEL                         the default model
  QUERYLOOP_HOME                          state folder (default ~/.queryloop)
  QUERYLOOP_SESSION_STORE                 where sessions live: sqlite:///PATH, postgresql://...

exit status: 0 completed, 1 internal error, 2 usage/config, 3 max turns, 4 context limit,
5 model error, 6 aborted, 7 stopped by a hook, 8 media refused, 130 interrupted (Ctrl-C).
"""


class UsageError(ConfigError):
    """A bad command line; the message says what is wrong and how to fix it."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so `main` decides."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `queryloop --help`)")


_AGENT_OPTION = {"agent_option": True}
"""`field()` metadata of a `CliOptions` field that IS an `AgentOptions` field: the same name,
type and default (tests/cli/test_cli_args.py proves it), passed on by `agent_kwargs`."""


@dataclass(frozen=True)
class CliOptions:
    """What the command line asked for: the Agent's options it sets (each declared and
    documented on `AgentOptions`, with its type and default) and the CLI's own."""

    # ---- AgentOptions fields (`agent_kwargs`) ----
    model: str | None = field(default=None, metadata=_AGENT_OPTION)
    fallback_model: str | None = field(default=None, metadata=_AGENT_OPTION)
    max_turns: int | None = field(default=None, metadata=_AGENT_OPTION)
    permission_mode: PermissionModeName | PermissionMode | None = field(
        default=None, metadata=_AGENT_OPTION
    )
    allowed_tools: Sequence[str] = field(default=(), metadata=_AGENT_OPTION)
    disallowed_tools: Sequence[str] = field(default=(), metadata=_AGENT_OPTION)
    mcp_config: Path | None = field(default=None, metadata=_AGENT_OPTION)
    plugin_dirs: Sequence[Path] = field(default=(), metadata=_AGENT_OPTION)
    append_system_prompt: str | None = field(default=None, metadata=_AGENT_OPTION)
    system_prompt: str | None = field(default=None, metadata=_AGENT_OPTION)
    cwd: Path = field(default_factory=Path.cwd, metadata=_AGENT_OPTION)
    trust: bool | None = field(default=None, metadata=_AGENT_OPTION)
    tool_use_summaries: bool = field(default=False, metadata=_AGENT_OPTION)
    """Headless: label each tool batch with a small model's summary (on in the REPL)."""
    compaction: CompactionName | None = field(default=None, metadata=_AGENT_OPTION)
    cache_ttl: CacheTtlSetting | None = field(default=None, metadata=_AGENT_OPTION)
    session_store: SessionStore | str | None = field(default=None, metadata=_AGENT_OPTION)

    # ---- the CLI's own ----
    prompt: str | None = None
    print_mode: bool = False
    output_format: str = "text"
    json_schema: dict[str, Any] | None = None
    """`--json-schema`: the Agent's `output_type` (Claude Code's flag); print mode only."""
    include_partial_messages: bool = False
    continue_latest: bool = False
    resume: str | None = None
    approve: tuple[str, ...] = ()
    """tool_use ids of deferred calls to run (`--approve`)."""
    deny: tuple[tuple[str, str], ...] = ()
    """(tool_use id, message for the model) of deferred calls to refuse (`--deny ID[=MSG]`)."""
    verbose: bool = False
    command: str | None = None
    """A subcommand (`SUBCOMMANDS`)."""
    command_args: tuple[str, ...] = ()

    def agent_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `queryloop.Agent` (model passed separately): the Agent
        options the command line set, i.e. those that differ from their default."""
        kwargs: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.metadata.get("agent_option") and item.name != "model":
                if value != item.default:  # a default_factory field (cwd) is always passed
                    kwargs[item.name] = value
        return kwargs


def build_parser() -> argparse.ArgumentParser:
    """The `queryloop` argument parser."""
    p = _Parser(
        prog="queryloop",
        description="A terminal coding agent. Without -p it starts an interactive session.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("prompt", nargs="*", help="a first prompt (REPL) or the prompt (-p)")
    p.add_argument(
        "-p", "--print", dest="print_prompt", nargs="?", const="", default=None,
        metavar="PROMPT", help="answer PROMPT (or stdin) headless, print the result and exit",
    )  # fmt: skip
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    p.add_argument(
        "--json-schema", metavar="SCHEMA", type=_json_object,
        help="-p: return a value matching this JSON Schema (an object), in the json "
        "result's `structured_output`",
    )  # fmt: skip
    p.add_argument(
        "--include-partial-messages", action="store_true",
        help="stream-json: also emit stream deltas (text as it is generated)",
    )  # fmt: skip
    p.add_argument("--model", help="model name; openai:NAME for an OpenAI-compatible server")
    p.add_argument(
        "--session-store", metavar="URL",
        help="where sessions live: sqlite:///PATH or postgresql://... (default: JSONL files)",
    )  # fmt: skip
    p.add_argument("--fallback-model", help="model to switch to when the main one is overloaded")
    p.add_argument("--max-turns", type=_positive_int, help="stop after N model turns")
    p.add_argument(
        "-c", "--continue", dest="continue_latest", action="store_true",
        help="continue the latest session of this folder",
    )  # fmt: skip
    p.add_argument("-r", "--resume", metavar="ID", help="resume a session by id or id prefix")
    p.add_argument(
        "--approve", action="append", default=[], metavar="TOOL_USE_ID",
        help="with --resume: run this deferred tool call (repeatable; docs/approvals.md)",
    )  # fmt: skip
    p.add_argument(
        "--deny", action="append", default=[], metavar="TOOL_USE_ID[=MESSAGE]",
        help="with --resume: refuse this deferred tool call; the model reads MESSAGE",
    )  # fmt: skip
    p.add_argument("--permission-mode", choices=PERMISSION_MODES)
    p.add_argument(
        "--dangerously-skip-permissions", action="store_true",
        help="Claude Code's spelling of --permission-mode bypassPermissions",
    )  # fmt: skip
    p.add_argument("--allowed-tools", action="append", default=[], metavar="RULES")
    p.add_argument("--disallowed-tools", action="append", default=[], metavar="RULES")
    for claude, ours in (
        ("--allowedTools", "allowed_tools"),
        ("--disallowedTools", "disallowed_tools"),
    ):
        # Claude Code's spelling takes several values (`--allowedTools "Bash(git log:*)" Read`)
        p.add_argument(claude, dest=ours, nargs="+", action="extend", metavar="RULES")
    p.add_argument("--mcp-config", type=Path, metavar="FILE", help="MCP servers (JSON)")
    p.add_argument(
        "--plugin-dir", dest="plugin_dirs", action="append", default=[], type=Path,
        metavar="DIR", help="load a plugin folder in Claude Code's layout (repeatable)",
    )  # fmt: skip
    p.add_argument("--append-system-prompt", metavar="TEXT")
    p.add_argument("--system-prompt", metavar="TEXT", help="replace the system prompt")
    p.add_argument("--cwd", type=Path, help="work in this folder (default: the current one)")
    p.add_argument("--verbose", action="store_true", help="tracebacks and more detail")
    p.add_argument(
        "--trust", action="store_true", default=None,
        help="trust this folder (its hooks, MCP servers and allow rules run) and remember "
        "it: saved in $QUERYLOOP_HOME/settings.json like `queryloop trust`; later runs are "
        "trusted too (remove the folder from trustedFolders to undo)",
    )  # fmt: skip
    p.add_argument(
        "--tool-use-summaries", action="store_true", default=None,
        help="label each batch of tool calls with a one-line summary (always on in the REPL)",
    )  # fmt: skip
    p.add_argument(
        "--compaction", choices=COMPACTIONS,
        help="economy: shrink the context as soon as carrying it costs more than "
        "shrinking it (cheaper long sessions; old tool output is cleared sooner); "
        "default: summarise near the context limit",
    )  # fmt: skip
    p.add_argument(
        "--cache-ttl", choices=CACHE_TTLS,
        help="prompt-cache lifetime: 5m (default), 1h (writes cost 2x input, survive an "
        "hour's pause), auto (1h once requests come more than 4 minutes apart)",
    )  # fmt: skip
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def parse_args(argv: list[str]) -> CliOptions | None:
    """Parse `argv`. Returns None for --version (handled by the caller)."""
    if argv and argv[0] == "acp":
        # The editor's agent takes the session options (--model, --permission-mode, ...).
        ns = build_parser().parse_args(argv[1:])
        return replace(_to_options(ns), command="acp")
    if argv and argv[0] in SUBCOMMANDS:
        return _subcommand(argv)
    ns = build_parser().parse_args(argv)
    if ns.version:
        return None
    return _to_options(ns)


def _subcommand(argv: list[str]) -> CliOptions:
    command, rest = argv[0], argv[1:]
    if command in OWN_PARSER_SUBCOMMANDS:
        return CliOptions(cwd=Path.cwd(), command=command, command_args=tuple(rest))
    p = _Parser(prog=f"queryloop {command}")
    p.add_argument("--cwd", type=Path)
    p.add_argument("--verbose", action="store_true")
    if command == "trust":
        p.add_argument("path", nargs="?", type=Path)
        p.add_argument("--show", action="store_true", help="list what the folder would run")
    ns = p.parse_args(rest)
    cwd = _resolve_cwd(ns.cwd)
    args: tuple[str, ...] = ()
    if command == "trust":
        args = (*(("--show",) if ns.show else ()), *((str(ns.path),) if ns.path else ()))
    return CliOptions(cwd=cwd, verbose=ns.verbose, command=command, command_args=args)


def _to_options(ns: argparse.Namespace) -> CliOptions:
    words = " ".join(ns.prompt) if ns.prompt else None
    print_mode = ns.print_prompt is not None
    prompt = (ns.print_prompt or words) if print_mode else words
    if ns.continue_latest and ns.resume:
        raise UsageError("use either --continue or --resume, not both")
    if ns.output_format != "text" and not print_mode:
        raise UsageError("--output-format needs print mode: add -p")
    if ns.json_schema is not None and not print_mode:
        raise UsageError("--json-schema needs print mode: add -p")
    if ns.dangerously_skip_permissions and ns.permission_mode not in (None, "bypassPermissions"):
        raise UsageError(
            f"--dangerously-skip-permissions is --permission-mode bypassPermissions; "
            f"it cannot be used with --permission-mode {ns.permission_mode}"
        )
    mode = ns.permission_mode
    if ns.dangerously_skip_permissions:
        mode = "bypassPermissions"
    approve, deny = _decisions(ns, print_mode)
    return CliOptions(
        approve=approve,
        deny=deny,
        prompt=prompt or None,
        print_mode=print_mode,
        output_format=ns.output_format,
        json_schema=ns.json_schema,
        include_partial_messages=ns.include_partial_messages,
        model=ns.model,
        fallback_model=ns.fallback_model,
        max_turns=ns.max_turns,
        continue_latest=ns.continue_latest,
        resume=ns.resume,
        permission_mode=mode,
        allowed_tools=_split_rules(ns.allowed_tools),
        disallowed_tools=_split_rules(ns.disallowed_tools),
        mcp_config=ns.mcp_config,
        plugin_dirs=tuple(d.expanduser().resolve() for d in ns.plugin_dirs),
        append_system_prompt=ns.append_system_prompt,
        system_prompt=ns.system_prompt,
        cwd=_resolve_cwd(ns.cwd),
        verbose=ns.verbose,
        trust=True if ns.trust else None,
        tool_use_summaries=bool(ns.tool_use_summaries),
        compaction=ns.compaction,
        cache_ttl=ns.cache_ttl,
        session_store=ns.session_store,
    )


def _decisions(
    ns: argparse.Namespace, print_mode: bool
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """`--approve ID` and `--deny ID[=MESSAGE]`: for a resumed session in print mode, each id
    decided once."""
    approve = tuple(ns.approve)
    deny = tuple(_split_denial(value) for value in ns.deny)
    if not approve and not deny:
        return approve, deny
    if not print_mode or not (ns.resume or ns.continue_latest):
        raise UsageError("--approve and --deny decide a resumed session's deferred calls: "
                         "use them with -p and --resume ID (or --continue)")  # fmt: skip
    ids = [*approve, *(ident for ident, _ in deny)]
    twice = sorted({ident for ident in ids if ids.count(ident) > 1})
    if twice:
        raise UsageError(f"{', '.join(twice)} decided more than once: give one decision each")
    return approve, deny


def _split_denial(value: str) -> tuple[str, str]:
    ident, _, message = value.partition("=")
    if not ident.strip():
        raise UsageError(f"--deny {value!r}: give the tool_use id, then =MESSAGE if you like")
    return ident.strip(), message.strip()


def _resolve_cwd(cwd: Path | None) -> Path:
    path = (cwd or Path.cwd()).expanduser().resolve()
    if not path.is_dir():
        raise UsageError(f"--cwd {str(cwd)!r} is not a folder")
    return path


def _json_object(text: str) -> dict[str, Any]:
    """A JSON object given on the command line (`--json-schema '{"type": "object", ...}'`)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object (a JSON Schema)")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def split_rules(values: list[str]) -> tuple[str, ...]:
    """Rules from repeated flags, each comma- or space-separated; `Bash(git diff:*)` keeps its
    inner spaces and commas."""
    rules: list[str] = []
    for value in values:
        current, depth = "", 0
        for char in value:
            depth += (char == "(") - (char == ")")
            if char in ", " and depth == 0:
                if current:
                    rules.append(current)
                current = ""
            else:
                current += char
        if current:
            rules.append(current)
    return tuple(rules)


_split_rules = split_rules
