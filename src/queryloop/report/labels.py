"""Event labels on the timeline that never overlap: a layout pass run in the browser.

A label's width in pixels is known only where it is drawn (the font, the chart's width, the
zoom), so the page lays labels out after plotly draws them, and again after every redraw (zoom,
pan, resize: `plotly_afterplot`). Greedy, in the order of the figure's traces, which
`figures._event_markers` puts most important first (terminals, recovery events, compactions,
then transitions), and by time within a trace: each label keeps its side of its marker if that
place is free, else moves to the other side, else is hidden. A hidden label's marker stays, and
its hover text still names it; zooming in gives labels room and they come back.

Plotly draws a label as `<g class="textpoint" transform="translate(0,dy)"><text y=marker-y>`;
moving it to the other side mirrors its box around the marker's y (the text's `y`).
"""

from __future__ import annotations

LABEL_GAP_PX = 3
"""Space kept between two labels, so that neighbours never touch."""

LAYOUT_LABELS_JS = f"""
function layoutEventLabels(chart) {{
  const gap = {LABEL_GAP_PX};
  const placed = [];
  const free = (r) => placed.every((p) =>
    r.right + gap <= p.left || p.right + gap <= r.left ||
    r.bottom + gap <= p.top || p.bottom + gap <= r.top);
  for (const label of chart.querySelectorAll(".scatterlayer g.textpoint")) {{
    label.style.display = "";
    const text = label.querySelector("text");
    if (!text || !text.textContent.trim()) continue;
    let box = label.getBoundingClientRect();
    if (!free(box)) {{
      flipLabel(label, text);
      box = label.getBoundingClientRect();
    }}
    if (free(box)) placed.push(box);
    else label.style.display = "none";
  }}
  chart.dataset.labelPasses = Number(chart.dataset.labelPasses || 0) + 1;  // for tests
}}
function flipLabel(label, text) {{
  const shift = label.transform.baseVal.consolidate();
  const dy = shift ? shift.matrix.f : 0;
  const box = text.getBBox();
  const y = parseFloat(text.getAttribute("y"));
  const flipped = 2 * y - (box.y + box.height + dy) - box.y;
  label.setAttribute("transform", `translate(0,${{flipped}})`);
}}
"""
"""`layoutEventLabels(chartDiv)` and its helper, inlined into the page."""
