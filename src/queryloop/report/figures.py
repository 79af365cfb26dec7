"""The report's charts as plotly.js figure specs (plain dicts: data + layout).

Built by hand rather than with `plotly.graph_objects`, which would add a second of imports
for nothing: the page only needs JSON that `Plotly.newPlot` draws. Times are seconds since
the session's first record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .model import (
    EventKind,
    Lane,
    RequestOutcome,
    RequestSpan,
    SessionTimeline,
    ToolSpan,
)

Figure = dict[str, Any]

COLORS = {
    "cache_read": "#4c9f70",
    "cache_write": "#f2b134",
    "input": "#3d7dca",
    "output": "#a05195",
    "cost": "#222222",
    "context": "#3d7dca",
    "window": "#b22222",
    "threshold": "#e67e22",
    "waiting": "#c6d8ef",
    "streaming": "#3d7dca",
    "abandoned": "#9e9e9e",
    "failed": "#b22222",
    "tool_ok": "#4c9f70",
    "tool_error": "#d62728",
    "tool_denied": "#ff7f0e",
    "tool_unfinished": "#bdbdbd",
}
EVENT_SYMBOLS = {
    EventKind.TRANSITION: ("triangle-right", "#555555"),
    EventKind.RECOVERY: ("diamond", "#e67e22"),
    EventKind.TERMINAL: ("square", "#b22222"),
    EventKind.COMPACTION: ("star", "#6a3d9a"),
}
LABEL_PRIORITY = (
    EventKind.TERMINAL,
    EventKind.RECOVERY,
    EventKind.COMPACTION,
    EventKind.TRANSITION,
)
"""Whose label keeps its place when labels collide (see `labels.py`): the event traces are
emitted in this order, and the page lays labels out in trace order."""
_BASE_LAYOUT: dict[str, Any] = {
    "margin": {"l": 70, "r": 30, "t": 50, "b": 50},
    "legend": {"orientation": "h", "y": -0.25},
    "hovermode": "closest",
    "template": None,
    "paper_bgcolor": "white",
    "plot_bgcolor": "#fafafa",
}


def _ok(lane: Lane) -> list[RequestSpan]:
    return [r for r in lane.requests if r.outcome is RequestOutcome.OK]


def context_figure(timeline: SessionTimeline) -> Figure:
    """Context size of every request against the window and the autocompact threshold,
    with each compaction marked by what it freed."""
    t0 = timeline.t0
    lane = timeline.main
    requests = _ok(lane)
    xs = [round(r.start - t0, 3) for r in requests]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "context (prompt tokens)",
            "x": xs,
            "y": [r.context_tokens for r in requests],
            "text": [f"request {i + 1}, turn {r.turn}, {r.model}" for i, r in enumerate(requests)],
            "hovertemplate": "%{text}<br>%{y:,} tokens at %{x:.2f}s<extra></extra>",
            "line": {"color": COLORS["context"]},
        }
    ]
    for key, name, attr in (
        ("window", "context window", "window"),
        ("threshold", "autocompact threshold", "autocompact_at"),
    ):
        values = [getattr(r, attr) for r in requests]
        if any(values):
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": name,
                    "x": xs,
                    "y": values,
                    "line": {"color": COLORS[key], "dash": "dash", "shape": "hv"},
                    "hovertemplate": f"{name}: %{{y:,}}<extra></extra>",
                }
            )
    shapes, annotations = [], []
    for c in lane.compactions:
        x = round(c.t - t0, 3)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": EVENT_SYMBOLS[EventKind.COMPACTION][1], "dash": "dot"},
            }
        )
        freed = f"freed {c.freed:,}" if c.freed is not None else "freed ?"
        annotations.append(
            {
                "x": x,
                "y": 1,
                "yref": "paper",
                "text": f"{c.kind}: {freed}",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"size": 11, "color": EVENT_SYMBOLS[EventKind.COMPACTION][1]},
            }
        )
    peak = max((r.context_tokens for r in requests), default=0)
    window = max((r.window for r in requests), default=0)
    # A 1M window would flatten a 20k conversation to the axis: log scale shows both.
    yaxis: dict[str, Any] = {"title": {"text": "tokens"}, "rangemode": "tozero"}
    if peak and window > 10 * peak:
        yaxis = {"title": {"text": "tokens (log)"}, "type": "log"}
    layout = {
        **_BASE_LAYOUT,
        "title": {"text": "Context size per request"},
        "xaxis": {"title": {"text": "seconds since start"}},
        "yaxis": yaxis,
        "shapes": shapes,
        "annotations": annotations,
    }
    return {"data": data, "layout": layout}


def tokens_figure(timeline: SessionTimeline) -> Figure:
    """Tokens per request (cache read / cache write / uncached input / output, stacked) and
    the cumulative cost on a second axis."""
    requests = _ok(timeline.main)
    xs = [f"#{i + 1}" for i in range(len(requests))]
    parts: tuple[tuple[str, str, Callable[[RequestSpan], int]], ...] = (
        ("cache_read", "cache read", lambda r: r.usage.cache_read_input_tokens),
        ("cache_write", "cache write", lambda r: r.usage.cache_creation_input_tokens),
        ("input", "uncached input", lambda r: r.usage.input_tokens),
        ("output", "output", lambda r: r.usage.output_tokens),
    )
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": name,
            "x": xs,
            "y": [value(r) for r in requests],
            "marker": {"color": COLORS[key]},
            "hovertemplate": f"{name}: %{{y:,}}<extra>%{{x}}</extra>",
        }
        for key, name, value in parts
    ]
    cumulative, total = [], 0.0
    for r in requests:
        total += r.cost_usd
        cumulative.append(round(total, 6))
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "cumulative cost (USD)",
            "x": xs,
            "y": cumulative,
            "yaxis": "y2",
            "line": {"color": COLORS["cost"]},
            "hovertemplate": "$%{y:.4f} so far<extra>%{x}</extra>",
        }
    )
    layout = {
        **_BASE_LAYOUT,
        "title": {"text": "Tokens per request and cumulative cost"},
        "barmode": "stack",
        "xaxis": {"title": {"text": "request"}, "type": "category"},
        "yaxis": {"title": {"text": "tokens"}},
        "yaxis2": {
            "title": {"text": "USD"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        },
    }
    return {"data": data, "layout": layout}


def timeline_figure(timeline: SessionTimeline) -> Figure:
    """The model's stream and every tool call as bars on one time axis, one row per lane's
    model, as many tool rows as calls overlapped, and a row of point events."""
    t0 = timeline.t0
    end = max((_lane_end(lane) for lane in timeline.lanes), default=t0) - t0
    min_width = max(end * 0.004, 0.002)
    rows: list[str] = []
    data: list[dict[str, Any]] = []
    for lane in timeline.lanes:
        prefix = "" if lane.id == "main" else f"↳ {lane.label} · "
        model_row = f"{prefix}model"
        rows.append(model_row)
        data.extend(_request_bars(lane.requests, model_row, t0, min_width))
        tool_rows = _pack(lane.tools)
        names = [f"{prefix}tools {i + 1}" for i in range(max(tool_rows, default=-1) + 1)]
        rows.extend(names)
        data.extend(_tool_bars(lane.tools, tool_rows, names, t0, end, min_width))
        events_row = f"{prefix}events"
        rows.append(events_row)
        data.extend(_event_markers(lane, events_row, t0))
    _one_legend_entry_per_name(data)
    layout = {
        **_BASE_LAYOUT,
        "title": {"text": "Timeline: model stream, tool calls, transitions and recovery"},
        "barmode": "overlay",
        "height": max(320, 60 + 34 * len(rows)),
        "xaxis": {"title": {"text": "seconds since start"}, "rangemode": "tozero"},
        "yaxis": {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": list(reversed(rows)),
            # Room under the bottom row, where an event label moved below its marker goes.
            "range": [-0.9, len(rows) - 0.5],
            "automargin": True,
        },
        "showlegend": True,
    }
    return {"data": data, "layout": layout}


def _one_legend_entry_per_name(traces: list[dict[str, Any]]) -> None:
    """Lanes repeat trace kinds; the legend lists each kind once and toggles all lanes."""
    seen: set[str] = set()
    for trace in traces:
        name = str(trace["name"])
        trace["legendgroup"] = name
        trace["showlegend"] = name not in seen
        seen.add(name)


def _lane_end(lane: Lane) -> float:
    times = [r.end or r.start for r in lane.requests]
    times += [t.end or t.start for t in lane.tools]
    times += [e.t for e in lane.events]
    return max(times, default=0.0)


def _bar(name: str, row: str, spans: list[tuple[float, float, str]], color: str) -> dict[str, Any]:
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        "y": [row] * len(spans),
        "base": [round(s, 4) for s, _, _ in spans],
        "x": [round(w, 4) for _, w, _ in spans],
        "text": [t for _, _, t in spans],
        "textposition": "none",
        "hovertemplate": "%{text}<extra></extra>",
        "marker": {"color": color, "line": {"color": "white", "width": 1}},
        "width": 0.6,
    }


def _request_bars(
    requests: Sequence[RequestSpan], row: str, t0: float, min_width: float
) -> list[dict[str, Any]]:
    groups: dict[str, list[tuple[float, float, str]]] = {}
    for r in requests:
        start = r.start - t0
        first = (r.first_token or r.end or r.start) - t0
        stop = (r.end or r.first_token or r.start) - t0
        label = f"request turn {r.turn} · {r.model}"
        if r.outcome is not RequestOutcome.OK:
            width = max(stop - start, first - start, min_width)
            groups.setdefault(r.outcome.value, []).append(
                (start, width, f"{label}<br>{r.outcome.value}")
            )
            continue
        wait = first - start
        groups.setdefault("waiting", []).append(
            (start, max(wait, min_width / 2), f"{label}<br>waiting for first token: {wait:.3f}s")
        )
        out = r.usage.output_tokens
        groups.setdefault("streaming", []).append(
            (
                first,
                max(stop - first, min_width / 2),
                f"{label}<br>streaming {stop - first:.3f}s, {out:,} output tokens, "
                f"stop: {r.stop_reason}",
            )
        )
    names = {
        "waiting": ("request → first token", COLORS["waiting"]),
        "streaming": ("model streaming", COLORS["streaming"]),
        "abandoned": ("request abandoned (retry/fallback)", COLORS["abandoned"]),
        "failed": ("request failed", COLORS["failed"]),
    }
    return [_bar(names[k][0], row, spans, names[k][1]) for k, spans in groups.items()]


def _pack(tools: Sequence[ToolSpan]) -> list[int]:
    """A row per tool call so that calls on one row never overlap (greedy, by start)."""
    row_ends: list[float] = []
    rows: list[int] = []
    for tool in tools:
        end = tool.end if tool.end is not None else float("inf")
        for index, row_end in enumerate(row_ends):
            if row_end <= tool.start:
                row_ends[index] = end
                rows.append(index)
                break
        else:
            row_ends.append(end)
            rows.append(len(row_ends) - 1)
    return rows


def _tool_bars(
    tools: Sequence[ToolSpan],
    rows: list[int],
    names: list[str],
    t0: float,
    end: float,
    min_width: float,
) -> list[dict[str, Any]]:
    groups: dict[str, list[tuple[float, float, str]]] = {}
    by_row: dict[str, list[str]] = {}
    for tool, row in zip(tools, rows, strict=True):
        start = tool.start - t0
        stop = (tool.end - t0) if tool.end is not None else end
        if tool.end is None:
            status = "tool_unfinished"
        elif tool.denied:
            status = "tool_denied"
        elif tool.is_error:
            status = "tool_error"
        else:
            status = "tool_ok"
        text = f"{tool.name} ({tool.tool_use_id[-8:]})<br>{stop - start:.3f}s · {status[5:]}"
        groups.setdefault(status, []).append((start, max(stop - start, min_width), text))
        by_row.setdefault(status, []).append(names[row])
    labels = {
        "tool_ok": "tool call",
        "tool_error": "tool error",
        "tool_denied": "tool denied",
        "tool_unfinished": "tool unfinished",
    }
    bars = []
    for status, spans in groups.items():
        bar = _bar(labels[status], "", spans, COLORS[status])
        bar["y"] = by_row[status]
        bars.append(bar)
    return bars


def _event_markers(lane: Lane, row: str, t0: float) -> list[dict[str, Any]]:
    traces = []
    for kind in LABEL_PRIORITY:
        events = [e for e in lane.events if e.kind is kind]
        if not events:
            continue
        symbol, color = EVENT_SYMBOLS[kind]
        traces.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": kind.value,
                "x": [round(e.t - t0, 4) for e in events],
                "y": [row] * len(events),
                "text": [e.label for e in events],
                "textposition": "top center",  # the page moves a label below if need be
                "textfont": {"size": 10},
                "customdata": [e.detail[:200] for e in events],
                "hovertemplate": "%{text}<br>%{customdata}<br>at %{x:.3f}s<extra></extra>",
                "marker": {"symbol": symbol, "size": 11, "color": color},
            }
        )
    return traces
