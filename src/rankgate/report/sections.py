"""The report's sections: what each shows, built from `ReportData` as plain dicts for the template.

`build_sections` returns the sections in page order, the charts they hold, and a line per
section left out (with what input would fill it). The numbers come from the inputs: this
module only selects, sorts and labels them (the report computes no metric itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.report.charts import Chart
from rankgate.report.collect import ReportData

MAX_DELTA_MEASURES = 4  # per-query delta charts per pair of systems
WORST_ROWS = 10
VERDICT_ORDER = {"pass": 0, "warn": 1, "fail": 2}


def build_sections(
    data: ReportData,
    *,
    store: Any = None,
    targets: Any = None,
    branch: str | None = None,
    name: str | None = None,
    baseline_key: str = "default",
    history_limit: int | None = None,
    query_texts: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, Any]], list[Chart], list[str]]:
    """The page's sections (dicts for the template), all their charts, and what was left out and why.

    Args:
        data: the gathered inputs (`rankgate.report.inputs.collect`).
        store: a results store URL/path or open store, for the history; None leaves it out.
        targets: see `rankgate.report.guidance.load_targets`; None for the defaults.
        branch: history of this branch only.
        name: history of this system name only.
        baseline_key: the stored baseline to mark in the history.
        history_limit: the newest N stored results (default 200).
        query_texts: ``{qid: text}`` shown beside query ids.
    """
    from rankgate.report.charts import colors_for

    texts = dict(query_texts or {})
    names = [*data.systems, *data.curves, *(str(r.get("system", "")) for r in data.tag_rows)]
    colors = colors_for(names)
    history = None
    if store is not None:
        from rankgate.report.history import DEFAULT_LIMIT, load_history

        gated = [str(g["metric"]) for gate in data.gates for g in gate.get("gates") or []]
        history = load_history(
            store,
            list(dict.fromkeys(gated)) or None,
            branch=branch,
            name=name,
            limit=history_limit or DEFAULT_LIMIT,
            baseline_key=baseline_key,
        )
    guidance = _guidance(data, targets)
    builders = (
        ("Summary", lambda: _summary(data, guidance)),
        ("Guidance", lambda: guidance),
        ("Metric against k", lambda: _curves(data, colors)),
        ("Per-query deltas", lambda: _deltas(data, texts)),
        ("Per-tag breakdown", lambda: _tags(data, colors)),
        ("Judged fraction and warnings", lambda: _judged(data)),
        ("Recall against throughput", lambda: _bench(data)),
        ("History", lambda: _history(history)),
    )
    sections: list[dict[str, Any]] = []
    not_shown: list[str] = []
    for title, build in builders:
        section = build()
        if isinstance(section, str):
            not_shown.append(f"{title}: {section}")
        else:
            sections.append({"title": title, "charts": [], **section})
    charts = _unique_ids([c for s in sections for c in s["charts"]])
    return sections, charts, not_shown


def _unique_ids(charts: list[Chart]) -> list[Chart]:
    """Give repeated chart ids a suffix (``-2``, ``-3``), so each is one element and one file."""
    seen: dict[str, int] = {}
    for chart in charts:
        n = seen.get(chart.id, 0) + 1
        seen[chart.id] = n
        if n > 1:
            chart.id = f"{chart.id}-{n}"
    return charts


# -- summary ---------------------------------------------------------------------------------


def _summary(data: ReportData, guidance: dict[str, Any] | str) -> dict[str, Any] | str:
    from rankgate.report.charts import gate_chart

    if not data.systems and not data.gates and not data.comparisons:
        return "no eval, compare or gate input (the verdict and the means come from those)"
    gates, charts = [], []
    for i, d in enumerate(data.gates):
        chart = None
        if d.get("gates"):
            chart = gate_chart(d["gates"], d["_run"], d["_baseline"], key=f"gate-{i + 1}" if i else "gate")
            charts.append(chart)
        gates.append({**d, "chart": chart})
    assessments = guidance["assessments"] if isinstance(guidance, dict) else []
    measures = list(dict.fromkeys(m for values in data.systems.values() for m in values))
    return {
        "id": "summary",
        "kind": "summary",
        "verdict": verdict(data, assessments),
        "headline": headline(data, assessments),
        "gates": gates,
        "systems": data.systems,
        "ci": data.system_ci,
        "measures": measures,
        "comparisons": data.comparisons,
        "charts": charts,
    }


def verdict(data: ReportData, assessments: Sequence[Any] = ()) -> dict[str, str]:
    """``{"status": pass|warn|fail|none, "word", "text"}``: the gate's verdict, else what the comparisons say.

    Without a gate, a significant loss reads as ``regression`` (status fail), a significant
    gain without losses as ``improvement`` (pass); without comparisons, the targets decide.
    """
    if data.gates:
        worst = max((str(g["verdict"]) for g in data.gates), key=lambda v: VERDICT_ORDER.get(v, 0))
        rows = [row for g in data.gates for row in g.get("gates") or []]
        counts = {s: sum(1 for r in rows if r.get("status") == s) for s in ("fail", "warn", "inconclusive", "pass")}
        parts = [f"{n} {word}" for s, n, word in _count_words(counts) if n]
        who = "; ".join(f"{g['_run']} against {g['_baseline'] or 'no baseline'}" for g in data.gates)
        return {"status": worst, "word": worst, "text": f"{who}: {', '.join(parts) or 'no gates'}."}
    if data.comparisons:
        significant = [r for r in data.comparisons if r.get("significant") and r.get("delta") is not None]
        worse = [r for r in significant if _signed_gain(r) < 0]
        better = [r for r in significant if _signed_gain(r) > 0]
        if worse:
            shown = ", ".join(f"{r['system']} {r['measure']} {r['delta']:+.3f}" for r in worse[:4])
            return {"status": "fail", "word": "regression", "text": f"significantly worse than the baseline: {shown}."}
        if better:
            shown = ", ".join(f"{r['system']} {r['measure']} {r['delta']:+.3f}" for r in better[:4])
            return {
                "status": "pass",
                "word": "improvement",
                "text": f"significantly better than the baseline: {shown}.",
            }
        return {
            "status": "none",
            "word": "no clear difference",
            "text": f"none of {len(data.comparisons)} deltas is significant after correction.",
        }
    below = [a for a in assessments if a.below]
    measured = [a for a in assessments if any(a.status(s) != "not measured" for s in a.values)]
    if measured:
        if below:
            names = ", ".join(f"{a.target.metric} ({', '.join(a.below)})" for a in below)
            return {"status": "warn", "word": "below target", "text": f"below its target: {names}."}
        return {"status": "pass", "word": "targets met", "text": f"all {len(measured)} measured targets are met."}
    return {"status": "none", "word": "no verdict", "text": "give a gate or compare JSON for a verdict."}


def _count_words(counts: Mapping[str, int]) -> list[tuple[str, int, str]]:
    words = {"fail": "failed", "warn": "warned", "inconclusive": "inconclusive", "pass": "passed"}
    return [(s, counts[s], f"gate{'s' if counts[s] != 1 else ''} {words[s]}") for s in words]


def _signed_gain(row: Mapping[str, Any]) -> float:
    """The delta, with the sign flipped for a measure where lower is better."""
    from rankgate.errors import MeasureError
    from rankgate.measures.parse import parse_measure

    delta = float(row["delta"])
    try:
        higher = parse_measure(str(row["measure"])).spec.higher_is_better
    except MeasureError:
        higher = True
    return delta if higher else -delta


def headline(data: ReportData, assessments: Sequence[Any] = ()) -> list[str]:
    """A few lines under the verdict: failed gates, the largest group drop, targets, label coverage."""
    from rankgate.report.guidance import JUDGED_LOW

    lines = []
    for g in data.gates:
        for row in g.get("gates") or []:
            if row.get("status") in ("fail", "warn", "inconclusive"):
                bits = [f"{row.get('metric')} = {_f(row.get('value'))}"]
                if row.get("baseline") is not None:
                    bits.append(f"baseline {_f(row.get('baseline'))}, delta {_f(row.get('delta'), signed=True)}")
                if row.get("threshold") is not None:
                    bits.append(f"floor {_f(row.get('threshold'))}")
                why = ", ".join(row.get("failed") or []) or row.get("inconclusive") or row.get("status")
                lines.append(f"{row.get('status')}: {row.get('name')} ({'; '.join(bits)}): {why}")
    drops = [
        r
        for r in data.tag_rows
        if r.get("baseline_mean") is not None and r.get("delta") is not None and not r.get("small")
    ]
    if drops:
        r = min(drops, key=lambda r: r["delta"])
        if r["delta"] < 0:
            ci = r.get("ci")
            shown = f", 95% CI [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci and None not in ci else ""
            lines.append(
                f"largest group drop: {r['tag']}={r['value']} ({r.get('n', '?')} queries), "
                f"{r['measure']} {r['delta']:+.3f}{shown}"
            )
    for a in assessments:
        if a.below:
            lines.append(f"below target {a.target.metric} >= {a.target.minimum:g}: {', '.join(a.below)}")
    low = [
        f"{system} {measure} = {value:.2f}"
        for system, values in data.systems.items()
        for measure, value in values.items()
        if measure.startswith("Judged@") and value is not None and value < JUDGED_LOW
    ]
    if low:
        lines.append(f"few judged documents, so scores are lower bounds: {', '.join(low)}")
    return lines


def _f(value: Any, *, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


# -- guidance, curves, deltas, tags, judged ------------------------------------------------------


def _guidance(data: ReportData, targets: Any) -> dict[str, Any] | str:
    from rankgate.report.guidance import DEFAULT_TARGETS, Target, assess, load_targets

    if targets is None:
        wanted = list(DEFAULT_TARGETS)
    elif isinstance(targets, list | tuple) and all(isinstance(t, Target) for t in targets):
        wanted = list(targets)
    else:
        wanted = load_targets(targets)
    if not data.systems:
        return "no aggregate values to hold against targets"
    from rankgate.report.bench_view import ann_recall

    rows = assess(wanted, data.systems, curves=data.curves, tag_rows=data.tag_rows, ann_recall=ann_recall(data.bench))
    return {"id": "guidance", "kind": "guidance", "assessments": rows, "systems": list(data.systems)}


def _curves(data: ReportData, colors: Mapping[str, str]) -> dict[str, Any] | str:
    from rankgate.report.charts import curve_chart

    families = list(dict.fromkeys(f for fams in data.curves.values() for f in fams))
    if not families:
        return (
            "no measure at two or more cutoffs; add `rankgate cutoffs QRELS RUN ... --format json` "
            "(or evaluate e.g. -m R@5 -m R@10 -m R@100)"
        )
    charts = [curve_chart(f, {s: fams[f] for s, fams in data.curves.items() if f in fams}, colors) for f in families]
    return {"id": "curves", "kind": "charts", "charts": charts}


def _deltas(data: ReportData, texts: Mapping[str, str]) -> dict[str, Any] | str:
    from rankgate.report.charts import delta_chart

    pairs: list[dict[str, Any]] = []
    drawn: set[tuple[str, str, str]] = set()  # (baseline, candidate, measure): one chart each
    for pair in data.pairs:
        measures = [m for m in pair.measures if (pair.baseline, pair.candidate, m) not in drawn and pair.deltas(m)][
            :MAX_DELTA_MEASURES
        ]
        if not measures:
            continue
        drawn.update((pair.baseline, pair.candidate, m) for m in measures)
        charts = [delta_chart(pair.baseline, pair.candidate, m, pair.deltas(m), texts) for m in measures]
        first = dict(pair.deltas(measures[0]))
        worst = [q for q in sorted(first, key=lambda q: (first[q], q)) if first[q] < 0][:WORST_ROWS]
        rows = [
            {
                "qid": q,
                "text": texts.get(q, ""),
                "values": [(pair.base.get(q, {}).get(m), pair.cand.get(q, {}).get(m)) for m in measures],
            }
            for q in worst
        ]
        pairs.append({"pair": pair, "measures": measures, "charts": charts, "worst": rows})
    if not pairs:
        return (
            "no per-query values of a baseline and a candidate; give a gate JSON with a baseline, "
            "or two eval JSONs written with --per-query (the first is the baseline)"
        )
    return {"id": "deltas", "kind": "deltas", "pairs": pairs, "charts": [c for p in pairs for c in p["charts"]]}


def _tags(data: ReportData, colors: Mapping[str, str]) -> dict[str, Any] | str:
    from rankgate.report.charts import tag_chart

    if not data.tag_rows:
        return (
            "no per-tag rows; give eval --tags FILE --format json, compare --tags FILE --format json, "
            "or a gate JSON of a config with tags_file"
        )
    measures = list(dict.fromkeys(str(r["measure"]) for r in data.tag_rows))
    charts = []
    for m in measures:  # deltas against a baseline and plain means (eval --tags) on separate axes
        rows = [r for r in data.tag_rows if r["measure"] == m]
        deltas = [r for r in rows if r.get("baseline_mean") is not None]
        means = [r for r in rows if r.get("baseline_mean") is None]
        if deltas:
            charts.append(tag_chart(m, deltas, colors))
        if means:
            charts.append(tag_chart(m, means, colors, prefix="tags-means" if deltas else "tags"))
    with_delta = [r for r in data.tag_rows if r.get("baseline_mean") is not None and r.get("delta") is not None]
    worst = sorted(with_delta, key=lambda r: (bool(r.get("small")), r["delta"]))[:WORST_ROWS]
    return {"id": "tags", "kind": "tags", "charts": charts, "worst": [r for r in worst if r["delta"] < 0]}


def _judged(data: ReportData) -> dict[str, Any] | str:
    rows = [
        {"system": s, "measure": m, "value": v, "level": judged_level(v)}
        for s, values in data.systems.items()
        for m, v in values.items()
        if m.startswith("Judged@")
    ]
    warnings = sorted(dict.fromkeys(data.warnings), key=lambda w: "unjudged" not in w[1])
    if not rows and not warnings:
        return "no Judged@k values and no warnings (add -m Judged@10 to eval to see label coverage)"
    return {"id": "judged", "kind": "judged", "rows": rows, "warnings": warnings}


def judged_level(value: float | None) -> str:
    """``good`` (>= 0.9), ``fair`` (>= 0.8), ``low`` or ``unknown``."""
    from rankgate.report.guidance import JUDGED_LOW

    if value is None:
        return "unknown"
    return "good" if value >= 0.9 else "fair" if value >= JUDGED_LOW else "low"


# -- bench, history --------------------------------------------------------------------------


def _bench(data: ReportData) -> dict[str, Any] | str:
    from rankgate.report.bench_view import bench_row, neighbor_points, quality_points
    from rankgate.report.charts import bench_chart

    if not data.bench:
        return "no bench results (rankgate bench ... --format json)"
    rows = [bench_row(r) for r in data.bench]
    metrics = list(dict.fromkeys(m for r in data.bench for m in (r.get("metrics") or {})))
    charts = []
    for key, (points, x_label, y_label) in (
        ("bench-neighbor-recall", neighbor_points(data.bench)),
        ("bench-quality", quality_points(data.bench)),
    ):
        if points:
            charts.append(bench_chart(points, x_label=x_label, y_label=y_label, key=key))
    return {"id": "bench", "kind": "bench", "rows": rows, "metrics": metrics, "charts": charts}


def _history(history: Any) -> dict[str, Any] | str:
    from rankgate.report.charts import colors_for, history_chart

    if history is None:
        return "no results store given (--store URL)"
    if not history.points:
        where = " and ".join(f"{k} {v!r}" for k, v in history.filters.items())
        return f"the store {history.store} holds no results" + (f" of {where}" if where else "")
    if not history.metrics:
        return f"no stored result in {history.store} holds the gated metrics ({'; '.join(history.notes)})"
    colors = colors_for([p.name for p in history.points])
    charts = [history_chart(m, history.series(m), history.baseline_point(m), colors) for m in history.metrics]
    return {"id": "history", "kind": "history", "history": history, "charts": charts}
