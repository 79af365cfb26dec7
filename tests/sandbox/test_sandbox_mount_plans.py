"""Random mount plans run by the real bwrap: read-only paths existing or missing, nested in
one another, in writable folders, in hidden ones. bwrap must start every time (no mount point
to make inside a read-only mount, issue 31), and no write inside reaches a read-only path."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import bwrap_problem
from queryloop.sandbox import SandboxPolicy, bwrap_argv, plan_mounts
from queryloop.sandbox.bwrap import write_stand_ins
from queryloop.sandbox.policy import ReadOnlyPath, StandIn

Rel = tuple[str, ...]
_NAMES = st.sampled_from(["a", "b", ".git"])
_RELS = st.lists(_NAMES, min_size=1, max_size=4).map(tuple)


@dataclass(frozen=True)
class Layout:
    """A tree to build under a fresh folder, and the policy over it (relative paths)."""

    dirs: frozenset[Rel]
    files: frozenset[Rel]
    writable: tuple[Rel, ...]
    read_only: tuple[tuple[Rel, StandIn], ...]
    deny_read: tuple[Rel, ...]


@st.composite
def layouts(draw: st.DrawFn) -> Layout:
    leaves = draw(st.lists(_RELS, max_size=6))
    dirs = {leaf[:n] for leaf in leaves for n in range(1, len(leaf))}
    files = {leaf for leaf in leaves if leaf not in dirs and draw(st.booleans())}
    dirs |= {leaf for leaf in leaves if leaf not in files}
    existing = sorted(dirs | files)
    writable = draw(st.lists(st.sampled_from(sorted(dirs | {()})), min_size=1, max_size=3))
    anywhere = st.one_of(st.sampled_from(existing), _RELS) if existing else _RELS
    read_only = draw(st.lists(st.tuples(anywhere, st.sampled_from(StandIn)), max_size=6))
    denied = draw(st.lists(st.sampled_from(existing), max_size=2)) if existing else []
    return Layout(
        frozenset(dirs), frozenset(files), tuple(writable), tuple(read_only), tuple(denied)
    )


def _build(base: Path, layout: Layout) -> None:
    for rel in sorted(layout.dirs, key=len):
        base.joinpath(*rel).mkdir(exist_ok=True)
    for rel in layout.files:
        base.joinpath(*rel).write_text("original")


def _state(path: Path) -> object:
    if path.is_dir():
        return sorted(p.name for p in path.iterdir())
    return path.read_text() if path.is_file() else None


@pytest.mark.skipif(bwrap_problem() is not None, reason=str(bwrap_problem()))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts())
def test_bwrap_starts_and_read_only_paths_hold(layout: Layout) -> None:
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    # /var/tmp, not /tmp: outside the working folders the host stays visible (read-only)
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="ql-plans-"))
    stand_ins = Path(tempfile.mkdtemp(prefix="ql-stand-ins-"))
    try:
        write_stand_ins(stand_ins)
        _build(base, layout)
        read_only = [base.joinpath(*rel) for rel, _ in layout.read_only]
        policy = SandboxPolicy(
            read_only=tuple(ReadOnlyPath(base.joinpath(*r), s) for r, s in layout.read_only),
            deny_read=tuple(base.joinpath(*rel) for rel in layout.deny_read),
        )
        before = [_state(p) for p in read_only]
        plan = plan_mounts(
            policy, [base.joinpath(*w) for w in layout.writable], stand_ins=stand_ins
        )
        writes = "".join(
            f"mkdir -p {shlex.quote(str(p.parent))}; echo x >> {shlex.quote(str(p))};"
            f" echo x > {shlex.quote(str(p / 'new'))};"
            for p in read_only
        )
        argv = bwrap_argv(bwrap, plan, ["sh", "-c", f"{writes} echo started"], cwd=Path("/"))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        assert "started" in done.stdout, (done.stderr, argv)
        for path in sorted(plan.placeholders, key=lambda p: len(p.parts), reverse=True):
            assert path.is_dir() or path.stat().st_size == 0
            path.rmdir() if path.is_dir() else path.unlink()
        assert [_state(p) for p in read_only] == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(stand_ins, ignore_errors=True)
