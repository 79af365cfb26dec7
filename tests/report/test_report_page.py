"""The report page: self-contained, every chart drawn in a real headless Chromium (Debian's
package, driven by playwright; no browser download), and a screenshot kept as an artefact."""

from __future__ import annotations

import asyncio
import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from report_session import RecordedSession

from queryloop import Agent, tool
from queryloop.cli.main import main
from queryloop.report import read_timeline, write_report
from queryloop.report.page import CHART_IDS, summary
from queryloop.session import session_path
from queryloop.testing import MessagesServer, text, tool_use, turn

# The recorded session is made once per worker: one worker runs all the report tests.
pytestmark = pytest.mark.xdist_group("report")

CHROMIUM = Path(os.environ.get("QUERYLOOP_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts"


def test_the_page_is_self_contained(recorded_session: RecordedSession, tmp_path: Path) -> None:
    page = write_report(recorded_session.transcript, tmp_path / "r.html")
    html = page.read_text()
    assert all(f'id="{cid}"' in html for cid in CHART_IDS)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    # Nothing is fetched at view time: no script, stylesheet or image from elsewhere.
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']https?:", html)


def test_the_summary_counts_what_happened(recorded_session: RecordedSession) -> None:
    facts = summary(read_timeline(recorded_session.transcript))
    assert facts["requests"].startswith("6 completed")
    assert facts["tool calls"].startswith("5 (1 errors, 1 denied), at most 3 at once")
    assert facts["terminal reasons"] == "completed × 3"
    assert facts["recovery events"] == "max_output_tokens_escalate × 1"
    assert facts["compactions"] == "manual × 1"
    assert facts["cost"] != "$0.0000"


def test_queryloop_report_writes_the_latest_session(
    recorded_session: RecordedSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYLOOP_HOME", str(recorded_session.transcript.parents[2]))
    out = io.StringIO()
    target = tmp_path / "latest.html"
    code = main(["report", "--cwd", str(recorded_session.cwd), "-o", str(target)], stdout=out)
    assert code == 0 and out.getvalue().strip() == str(target)
    assert target.stat().st_size > 1_000_000
    prefix = recorded_session.session_id[:8]
    code = main(["report", prefix, "--cwd", str(recorded_session.cwd)], stdout=out)
    assert code == 0
    assert recorded_session.transcript.with_suffix(".html").is_file()


@pytest.mark.slow
def test_every_chart_renders_in_headless_chromium(
    recorded_session: RecordedSession, tmp_path: Path
) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.skip(
            f"{CHROMIUM} is missing; `./run test` installs Debian's chromium when run as root "
            "(apt-get install chromium)"
        )
    page_path = write_report(recorded_session.transcript, tmp_path / "report.html")
    errors: list[str] = []
    remote: list[str] = []
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on(
                "request", lambda r: None if r.url.startswith("file:") else remote.append(r.url)
            )
            page.goto(page_path.as_uri())
            page.wait_for_function("document.body.dataset.rendered === 'true'", timeout=30_000)
            counts = {cid: page.locator(f"#{cid} .main-svg").count() for cid in CHART_IDS}
            bars = {cid: page.locator(f"#{cid} g.trace.bars path").count() for cid in CHART_IDS}
            lines = page.locator("#context-chart g.scatterlayer g.trace").count()
            markers = page.locator("#timeline-chart g.scatterlayer .point").count()
            labels = page.evaluate(LABEL_BOXES_JS)
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / "session-report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"\nreport screenshot: {shot}")
    assert errors == []
    assert remote == []
    assert all(n >= 1 for n in counts.values()), counts
    assert bars["tokens-chart"] >= 6 * 3  # at least three non-empty parts per request
    assert bars["timeline-chart"] >= 12 + 5  # two segments per request, one per tool call
    assert lines >= 3  # context, window, threshold
    assert markers >= 6  # transitions, terminals, the escalation and the compaction
    assert overlapping(labels) == []
    assert shot.stat().st_size > 20_000


# ---- event labels never overlap (issue 25.8) ------------------------------------------------


@tool(read_only=True)
def ping(n: int) -> str:
    """Answer at once.

    Args:
        n: Echoed back.
    """
    return f"pong {n}"


BUSY_TURNS = 60


def busy_session(tmp_path: Path) -> Path:
    """A real session dense with events: 60 quick tool turns (a `next_turn` each), then two
    prompts answered at once (three `completed` close together), as in the issue."""
    script = [turn(tool_use("ping", {"n": i})) for i in range(BUSY_TURNS)]
    script += [turn(text("done")), turn(text("again")), turn(text("and again"))]

    async def go() -> Path:
        with MessagesServer(script) as server:
            agent = Agent(
                "claude-sonnet-5-5",
                base_url=server.base_url,
                cwd=tmp_path,
                home=tmp_path / "home",
                tools=[ping],
            )
            try:
                for prompt in ("ping sixty times", "again", "and again"):
                    await agent.run(prompt)
            finally:
                await agent.aclose()
        return session_path(agent.session_id, tmp_path, tmp_path / "home")

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_API_KEY", "test-key")
        return asyncio.run(go())


LABEL_BOXES_JS = """() => {
  const plot = document.querySelector("#timeline-chart .nsewdrag")
    .getBoundingClientRect();
  return [...document.querySelectorAll("#timeline-chart .scatterlayer g.textpoint")].map((g) => {
    const r = g.getBoundingClientRect();
    const cx = (r.left + r.right) / 2;
    return {text: g.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom,
            shown: getComputedStyle(g).display !== "none",
            inside: cx >= plot.left && cx <= plot.right};
  });
}"""


PASSES_JS = """() => Number(document.getElementById("timeline-chart").dataset.labelPasses)"""


def overlapping(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    shown = [b for b in boxes if b["shown"] and b["inside"]]
    return [
        (a["text"], b["text"])
        for i, a in enumerate(shown)
        for b in shown[i + 1 :]
        if a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]
    ]


@pytest.mark.slow
def test_event_labels_never_overlap_at_any_zoom(tmp_path: Path) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    page_path = write_report(busy_session(tmp_path), tmp_path / "busy.html")
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(page_path.as_uri())
            page.wait_for_function("document.body.dataset.rendered === 'true'", timeout=30_000)
            full = page.evaluate(LABEL_BOXES_JS)
            assert overlapping(full) == []
            ARTIFACTS.mkdir(exist_ok=True)
            page.locator("#timeline-chart").screenshot(path=str(ARTIFACTS / "busy-timeline.png"))
            # Zoom into the first third of the axis: the labels there get room again.
            page.evaluate(
                """() => { const c = document.getElementById("timeline-chart");
                const [a, b] = c._fullLayout.xaxis.range;
                return Plotly.relayout(c, {"xaxis.range": [a, a + (b - a) / 3]}); }"""
            )
            zoomed = page.evaluate(LABEL_BOXES_JS)
            passes = page.evaluate(PASSES_JS)
            page.set_viewport_size({"width": 700, "height": 1000})  # responsive: a redraw
            page.wait_for_function(f"({PASSES_JS})() > {passes}", timeout=30_000)
            narrow = page.evaluate(LABEL_BOXES_JS)
        finally:
            browser.close()
    labels = [b["text"] for b in full]
    assert labels.count("next_turn") == BUSY_TURNS and labels.count("completed") == 3
    assert overlapping(zoomed) == []
    assert overlapping(narrow) == []
    shown = [b for b in full if b["shown"]]
    assert len(shown) < len(full)  # too many for the width: some wait for a zoom
    assert any(b["text"] == "completed" for b in shown)  # terminals go first
    # Zoomed, the window's labels are shown that were hidden before.
    shown_in_window = sum(1 for b in zoomed if b["shown"] and b["inside"])
    before = sum(1 for old, new in zip(full, zoomed, strict=True) if new["inside"] and old["shown"])
    assert shown_in_window > before
