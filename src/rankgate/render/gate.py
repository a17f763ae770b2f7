"""The gate report as text a reviewer reads at a glance: headlines, a table, a per-tag breakdown.

One headline per gate, e.g.::

    ❌ recall@5 dropped from 87.0% to 81.0% (-6.0 pts, 95% CI -8.1 to -3.9; floor 85%, max drop 3 pts)

Metrics bounded by [0, 1] are shown as percentages and their deltas in points; counts
(NumRel, NumRet, ...) as plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rankgate.gate.github import MARKER
from rankgate.render.escape import code_span, markdown_text

if TYPE_CHECKING:
    from rankgate.gate.decide import GateOutcome
    from rankgate.gate.runner import GateReport

ICONS = {"pass": "✅", "warn": "⚠️", "fail": "❌", "inconclusive": "❔", "unchecked": "➖"}
VERDICT_WORDS = {"pass": "passed", "warn": "passed with warnings", "fail": "failed"}
VERDICT_LINES = {"pass": "PASS", "warn": "WARN (passed with warnings)", "fail": "FAIL"}  # the terminal's first line
MAX_TAG_ROWS = 15


def is_fraction(outcome: GateOutcome) -> bool:
    figure = outcome.gate.figure
    return figure.fraction if figure is not None else outcome.gate.metric.spec.bounds == (0.0, 1.0)  # type: ignore[union-attr]


def fmt_value(value: float | None, fraction: bool, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value * 100:.1f}%" if fraction else f"{value:.4g}{unit}"


def _unit(outcome: GateOutcome) -> str:
    figure = outcome.gate.figure
    return figure.unit if figure is not None else ""


def _pct(fraction: float, sign: bool = True) -> str:
    """0.03 -> ``+3%``; 0.0312 -> ``+3.12%``."""
    return f"{fraction * 100:{'+' if sign else ''}.3g}%"


def fmt_delta(delta: float | None, fraction: bool) -> str:
    if delta is None:
        return "n/a"
    return f"{delta * 100:+.1f} pts" if fraction else f"{delta:+.4g}"


def _fmt_ci(ci: tuple[float, float] | None, fraction: bool) -> str:
    if ci is None:
        return "n/a"
    scale = 100 if fraction else 1
    return f"{ci[0] * scale:.1f} to {ci[1] * scale:.1f}" if fraction else f"{ci[0]:.4g} to {ci[1]:.4g}"


def _max_drop(value: float | None, fraction: bool) -> str:
    if value is None:
        return ""
    return f"{value * 100:g} pts" if fraction else f"{value:g}"


def _allowed(g: Any, fraction: bool, unit: str = "") -> str:
    """The regression limits as written: ``3 pts``, ``20%``, ``3 pts and 5%``, ``3 pts or 5%``."""
    parts = []
    if g.regression_max is not None:
        parts.append(_max_drop(g.regression_max, fraction) + ("" if fraction else unit))
    if g.regression_max_relative is not None:
        parts.append(_pct(g.regression_max_relative, sign=False))
    return (" and " if g.regression_rule == "all" else " or ").join(parts)


def _bars(g: Any, fraction: bool, unit: str = "") -> str:
    """The improvement bars: ``needs +3%``, ``needs +2 pts and +3%``."""
    parts = []
    if g.min_improvement is not None:
        parts.append("+" + _max_drop(g.min_improvement, fraction) + ("" if fraction else unit))
    if g.min_relative_improvement is not None:
        parts.append(_pct(g.min_relative_improvement))
    if not parts:
        return ""
    return "needs " + " and ".join(parts) + (" (CI lower bound)" if g.decide_on == "ci" else "")


def _limits(outcome: GateOutcome, fraction: bool) -> str:
    g = outcome.gate
    unit = _unit(outcome)
    worse = "drop" if g.higher_is_better else "growth"
    parts = []
    if g.threshold is not None:
        parts.append(f"floor {fmt_value(g.threshold, fraction, unit).replace('.0%', '%')}")
    if g.max is not None:
        parts.append(f"ceiling {fmt_value(g.max, fraction, unit)}")
    if g.regression_max is not None or g.regression_max_relative is not None:
        both = g.regression_max is not None and g.regression_max_relative is not None
        parts.append(
            f"max {worse} {_allowed(g, fraction, unit)}" + (f" ({g.regression_rule} must hold)" if both else "")
        )
    bars = _bars(g, fraction, unit)
    if bars:
        parts.append(bars)
    return ", ".join(parts)


def _change(outcome: GateOutcome, frac: bool, unit: str) -> str:
    """The change and the one CI its rules decide on: ``-6.0 pts, 95% CI -8.1 to -3.9``; with
    only relative rules, the relative CI: ``+6.0 pts, +8.0% (95% CI +2.1% to +14.0%)``; with both
    kinds, each CI beside its number. Every CI is in the JSON (``ci``, ``relative_ci``, ``checks``).

    The relative CI is the interval of a relative rule decided on a CI (the test's interval at its
    bar), else the delta's CI divided by the baseline's mean (the same interval at a bar of 0)."""
    g = outcome.gate
    delta = fmt_delta(outcome.delta, frac) + ("" if frac else unit)
    relative = g.regression_max_relative is not None or g.min_relative_improvement is not None
    absolute = g.regression_max is not None or g.min_improvement is not None or not relative
    abs_ci = f"{g.confidence:.0%} CI {_fmt_ci(outcome.ci, frac)}" if outcome.ci else ""
    if outcome.relative_delta is None or not relative:
        return delta + (f", {abs_ci}" if abs_ci else "")
    rel = f"{outcome.relative_delta * 100:+.1f}%"
    rel_ci = next((c.ci for c in outcome.checks if c.relative and c.ci), outcome.relative_ci)
    if rel_ci is not None:
        rel += f" ({g.confidence:.0%} CI {rel_ci[0] * 100:+.1f}% to {rel_ci[1] * 100:+.1f}%)"
    return f"{delta} ({abs_ci}), {rel}" if abs_ci and absolute else f"{delta}, {rel}"


def shown_status(outcome: GateOutcome) -> str:
    """The status a reader is shown: ``unchecked`` for a gate that checked nothing (its JSON status is pass)."""
    return "unchecked" if outcome.checked_nothing else outcome.status


def headline(outcome: GateOutcome, *, text: Callable[[str], str] = str) -> str:
    """One line that says what happened to a gate's metric and why it passed or not.

    ``text`` is applied to the user's words in it (the metric as written, tag names and values):
    `markdown_text` for the PR comment.
    """
    g = outcome.gate
    frac = is_fraction(outcome)
    unit = _unit(outcome)
    name = text(g.label) + (f" [{_tag_filter(outcome, text)}]" if g.tags else "")
    limits = _limits(outcome, frac)
    if outcome.delta is not None and outcome.baseline is not None:
        before, after = fmt_value(outcome.baseline, frac, unit), fmt_value(outcome.current_paired, frac, unit)
        if outcome.delta < 0:
            move = f"dropped from {before} to {after}"
        elif outcome.delta > 0:
            move = f"rose from {before} to {after}"
        else:
            move = f"held at {after}"
        line = f"{name} {move} ({_change(outcome, frac, unit)}; {limits})"
        if outcome.value is not None and outcome.n_paired < outcome.n_queries:
            line += f"; {fmt_value(outcome.value, frac)} over all {outcome.n_queries} queries"
    else:
        line = f"{name} is {fmt_value(outcome.value, frac, unit)} ({limits})"
    reasons = _reasons(outcome, frac, unit)
    if reasons:
        line += " — " + "; ".join(reasons)
    return f"{ICONS[shown_status(outcome)]} {line}"


def _reasons(outcome: GateOutcome, frac: bool, unit: str) -> list[str]:
    """Why a gate failed or could not decide, in the words of its rules."""
    g = outcome.gate
    reasons = []
    if "floor" in outcome.failed:
        reasons.append("below the floor")
    if "ceiling" in outcome.failed:
        reasons.append("above the ceiling")
    if "regression" in outcome.failed:
        allowed = _allowed(g, frac, unit)
        worse = "dropped" if g.higher_is_better else "grew"
        reasons.append(
            f"{worse} more than the allowed {allowed}"
            if g.mode == "mean"
            else f"the whole CI lies below the allowed drop of {allowed}"
        )
    if "improvement" in outcome.failed:
        bars = _bars(g, frac, unit).removeprefix("needs ").removesuffix(" (CI lower bound)")
        reasons.append(
            f"gained less than the required {bars}"
            if g.decide_on == "mean"
            else f"the whole CI lies below the required gain of {bars}"
        )
    if outcome.unchecked:
        limit = f"max {'drop' if g.higher_is_better else 'growth'}"
        what = "not checked" if outcome.checked_nothing else f"{limit} not checked"
        reasons.append(f"{what}: no baseline{' figure' if g.figure is not None else ''}")
    if outcome.inconclusive:
        reason = f"inconclusive: {outcome.inconclusive}"
        if reason.endswith("allowed drop"):
            reason += f" of {_allowed(g, frac, unit)}"
        elif reason.endswith("the bar"):
            reason += f" of {_bars(g, frac, unit).removeprefix('needs ').removesuffix(' (CI lower bound)')}"
        if outcome.queries_needed:
            reason += f"; about {outcome.queries_needed} queries would settle it"
        reasons.append(reason)
    return reasons


def _tag_filter(outcome: GateOutcome, text: Callable[[str], str] = str) -> str:
    tags = outcome.gate.tags or {}
    return ", ".join(f"{text(k)}={'|'.join(text(x) for x in v)}" for k, v in tags.items())


def markdown(report: GateReport, *, key: str = "default") -> str:
    """The PR comment: verdict, headlines, a table of gates and measures, the worst tags.

    Every name, tag, run name and note in it is the user's text and renders literally
    (`markdown_text`, or a `code_span`): no image, link or @-mention comes from it.
    """
    lines = [
        f"### {ICONS[report.verdict]} rankgate: retrieval quality gate {VERDICT_WORDS[report.verdict]}",
        "",
    ]
    lines += [f"- {headline(o, text=markdown_text)}" for o in report.outcomes]
    lines += ["", *_gate_table(report.outcomes)]
    breakdown = _tag_rows(report)
    if breakdown:
        lines += [
            "",
            "<details><summary>Per-tag breakdown, worst first</summary>",
            "",
            *breakdown,
            "",
            "</details>",
        ]
    lines += ["", _footer(report), "", MARKER.format(key=key)]
    return "\n".join(lines) + "\n"


GATE_HEADERS = ("gate", "metric", "value", "baseline", "delta", "CI of delta", "floor", "limit", "queries", "status")
TAG_HEADERS = ("tag", "value", "measure", "queries", "baseline", "current", "delta", "CI of delta")
_LEFT = {"gate", "metric", "CI of delta", "status", "tag", "value", "measure", "needs"}  # the rest are numbers


def _has_bars(outcomes: Sequence[GateOutcome]) -> bool:
    return any(_bars(o.gate, False) for o in outcomes)


def _gate_headers(outcomes: Sequence[GateOutcome]) -> tuple[str, ...]:
    """The gates' table columns; ``needs`` (the improvement bars) only when a gate has one."""
    if not _has_bars(outcomes):
        return GATE_HEADERS
    return (*GATE_HEADERS[:8], "needs", *GATE_HEADERS[8:])


def _gate_cells(o: GateOutcome, bars: bool = False) -> list[str]:
    """One gate's row, as text (shared by the Markdown table and the terminal's)."""
    frac = is_fraction(o)
    unit = _unit(o)
    g = o.gate
    floor = fmt_value(g.threshold, frac, unit) if g.threshold is not None else ""
    if g.max is not None:
        floor = f"max {fmt_value(g.max, frac, unit)}"
    cells = [
        g.name,
        str(g.metric),
        fmt_value(o.value, frac, unit),
        fmt_value(o.baseline, frac, unit) if o.baseline is not None else "",
        fmt_delta(o.delta, frac) + ("" if frac else unit) if o.delta is not None else "",
        _fmt_ci(o.ci, frac) if o.ci else "",
        floor,
        _limit_cell(g, frac, unit),
        str(o.n_queries) if g.figure is None else "-",
        f"{ICONS[shown_status(o)]} {shown_status(o)}",
    ]
    if bars:
        cells.insert(8, _bars(g, frac, unit).removeprefix("needs "))
    return cells


def _limit_cell(g: Any, frac: bool, unit: str) -> str:
    """The regression limits with their direction: ``3 pts drop``, ``20% growth``."""
    allowed = _allowed(g, frac, unit)
    return f"{allowed} {'drop' if g.higher_is_better else 'growth'}" if allowed else ""


def _gate_table(outcomes: Sequence[GateOutcome]) -> list[str]:
    headers = _gate_headers(outcomes)
    align = (
        "|"
        + "|".join("---" if h in ("gate", "metric", "CI of delta", "status", "needs") else "---:" for h in headers)
        + "|"
    )
    rows = ["| " + " | ".join(headers) + " |", align]
    for o in outcomes:
        cells = _gate_cells(o, _has_bars(outcomes))
        cells[0], cells[1] = markdown_text(cells[0]), code_span(cells[1])
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _worst_tags(report: GateReport) -> list[dict[str, Any]]:
    """Tag rows worst first (the largest drop against the baseline; without one, the lowest mean)."""
    return sorted(report.by_tag, key=lambda r: (r["small"], r["mean"] if r["delta"] is None else r["delta"]))[
        :MAX_TAG_ROWS
    ]


def _tag_cells(r: dict[str, Any]) -> list[str]:
    frac = r.get("fraction", True)
    ci = tuple(r["ci"]) if r.get("ci") and None not in r["ci"] and not any(map(_nan, r["ci"])) else None
    return [
        str(r["tag"]),
        str(r["value"]),
        str(r["measure"]),
        f"{r['n']}{' (small)' if r['small'] else ''}",
        fmt_value(r["baseline_mean"], frac),
        fmt_value(r["mean"], frac),
        "" if r["delta"] is None else fmt_delta(r["delta"], frac),
        _fmt_ci(ci, frac) if ci else "",
    ]


def _tag_rows(report: GateReport) -> list[str]:
    rows = report.by_tag
    if not rows:
        return []
    shown = _worst_tags(report)
    out = ["| " + " | ".join(TAG_HEADERS) + " |", "|---|---|---|---:|---:|---:|---:|---|"]
    for r in shown:
        cells = _tag_cells(r)
        cells[0], cells[1], cells[2] = markdown_text(cells[0]), markdown_text(cells[1]), code_span(cells[2])
        out.append("| " + " | ".join(cells) + " |")
    if len(rows) > len(shown):
        out.append(f"\n{len(rows) - len(shown)} more rows in the JSON output.")
    return out


def _columns(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """A plain-text table: columns padded to their widest cell, numbers right-aligned."""
    table = [list(headers), *(list(r) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = []
    for row in table:
        cells = [c.ljust(w) if h in _LEFT else c.rjust(w) for c, w, h in zip(row, widths, headers, strict=True)]
        lines.append(indent + "  ".join(cells).rstrip())
    return lines


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _footer(report: GateReport) -> str:
    bits = [f"run {code_span(report.run_name)}", f"{report.current.queries['evaluated']} queries"]
    if report.baseline_label:
        bits.append(f"baseline {_baseline_label(report)}")
    if report.stored_id is not None:
        bits.append(f"stored as result {report.stored_id}")
    bits.append(f"qrels `{report.qrels_fingerprint[:12]}`")
    notes = "".join(f"<br>{markdown_text(n)}" for n in report.notes)
    return "<sub>" + " · ".join(bits) + notes + "</sub>"


def _baseline_label(report: GateReport) -> str:
    """The baseline's label for Markdown: a baseline run's name as code, as the run's; a stored one escaped."""
    if report.baseline_kind == "run":
        return f"run {code_span(report.baseline_label or 'baseline')}"
    return markdown_text(report.baseline_label or "")


def plain_text(report: GateReport, *, stored: bool = False) -> str:
    """The terminal and CI-log form: verdict line, one headline per gate, the gates' table and the
    per-tag breakdown (worst first), as the PR comment has them; plain text, never wrapped.

    ``stored``: say where the run was recorded, when it was (``rankgate gate`` does; a report of
    a throwaway store, as the demo's, need not)."""
    lines = [f"rankgate gate: {VERDICT_LINES[report.verdict]}"]
    lines += [f"  {headline(o)}" for o in report.outcomes]
    lines += [f"  note: {n}" for n in report.notes]
    if stored and report.stored_id is not None:
        lines.append(f"  stored as result {report.stored_id} in the results store")
    bars = _has_bars(report.outcomes)
    lines += ["", *_columns(_gate_headers(report.outcomes), [_gate_cells(o, bars) for o in report.outcomes])]
    if report.by_tag:
        lines += ["", "  Per-tag breakdown, worst first:"]
        lines += _columns(TAG_HEADERS, [_tag_cells(r) for r in _worst_tags(report)])
        if len(report.by_tag) > MAX_TAG_ROWS:
            lines.append(f"  {len(report.by_tag) - MAX_TAG_ROWS} more rows in the JSON output.")
    return "\n".join(lines) + "\n"
