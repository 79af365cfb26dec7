"""`queryloop report` and `queryloop batch`: subcommands with their own arguments.

Light at import (standard library only); each loads what it needs when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .args import CliOptions, UsageError, _Parser, _positive_int, _resolve_cwd
from .exit_codes import ExitCode

if TYPE_CHECKING:
    from ..session.stores import TranscriptRef


def run_subcommand(command: str, argv: Sequence[str], out: TextIO) -> int:
    """Run `queryloop report ...`, `batch ...` or `mcp ...`; the exit status."""
    if command == "report":
        return report_command(list(argv), out)
    if command == "mcp":
        from .mcp_cmd import mcp_command

        return mcp_command(list(argv), out)
    return batch_command(list(argv), out)


def _report_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="queryloop report",
        description="Write a session's report: one self-contained HTML page (works offline).",
    )
    p.add_argument(
        "session", nargs="?", help="session id, id prefix or transcript path (default: latest)"
    )
    p.add_argument("-o", "--out", type=Path, help="where to write (default: beside the transcript)")
    p.add_argument("--cwd", type=Path, help="the project folder whose sessions to look in")
    p.add_argument("--verbose", action="store_true")
    return p


def report_command(argv: list[str], out: TextIO) -> int:
    """`queryloop report [SESSION] [--out FILE]`: print the path of the page written."""
    from ..report import write_report

    ns = _report_parser().parse_args(argv)
    cwd = _resolve_cwd(ns.cwd)
    with stored_session(cwd, ns.session) as ref:
        if ref is None:
            raise UsageError(f"no sessions in {cwd}: name one (`queryloop sessions` lists them)")
        page = write_report(ref, ns.out)
    out.write(f"{page}\n")
    return ExitCode.OK


@contextmanager
def stored_session(cwd: Path, session: str | None) -> Iterator[TranscriptRef | None]:
    """The session a subcommand names (an id, a unique prefix or a `.jsonl` path; None: the
    latest) in the configured store, open while the block runs; None when there is none."""
    from ..session.stores import as_ref, close_store, find_transcript, latest_transcript
    from .agent_factory import open_cli_store

    if session and session.endswith(".jsonl") and Path(session).expanduser().is_file():
        yield as_ref(Path(session).expanduser())
        return
    store, opened = open_cli_store(CliOptions(cwd=cwd))
    try:
        yield find_transcript(store, session, cwd) if session else latest_transcript(store, cwd)
    finally:
        if opened:
            close_store(store)


def _batch_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="queryloop batch",
        description="Run one agent session per line of TASKS.jsonl; a re-run resumes.",
    )
    p.add_argument("tasks", type=Path, help="JSONL: {id, prompt, cwd?, options?} per line")
    p.add_argument("--out", type=Path, required=True, help="results JSONL (appended)")
    p.add_argument("--concurrency", type=_positive_int, default=4, help="sessions at once")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray ('auto', 'local', ray://...)")
    p.add_argument(
        "--session-store",
        metavar="URL",
        help="keep the tasks' sessions in this store (postgresql://...), shared by all workers",
    )
    p.add_argument("--cost-cap", type=float, metavar="USD", help="start no task past this cost")
    p.add_argument("--model", help="the default model for tasks that name none")
    p.add_argument("--max-turns", type=_positive_int, help="default max turns per task")
    p.add_argument("--permission-mode", help="default permission mode for the tasks")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true")
    return p


def batch_command(argv: list[str], out: TextIO) -> int:
    """`queryloop batch TASKS.jsonl --out RESULTS.jsonl ...`."""
    from ..batch import BatchRun, read_tasks

    ns = _batch_parser().parse_args(argv)
    tasks = read_tasks(ns.tasks)
    defaults = {
        k: v
        for k, v in (
            ("model", ns.model),
            ("max_turns", ns.max_turns),
            ("permission_mode", ns.permission_mode),
        )
        if v is not None
    }
    run = BatchRun(
        tasks,
        results_path=ns.out,
        concurrency=ns.concurrency,
        agent_options=defaults,
        cost_cap_usd=ns.cost_cap,
        ray_address=ns.ray,
        progress=not ns.no_progress,
        session_store=ns.session_store,
    )
    summary = run.run()
    out.write(summary.render())
    if summary.interrupted:  # Ctrl-C: the summary, then the shell's 130
        return ExitCode.INTERRUPTED
    return ExitCode.OK if summary.failed == 0 else ExitCode.ERROR
