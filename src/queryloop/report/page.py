"""The report as one self-contained HTML page: plotly.js inlined, the figures as JSON.

No CDN, no network at view time: the page carries plotly.min.js (~4.8 MB) from the plotly
wheel (`plotly.offline.get_plotlyjs()`), so it opens from a mail attachment or a CI artefact.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from .costs import caching_line, compaction_line
from .figures import Figure, context_figure, timeline_figure, tokens_figure
from .labels import LAYOUT_LABELS_JS
from .model import EventKind, RequestOutcome, SessionTimeline, ToolSpan

CHART_IDS = ("context-chart", "tokens-chart", "timeline-chart")

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #666; margin-bottom: 16px; }
table.summary { border-collapse: collapse; margin: 12px 0 20px; }
table.summary td { padding: 3px 14px 3px 0; vertical-align: top; }
table.summary td:first-child { color: #666; }
.chart { width: 100%; min-height: 380px; margin-bottom: 18px; }
.note { color: #8a6d3b; background: #fcf8e3; padding: 6px 10px; margin: 8px 0; }
"""


def plotly_js() -> str:
    """The plotly.js bundle shipped in the plotly wheel."""
    from plotly.offline import get_plotlyjs

    script: str = get_plotlyjs()
    return script


def render_page(timeline: SessionTimeline) -> str:
    """The whole page for `timeline`."""
    figures: dict[str, Figure] = {
        CHART_IDS[0]: context_figure(timeline),
        CHART_IDS[1]: tokens_figure(timeline),
        CHART_IDS[2]: timeline_figure(timeline),
    }
    notes = [html.escape(p) for p in timeline.problems]
    if not timeline.main.has_timing:
        notes.append(
            "This transcript has no timing records (written before they existed): token and "
            "cost charts come from its usage records; the timeline has nothing to draw."
        )
    divs = "\n".join(f'<div id="{cid}" class="chart"></div>' for cid in figures)
    payload = _script_json(figures)
    title = f"queryloop session {timeline.session_id}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style>
<script>{plotly_js()}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<div class="sub">{html.escape(timeline.location or str(timeline.path))}</div>
{"".join(f'<div class="note">{n}</div>' for n in notes)}
{_summary_table(timeline)}
{divs}
<script id="figures" type="application/json">{payload}</script>
<script>{LAYOUT_LABELS_JS}
const figures = JSON.parse(document.getElementById("figures").textContent);
const drawn = Object.entries(figures).map(([id, fig]) =>
  Plotly.newPlot(id, fig.data, fig.layout, {{responsive: true, displaylogo: false}}));
const timeline = document.getElementById("{CHART_IDS[2]}");
Promise.all(drawn).then(() => {{
  layoutEventLabels(timeline);
  timeline.on("plotly_afterplot", () => layoutEventLabels(timeline));
  document.body.dataset.rendered = "true";
}});
</script>
</body></html>
"""


def _script_json(value: Any) -> str:
    """JSON that cannot close the script element it sits in."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def summary(timeline: SessionTimeline) -> dict[str, str]:
    """The figures at the top of the page, as label -> text."""
    lanes = timeline.lanes
    ok = [r for lane in lanes for r in lane.requests if r.outcome is RequestOutcome.OK]
    read = sum(r.usage.cache_read_input_tokens for r in ok)
    prompt = sum(r.usage.total_input_tokens for r in ok)
    tools = [t for lane in lanes for t in lane.tools]
    terminals = Counter(
        e.label for lane in lanes for e in lane.events if e.kind is EventKind.TERMINAL
    )
    recoveries = Counter(
        e.label for lane in lanes for e in lane.events if e.kind is EventKind.RECOVERY
    )
    compactions = Counter(str(c.kind) for lane in lanes for c in lane.compactions)
    return {
        "model": str(timeline.metadata.get("model") or (ok[0].model if ok else "?")),
        "working folder": str(timeline.metadata.get("cwd") or ""),
        "requests": f"{len(ok)} completed, "
        f"{sum(1 for lane in lanes for r in lane.requests) - len(ok)} abandoned or failed",
        "tokens": f"{prompt:,} prompt ({read:,} read from cache), "
        f"{sum(r.usage.output_tokens for r in ok):,} output",
        "cache hit rate": f"{read / prompt:.1%}" if prompt else "n/a",
        "cost": _cost_line(sum(r.cost_usd for r in ok), sum(lane.side_cost_usd for lane in lanes)),
        "caching saved": caching_line(timeline.costs),
        "tool calls": _tools_line(tools),
        "terminal reasons": _counts(terminals),
        "recovery events": _counts(recoveries),
        "compactions": _counts(compactions),
        "subagents": str(len(lanes) - 1),
    }


def _cost_line(turns: float, side: float) -> str:
    if not side:
        return f"${turns:.4f}"
    return f"${turns + side:.4f} (${side:.4f} of it compaction, side and interrupted requests)"


def _tools_line(tools: list[ToolSpan]) -> str:
    errors = sum(1 for t in tools if t.is_error and not t.denied)
    denied = sum(1 for t in tools if t.denied)
    return f"{len(tools)} ({errors} errors, {denied} denied), at most {_parallel(tools)} at once"


def _parallel(tools: list[ToolSpan]) -> int:
    points = [(t.start, 1) for t in tools] + [(t.end or t.start, -1) for t in tools]
    best = running = 0
    for _, step in sorted(points, key=lambda p: (p[0], p[1])):
        running += step
        best = max(best, running)
    return best


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} × {n}" for name, n in counter.most_common()) or "none"


def _summary_table(timeline: SessionTimeline) -> str:
    items = list(summary(timeline).items())
    t0 = timeline.t0
    items += [
        (f"compaction at +{c.t - t0:.0f} s", compaction_line(c)) for c in timeline.costs.compactions
    ]
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in items)
    return f'<table class="summary">{rows}</table>'
