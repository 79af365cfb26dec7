"""What the command says about itself (issue 25, items 6 and 7): every subcommand in `--help`,
`queryloop rewind --help`, and a mistyped model name answered with the alias it is closest to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from queryloop.cli.args import SUBCOMMANDS
from queryloop.cli.exit_codes import ExitCode


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.pop("QUERYLOOP_MODEL", None)
    base.update(QUERYLOOP_HOME=str(cwd / "home"), **env)
    return subprocess.run(
        [sys.executable, "-m", "queryloop.cli.main", *args],
        capture_output=True, text=True, env=base, cwd=cwd, timeout=60,
    )  # fmt: skip


def test_help_lists_every_subcommand(tmp_path: Path) -> None:
    done = _run("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in SUBCOMMANDS:
        assert f"queryloop {name}" in done.stdout, f"`queryloop --help` does not list {name}"


def test_every_subcommand_has_its_own_help(tmp_path: Path) -> None:
    for name in SUBCOMMANDS:
        done = _run(name, "--help", cwd=tmp_path)
        assert done.returncode == 0, f"queryloop {name} --help: {done.stderr}"
        assert done.stdout.startswith(f"usage: queryloop {name}"), done.stdout
    rewind = _run("rewind", "--help", cwd=tmp_path).stdout
    for flag in ("--code", "--conversation", "--session"):
        assert flag in rewind


def test_rewind_arguments_are_still_checked(tmp_path: Path) -> None:
    done = _run("rewind", "--code", "--conversation", cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE
    assert "not allowed with" in done.stderr
    done = _run("rewind", "two", cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE and "'two'" in done.stderr


def test_a_mistyped_model_suggests_the_closest_alias_first(tmp_path: Path) -> None:
    done = _run("-p", "hi", "--model", "sonet", cwd=tmp_path, ANTHROPIC_API_KEY="test-key")
    assert done.returncode == ExitCode.USAGE
    message = done.stderr
    assert "'sonnet'" in message, message
    assert message.index("'sonnet'") < message.find("ollama:sonet") or "ollama" not in message
    done = _run("-p", "hi", "--model", "qwen2.5", cwd=tmp_path, ANTHROPIC_API_KEY="test-key")
    assert done.returncode == ExitCode.USAGE
    assert "did you mean" not in done.stderr and "ollama:qwen2.5" in done.stderr
