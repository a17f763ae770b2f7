"""The dashboard's plotly figures, as JSON dicts, in the report's style (`rankgate.report.charts`).

The overview draws up to thousands of points per chart, so its figures are written as plain
dicts (no plotly validation, which costs more than the rest of the page); the compare page's
per-query delta chart is the report's own (`rankgate.report.charts.delta_chart`). Every user
string plotly draws goes through `esc`; each point carries its result id (``customdata[0]``),
which the page's script follows on click.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.dashboard.data import Summary
from rankgate.dashboard.ops import label as ops_label
from rankgate.report.charts import PALETTE, STATUS_COLORS, TEMPLATE, esc

SYMBOLS = {"pass": "circle", "warn": "diamond", "fail": "x"}
BASE_LAYOUT: dict[str, Any] = {
    "template": TEMPLATE,
    "margin": {"l": 60, "r": 20, "t": 20, "b": 50},
    "height": 340,
    "hovermode": "closest",
    "legend": {"orientation": "h", "y": -0.25},
}


def series_key(s: Summary) -> str:
    """The line a result belongs to: its branch (the system's name is in the hover text; the
    overview's system filter draws one system alone)."""
    return s.branch or "(no branch)"


def history_figure(
    value: str,
    points: Sequence[Summary],
    baselines: Mapping[str, Summary],
    *,
    pick: Any,
    title: str,
) -> dict[str, Any]:
    """One figure over time: a line per branch, gate verdicts as colored markers, baselines as stars.

    Args:
        value: the measure or operational key (its name on the y axis).
        points: the results to draw, oldest first.
        baselines: ``{key: result}`` of the stored baselines to mark.
        pick: ``pick(summary) -> float | None``: the value of a result.
        title: the y axis title.
    """
    lines: dict[str, list[tuple[Summary, float]]] = {}
    for s in points:
        y = pick(s)
        if y is not None:
            lines.setdefault(series_key(s), []).append((s, y))
    data: list[dict[str, Any]] = []
    for i, (key, mine) in enumerate(lines.items()):
        color = PALETTE[i % len(PALETTE)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": esc(key),
                "x": [s.when for s, _ in mine],
                "y": [y for _, y in mine],
                "line": {"color": color, "width": 1.5},
                "marker": {
                    "size": [9 if s.verdict else 6 for s, _ in mine],
                    "color": [STATUS_COLORS[s.verdict] if s.verdict else color for s, _ in mine],
                    "symbol": [SYMBOLS.get(s.verdict or "", "circle") for s, _ in mine],
                },
                "customdata": [[s.id, esc(s.title), s.verdict or "not gated"] for s, _ in mine],
                "hovertemplate": "%{customdata[1]}<br>%{x}<br>"
                + esc(value)
                + " %{y:.4f}<br>gate: %{customdata[2]}<extra></extra>",
            }
        )
    marks, shapes = _baseline_marks(baselines, pick)
    data.extend(marks)
    layout = {
        **BASE_LAYOUT,
        "xaxis": {"title": {"text": "stored at (UTC)"}, "type": "date"},
        "yaxis": {"title": {"text": esc(title)}},
        "shapes": shapes,
    }
    return {"data": data, "layout": layout}


def quality_figure(measure: str, points: Sequence[Summary], baselines: Mapping[str, Summary]) -> dict[str, Any]:
    return history_figure(measure, points, baselines, pick=lambda s: s.aggregate.get(measure), title=measure)


def ops_figure(key: str, points: Sequence[Summary], baselines: Mapping[str, Summary]) -> dict[str, Any]:
    return history_figure(ops_label(key), points, baselines, pick=lambda s: s.ops.get(key), title=ops_label(key))


def _baseline_marks(baselines: Mapping[str, Summary], pick: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A star per stored baseline (one trace) and a dashed line at each one's value."""
    marked = [(k, s, pick(s)) for k, s in baselines.items()]
    marked = [(k, s, y) for k, s, y in marked if y is not None]
    if not marked:
        return [], []
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "baseline",
        "x": [s.when for _, s, _ in marked],
        "y": [y for _, _, y in marked],
        "marker": {"symbol": "star", "size": 15, "color": "#222"},
        "customdata": [[s.id, esc(f"baseline {k}: {s.title}"), s.verdict or "not gated"] for k, s, _ in marked],
        "hovertemplate": "%{customdata[1]}<br>%{y:.4f}<extra></extra>",
    }
    line = {"dash": "dash", "color": "#222", "width": 1}
    shapes = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": y, "y1": y, "line": line} for _, _, y in marked]
    return [trace], shapes
