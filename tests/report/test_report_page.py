"""The report page: self-contained, every chart drawn in a real headless Chromium (Debian's
package, driven by playwright; no browser download), and a screenshot kept as an artefact."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from report_session import RecordedSession

from queryloop.cli.main import main
from queryloop.report import read_timeline, write_report
from queryloop.report.page import CHART_IDS, summary

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
    assert shot.stat().st_size > 20_000
