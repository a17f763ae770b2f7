"""The report's plotly figures, as plain JSON-able dicts (``{"data": [...], "layout": {...}}``).

Each builder takes already computed numbers (the report computes no metric itself) and
returns a `Chart`. Every user-supplied string that plotly draws (system names, query ids,
query text, tag values, gate names) goes through `esc`: plotly reads a small subset of HTML
in text, and an escaped string shows exactly as typed.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankgate.extras import require

PALETTE = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB", "#332288", "#882255")
STATUS_COLORS = {"pass": "#228833", "warn": "#DDAA33", "fail": "#CC3311", "inconclusive": "#888888"}
LOSS, WIN, TIE = "#CC3311", "#228833", "#AAAAAA"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
MAX_BARS = 1500  # per-query bars drawn at most; more are thinned evenly along the sorted order

# A small template instead of plotly's default, which would add ~10 kB to every figure.
TEMPLATE: dict[str, Any] = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "colorway": list(PALETTE),
        "font": {"family": FONT, "size": 12, "color": "#222"},
        "xaxis": {"gridcolor": "#e5e5e5", "zerolinecolor": "#999", "linecolor": "#999", "automargin": True},
        "yaxis": {"gridcolor": "#e5e5e5", "zerolinecolor": "#999", "linecolor": "#999", "automargin": True},
        "hoverlabel": {"font": {"family": FONT}},
    }
}


@dataclass
class Chart:
    """One figure of the report.

    Attributes:
        id: unique slug; the element id in the page and the file name of the export.
        title: shown above the figure (plain text; escaped by the template).
        figure: plotly figure JSON.
        caption: one line under the figure (plain text).
    """

    id: str
    title: str
    figure: dict[str, Any]
    caption: str = ""
    tags: list[str] = field(default_factory=list)


def esc(text: object) -> str:
    """Escape a user string for plotly's text (which reads ``<b>``, ``<br>``, ``&lt;``...).

    >>> esc("<script>alert(1)</script> & co")
    '&lt;script&gt;alert(1)&lt;/script&gt; &amp; co'
    """
    return html.escape(str(text), quote=False)


def slug(*parts: object) -> str:
    """A file-name-safe id from parts: ``slug("delta", "dense v2", "nDCG@10") == "delta-dense-v2-ndcg-10"``."""
    text = "-".join(str(p) for p in parts).lower()
    return re.sub(r"[^a-z0-9_]+", "-", text).strip("-") or "chart"


def colors_for(names: Sequence[str]) -> dict[str, str]:
    """A fixed color per system, in order of appearance."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(dict.fromkeys(names))}


def _plotly() -> Any:
    """``plotly.graph_objects``, or a `MissingExtraError` naming the report extra."""
    return require("plotly.graph_objects", "report", purpose="the HTML report")


def _figure(data: list[Any], layout: dict[str, Any]) -> dict[str, Any]:
    """Validate with plotly (catches a misspelt property) and return plain JSON."""
    go = _plotly()

    base = {"template": TEMPLATE, "margin": {"l": 60, "r": 20, "t": 30, "b": 50}, "height": 380}
    fig = go.Figure(data=data, layout={**base, **layout})
    out: dict[str, Any] = json.loads(fig.to_json())
    return out


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def gate_chart(gates: Sequence[Mapping[str, Any]], run: str, baseline: str | None, *, key: str = "gate") -> Chart:
    """Current value (colored by status), baseline value and threshold of each gated metric."""
    go = _plotly()

    labels = [f"{esc(g['name'])}<br>{esc(g['metric'])}" for g in gates]
    data: list[Any] = []
    if baseline is not None and any(g.get("baseline") is not None for g in gates):
        data.append(
            go.Bar(
                name=esc(f"baseline ({baseline})"),
                x=labels,
                y=[g.get("baseline") for g in gates],
                marker={"color": "#BBBBBB"},
                hovertemplate="baseline %{y:.4f}<extra></extra>",
            )
        )
    data.append(
        go.Bar(
            name=esc(run),
            x=labels,
            y=[g.get("value") for g in gates],
            marker={"color": [STATUS_COLORS.get(str(g.get("status")), "#4477AA") for g in gates]},
            customdata=[[esc(g.get("status")), _fmt(g.get("delta"))] for g in gates],
            hovertemplate="%{y:.4f} (%{customdata[0]}; delta %{customdata[1]})<extra></extra>",
        )
    )
    thresholds = [g.get("threshold") for g in gates]
    if any(t is not None for t in thresholds):
        data.append(
            go.Scatter(
                name="threshold",
                x=labels,
                y=thresholds,
                mode="markers",
                marker={"symbol": "line-ew-open", "size": 40, "color": "#222", "line": {"width": 3, "color": "#222"}},
                hovertemplate="threshold %{y:.4f}<extra></extra>",
            )
        )
    layout = {"barmode": "group", "yaxis": {"title": {"text": "mean over queries"}, "rangemode": "tozero"}}
    return Chart(slug(key), "Gated metrics: this run, its baseline and each floor", _figure(data, layout))


def curve_chart(
    family: str, series: Mapping[str, Sequence[tuple[int, float | None]]], colors: Mapping[str, str]
) -> Chart:
    """A measure against its cutoff k, one line per system."""
    go = _plotly()

    data = [
        go.Scatter(
            name=esc(system),
            x=[k for k, _ in points],
            y=[v for _, v in points],
            mode="lines+markers",
            line={"color": colors.get(system)},
            hovertemplate=f"{esc(system)}<br>{esc(family)}@%{{x}} = %{{y:.4f}}<extra></extra>",
        )
        for system, points in series.items()
    ]
    ks = sorted({k for points in series.values() for k, _ in points})
    log = len(ks) > 1 and ks[-1] / ks[0] >= 10
    xaxis: dict[str, Any] = {"title": {"text": "cutoff k"}, "type": "log" if log else "linear"}
    if log:
        xaxis.update(tickvals=ks, ticktext=[str(k) for k in ks])
    layout = {"xaxis": xaxis, "yaxis": {"title": {"text": esc(f"{family}@k")}, "rangemode": "tozero"}}
    return Chart(slug("curve", family), f"{family} against the cutoff k", _figure(data, layout))


def delta_chart(
    baseline: str,
    candidate: str,
    measure: str,
    deltas: Sequence[tuple[str, float]],
    texts: Mapping[str, str] | None = None,
) -> Chart:
    """Per-query delta (candidate - baseline) of one measure, as bars sorted from worst to best."""
    go = _plotly()

    ordered = sorted(deltas, key=lambda qd: (qd[1], qd[0]))
    shown = _thin(ordered, MAX_BARS)
    texts = texts or {}
    hover = [f"{esc(q)}<br>{esc(_short(texts[q]))}" if q in texts else esc(q) for q, _ in shown]
    bars = go.Bar(
        x=[esc(q) for q, _ in shown],
        y=[d for _, d in shown],
        marker={"color": [LOSS if d < 0 else WIN if d > 0 else TIE for _, d in shown]},
        customdata=hover,
        hovertemplate="%{customdata}<br>delta %{y:+.4f}<extra></extra>",
        showlegend=False,
    )
    losses = sum(1 for _, d in ordered if d < 0)
    wins = sum(1 for _, d in ordered if d > 0)
    mean = sum(d for _, d in ordered) / len(ordered) if ordered else 0.0
    layout = {
        "bargap": 0.05,
        "xaxis": {
            "title": {"text": f"queries, sorted by delta ({len(ordered)})"},
            "showticklabels": len(shown) <= 80,
            "type": "category",
        },
        "yaxis": {"title": {"text": esc(f"{measure}: {candidate} - {baseline}")}},
    }
    caption = (
        f"{losses} queries worse, {len(ordered) - losses - wins} unchanged, {wins} better; mean delta {mean:+.4f}"
        + (
            f"; {len(shown)} of {len(ordered)} bars drawn, evenly along the sorted order"
            if len(shown) < len(ordered)
            else ""
        )
    )
    return Chart(
        slug("delta", candidate, "vs", baseline, measure),
        f"Per-query {measure}: {candidate} against {baseline}",
        _figure([bars], layout),
        caption,
    )


def _thin(items: Sequence[Any], limit: int) -> list[Any]:
    if len(items) <= limit:
        return list(items)
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _interval(row: Mapping[str, Any]) -> Any:
    ci = row.get("ci")
    return ci if ci and None not in ci else None


def tag_chart(
    measure: str, rows: Sequence[Mapping[str, Any]], colors: Mapping[str, str], *, prefix: str = "tags"
) -> Chart:
    """Delta per tag value with its confidence interval, worst first; one bar per system.

    Rows without a baseline (``baseline_mean`` null) show the mean instead of a delta, with the
    mean's interval when they have one (``eval --tags --ci``).
    """
    go = _plotly()

    has_delta = any(r.get("baseline_mean") is not None for r in rows)
    key = "delta" if has_delta else "mean"
    label = {}
    worst: dict[str, float] = {}
    for r in rows:
        name = f"{r['tag']}={r['value']} (n={r.get('n', '?')})"
        label[(r["tag"], r["value"])] = name
        value = r.get(key)
        if value is not None:
            worst[name] = min(worst.get(name, value), value)
    order = sorted(worst, key=lambda n: worst[n])
    data = []
    for system in dict.fromkeys(str(r.get("system", "")) for r in rows):
        mine = [r for r in rows if str(r.get("system", "")) == system]
        x = [r.get(key) for r in mine]
        ci = [_interval(r) if v is not None else None for r, v in zip(mine, x, strict=True)]
        trace: dict[str, Any] = {
            "name": esc(system),
            "orientation": "h",
            "x": x,
            "y": [esc(label[(r["tag"], r["value"])]) for r in mine],
            "marker": {"color": colors.get(system)},
            "hovertemplate": f"{esc(system)}: %{{x:{'+' if has_delta else ''}.4f}}<extra>%{{y}}</extra>",
        }
        if any(c is not None for c in ci):
            trace["error_x"] = {
                "type": "data",
                "symmetric": False,
                "array": [None if c is None or v is None else c[1] - v for c, v in zip(ci, x, strict=True)],
                "arrayminus": [None if c is None or v is None else v - c[0] for c, v in zip(ci, x, strict=True)],
                "color": "#333",
                "thickness": 1.2,
            }
        data.append(go.Bar(**trace))
    layout = {
        "barmode": "group",
        "height": max(300, 60 + 26 * len(order) * max(1, len(data))),
        "margin": {"l": 160, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": esc(f"{measure} {'delta vs baseline' if has_delta else 'mean'}")}},
        "yaxis": {"categoryorder": "array", "categoryarray": [esc(n) for n in order], "autorange": "reversed"},
        "showlegend": True,  # even for one system: the bars are that system's
    }
    what = "delta (95% CI)" if has_delta else "mean"
    return Chart(slug(prefix, measure), f"{measure} by tag value: {what}, worst first", _figure(data, layout))


def bench_chart(
    points: Sequence[Mapping[str, Any]], *, x_label: str, y_label: str, key: str = "bench-recall-vs-throughput"
) -> Chart:
    """Quality (y) against throughput (x) of each benchmarked index; one trace per retriever."""
    go = _plotly()

    data = []
    for retriever in dict.fromkeys(str(p["retriever"]) for p in points):
        mine = [p for p in points if str(p["retriever"]) == retriever]
        data.append(
            go.Scatter(
                name=esc(retriever),
                x=[p["x"] for p in mine],
                y=[p["y"] for p in mine],
                mode="markers+text",
                text=[esc(p.get("short", p["index"])) for p in mine],
                textposition="top center",
                customdata=[esc(p["label"]) for p in mine],
                marker={
                    "size": 11,
                    "symbol": ["diamond" if p["exact"] else "circle" for p in mine],
                    "line": {"width": 1, "color": "#222"},
                },
                hovertemplate="%{customdata}<br>"
                + esc(x_label)
                + " %{x:.4g}<br>"
                + esc(y_label)
                + " %{y:.4f}<extra></extra>",
            )
        )
    xs = [p["x"] for p in points if p["x"]]
    log = bool(xs) and max(xs) / min(xs) >= 20
    layout = {
        "xaxis": {"title": {"text": esc(x_label)}, "type": "log" if log else "linear"},
        "yaxis": {"title": {"text": esc(y_label)}},
    }
    return Chart(
        slug(key),
        f"{y_label} against {x_label}",
        _figure(data, layout),
        "Diamonds are exact search"
        + (" (neighbor recall 1 by definition)" if y_label.startswith("neighbor recall") else "")
        + "; up and to the right is better.",
    )


def history_chart(
    metric: str,
    series: Mapping[str, Sequence[Mapping[str, Any]]],
    baseline: Mapping[str, Any] | None,
    colors: Mapping[str, str],
) -> Chart:
    """One metric over time, one line per stored system name, the baseline marked.

    Args:
        metric: canonical measure name.
        series: ``{name: [{"x": ISO time, "y": value, "label": hover text}]}``, oldest first.
        baseline: ``{"x", "y", "label"}`` of the baseline result, or None.
        colors: a color per name.
    """
    go = _plotly()

    data = [
        go.Scatter(
            name=esc(name),
            x=[p["x"] for p in points],
            y=[p["y"] for p in points],
            mode="lines+markers",
            line={"color": colors.get(name)},
            customdata=[esc(p["label"]) for p in points],
            hovertemplate="%{customdata}<br>" + esc(metric) + " %{y:.4f}<extra></extra>",
        )
        for name, points in series.items()
    ]
    shapes = []
    if baseline is not None and baseline.get("y") is not None:
        data.append(
            go.Scatter(
                name="baseline",
                x=[baseline["x"]],
                y=[baseline["y"]],
                mode="markers",
                marker={"symbol": "star", "size": 16, "color": "#222"},
                customdata=[esc(baseline["label"])],
                hovertemplate="baseline: %{customdata}<br>%{y:.4f}<extra></extra>",
            )
        )
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": baseline["y"],
                "y1": baseline["y"],
                "line": {"dash": "dash", "color": "#222", "width": 1},
            }
        )
    layout = {
        "xaxis": {"title": {"text": "stored at (UTC)"}},
        "yaxis": {"title": {"text": esc(metric)}},
        "shapes": shapes,
    }
    return Chart(
        slug("history", metric),
        f"{metric} over time",
        _figure(data, layout),
        "The star and the dashed line mark the baseline." if baseline is not None else "No baseline is set.",
    )
