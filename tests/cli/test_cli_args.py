"""The command line without a model: flags, errors, exit codes, subcommands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from queryloop.cli.args import UsageError, parse_args, split_rules
from queryloop.cli.exit_codes import ExitCode, exit_code_for
from queryloop.loop.reasons import Terminal


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            stdin: str = "") -> subprocess.CompletedProcess[str]:  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "queryloop.cli.main", *args],
        capture_output=True, text=True, env=base, cwd=cwd, input=stdin, timeout=60,
    )  # fmt: skip


def test_every_terminal_reason_has_a_distinct_documented_exit_code() -> None:
    codes = {t: exit_code_for(t) for t in Terminal}
    assert codes[Terminal.COMPLETED] == 0
    assert all(code not in (0, ExitCode.ERROR) for t, code in codes.items() if t != "completed")
    assert codes[Terminal.MAX_TURNS] == 3
    assert codes[Terminal.PROMPT_TOO_LONG] == codes[Terminal.BLOCKING_LIMIT] == 4
    assert codes[Terminal.MODEL_ERROR] == 5
    assert codes[Terminal.ABORTED_TOOLS] == 6
    assert exit_code_for(Terminal.ABORTED_STREAMING, interrupted=True) == 130
    assert codes[Terminal.HOOK_STOPPED] == codes[Terminal.STOP_HOOK_PREVENTED] == 7
    doc = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    for code in ExitCode:
        assert f"| {int(code)} |" in doc


def test_parse_flags_and_rules(tmp_path: Path) -> None:
    opts = parse_args(
        ["-p", "hi", "--model", "m", "--max-turns", "3", "--cwd", str(tmp_path),
         "--allowed-tools", "Read,Bash(git diff:*) Edit", "--disallowed-tools", "Write",
         "--permission-mode", "plan", "--output-format", "json", "--compaction", "economy"]
    )  # fmt: skip
    assert opts is not None and opts.print_mode and opts.prompt == "hi"
    assert opts.allowed_tools == ("Read", "Bash(git diff:*)", "Edit")
    kwargs = opts.agent_kwargs()
    assert kwargs["max_turns"] == 3 and kwargs["permission_mode"] == "plan"
    assert kwargs["cwd"] == tmp_path.resolve() and kwargs["disallowed_tools"] == ("Write",)
    assert kwargs["compaction"] == "economy"
    plain = parse_args(["-p", "hi"])
    assert plain is not None and "compaction" not in plain.agent_kwargs()  # settings decide
    assert parse_args(["--version"]) is None
    assert split_rules(["Bash(npm run a, b)", "Read Write"]) == (
        "Bash(npm run a, b)", "Read", "Write")  # fmt: skip
    for bad in (["--max-turns", "0"], ["-c", "-r", "x"], ["--output-format", "json"],
                ["--permission-mode", "yolo"], ["--cwd", str(tmp_path / "missing")],
                ["--compaction", "cheap"]):  # fmt: skip
        with pytest.raises(UsageError):
            parse_args(bad)


def test_bad_flag_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("--frobnicate", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--frobnicate" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_api_key_is_actionable_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("-p", "hello", cwd=tmp_path, env={"QUERYLOOP_HOME": str(tmp_path)})
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr and "Traceback" not in done.stderr
    done = run_cli("-p", "hi", "--model", "openai:llama3", cwd=tmp_path)
    assert done.returncode == 2 and "OPENAI_BASE_URL" in done.stderr


def test_empty_stdin_prompt_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("-p", cwd=tmp_path, env={"ANTHROPIC_API_KEY": "x"}, stdin="  \n")
    assert done.returncode == 2 and "no prompt" in done.stderr


def test_version_and_help_do_not_import_heavy_modules(tmp_path: Path) -> None:
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("queryloop ")
    code = (
        "import sys; from queryloop.cli.main import main; main(['--version'])"
        "; heavy = [m for m in ('anthropic', 'openai', 'mcp', 'prompt_toolkit', 'rich', "
        "'pydantic', 'asyncio') if m in sys.modules]; print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "usage: queryloop" in run_cli("--help").stdout


def test_sessions_does_not_load_the_loop_or_an_sdk(tmp_path: Path) -> None:
    code = (
        "import sys; from queryloop.cli.main import main; main(['sessions'])"
        "; heavy = [m for m in ('queryloop.loop', 'queryloop.tools', 'anthropic', 'openai') "
        "if m in sys.modules]; print(heavy)"
    )
    env = {**os.environ, "QUERYLOOP_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_sessions_and_trust_subcommands(tmp_path: Path) -> None:
    from queryloop.messages import user_message
    from queryloop.session import Transcript, session_path

    home = tmp_path / "home"
    env = {"QUERYLOOP_HOME": str(home)}
    done = run_cli("sessions", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "no sessions yet" in done.stdout
    with Transcript(session_path("abc-123", tmp_path, home)) as w:
        w.append(user_message("fix the bug please"))
    done = run_cli("sessions", cwd=tmp_path, env=env)
    assert "abc-123" in done.stdout and "fix the bug please" in done.stdout
    done = run_cli("trust", str(tmp_path), env=env)
    assert done.returncode == 0
    assert str(tmp_path.resolve()) in (home / "settings.json").read_text()


def test_the_options_are_declared_once() -> None:
    """Every Agent-level option of the command line is an `AgentOptions` field with the same
    name, type and default; `AgentKwargs` (the typed keywords of `Agent(...)`) names the same
    fields with the same types (cwd, home, mcp_config and add_dirs also take str); `agent_kwargs`
    passes on exactly the Agent-level ones; the flag's choices are the option's."""
    import dataclasses
    import typing

    from queryloop.agent import AgentKwargs
    from queryloop.agent.options import OWN_PARAMETERS, PermissionModeName, option_fields
    from queryloop.cli.args import (
        CACHE_TTLS,
        COMPACTIONS,
        PERMISSION_MODES,
        CliOptions,
        build_parser,
    )
    from queryloop.compact.policy import COMPACTION_NAMES, CompactionName
    from queryloop.context.cache_ttl import CacheTtlSetting

    def written(annotation: typing.Any) -> object:
        return getattr(annotation, "__forward_arg__", annotation)

    options = option_fields()
    cli = [f for f in dataclasses.fields(CliOptions) if f.metadata.get("agent_option")]
    assert {f.name for f in cli} >= {"model", "cwd", "permission_mode", "allowed_tools"}
    for item in cli:
        twin = options[item.name]
        assert written(item.type) == written(twin.type), item.name
        assert item.default == twin.default, item.name
        assert item.default_factory == twin.default_factory, item.name
    kwargs = {k: written(v) for k, v in AgentKwargs.__annotations__.items()}
    assert set(kwargs) == set(options) - OWN_PARAMETERS
    widened = dict.fromkeys(("cwd", "home", "mcp_config"), "str | Path | None")
    widened["add_dirs"] = "Sequence[str | Path]"
    for name, hint in kwargs.items():
        assert hint == widened.get(name, written(options[name].type)), name
    flags = {a.dest for a in build_parser()._actions}
    assert {f.name for f in cli} <= flags
    assert PERMISSION_MODES == typing.get_args(PermissionModeName)
    assert COMPACTIONS == typing.get_args(CompactionName) == COMPACTION_NAMES
    assert CACHE_TTLS == typing.get_args(CacheTtlSetting)
    given = CliOptions(max_turns=3, allowed_tools=("Read",), tool_use_summaries=True)
    assert given.agent_kwargs() == {
        "max_turns": 3, "allowed_tools": ("Read",), "tool_use_summaries": True,
        "cwd": given.cwd}  # fmt: skip
