"""Text tables (rich) of a labeling run, its coverage, and agreement reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.label.runner import Estimate, LabelReport
from rankgate.render.numbers import p_text

STOP_TEXT = {
    "max-cost": "stopped before the next request could cross --max-cost",
    "max-judgments": "stopped at --max-judgments",
    "errors": "some pairs got no answer (retries exhausted)",
    "claimed": "another run on this store was judging some pairs",
}


def _money(value: float) -> str:
    return f"{value:.4f}" if value < 100 else f"{value:,.2f}"


def estimate_table(estimate: Estimate, *, priced: bool) -> Any:
    from rich.table import Table

    t = Table(title="estimate (before sending)", show_header=False, title_justify="left")
    t.add_column("what")
    t.add_column("value", justify="right")
    t.add_row("requests to send", f"{estimate.requests:,}")
    t.add_row("answered from the cache", f"{estimate.cache_hits:,}")
    t.add_row("input tokens (typical / worst)", f"{estimate.input_tokens:,} / {estimate.worst_input_tokens:,}")
    t.add_row("output tokens (typical / worst)", f"{estimate.output_tokens:,} / {estimate.worst_output_tokens:,}")
    if priced:
        t.add_row("cost (typical / worst)", f"{_money(estimate.cost)} / {_money(estimate.worst_cost)}")
    return t


def report_table(report: LabelReport, distribution: Mapping[int, int]) -> Any:
    """The pool, what was judged now, usage, the label distribution, and the stop reason."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    pool = report.pool
    c = report.counts
    t = Table(title=f"rankgate label: {report.judge.get('judge_id')}", show_header=False, title_justify="left")
    t.add_column("what")
    t.add_column("value", justify="right")
    t.add_row("runs pooled", ", ".join(str(r) for r in pool.get("runs", [])) or "-")
    t.add_row("depth", str(pool.get("depth")))
    t.add_row("queries", f"{pool.get('queries', 0):,}")
    t.add_row(
        "pool pairs (per query min / median / max)",
        f"{pool.get('pairs', 0):,} ({pool.get('per_query_min')} / {pool.get('per_query_median'):g} / "
        f"{pool.get('per_query_max')})",
    )
    if pool.get("judged_before"):
        t.add_row("left out: judged in --qrels", f"{pool['judged_before']:,}")
    if pool.get("missing_queries"):
        t.add_row("left out: run queries without text", f"{pool['missing_queries']:,}")
    if pool.get("missing_docs"):
        t.add_row("left out: documents not in the corpus", f"{pool['missing_docs']:,}")
    t.add_section()
    t.add_row("in the store already", f"{c.get('done_before', 0):,}")
    if report.dry_run:
        t.add_row("to judge (dry run: nothing sent)", f"{c.get('pool', 0) - c.get('done_before', 0):,}")
        return t
    t.add_row("judged now", f"{c.get('new', 0):,}")
    t.add_row("from the cache (free)", f"{c.get('cached', 0):,}")
    failed, before = c.get("failed", 0), c.get("failed_before", 0)
    again = f" ({before:,} stored before; --retry-failed asks again)" if before else ""
    t.add_row("failed (unreadable answers)", f"{failed:,}{again}")
    if c.get("errors"):
        t.add_row("no answer (retried next run)", f"{c['errors']:,}")
    if c.get("no_signal"):
        t.add_row("no signal (left unjudged)", f"{c['no_signal']:,}")
    if c.get("not_started"):
        t.add_row("not started (budget)", f"{c['not_started']:,}")
    usage = report.usage
    if usage.get("requests"):
        t.add_section()
        t.add_row("requests", f"{usage['requests']:,}")
        t.add_row("tokens in / out", f"{usage.get('input_tokens', 0):,} / {usage.get('output_tokens', 0):,}")
        if report.retries:
            t.add_row("retries", ", ".join(f"{k}: {v}" for k, v in sorted(report.retries.items())))
        t.add_row("cost", _money(float(usage.get("cost", 0.0))))  # type: ignore[arg-type]
    t.add_section()
    shares = percentages(list(distribution.values()))
    dist = "  ".join(f"{label}: {n:,} ({p}%)" for (label, n), p in zip(distribution.items(), shares, strict=True))
    t.add_row("labels in the pool", dist or "-")
    lines: list[Any] = [t]
    if report.stop_reason:
        lines.append(
            Text(f"incomplete: {STOP_TEXT[report.stop_reason]}; rerun the same command to go on", style="bold")
        )
    return Group(*lines)


def percentages(counts: Sequence[int]) -> list[int]:
    """Whole percentages of ``counts`` that add up to 100 (largest remainder; all 0 when the counts are).

    Each share is rounded down, then the points left go one each to the largest remainders (ties:
    the larger count, then the earlier). Rounding each share alone can add up to 99 or 101.

    >>> percentages([23, 17]), percentages([1, 1, 1]), percentages([2, 0]), percentages([])
    ([58, 42], [34, 33, 33], [100, 0], [])
    """
    total = sum(counts)
    if not total:
        return [0] * len(counts)
    shares = [n * 100 // total for n in counts]
    order = sorted(range(len(counts)), key=lambda i: (-(counts[i] * 100 % total), -counts[i], i))
    for i in order[: 100 - sum(shares)]:
        shares[i] += 1
    return shares


def coverage_table(coverage: Mapping[str, Mapping[str, Any]], labels: list[int], limit: int | None = None) -> Any:
    """One row per query: pool, judged, failed, coverage and the count of each label."""
    from rich.table import Table

    t = Table(title="coverage per query", title_justify="left")
    for name in ("query", "pool", "judged", "failed", "coverage"):
        t.add_column(name, justify="left" if name == "query" else "right", no_wrap=name == "query")
    for label in labels:
        t.add_column(f"={label}", justify="right")
    rows = list(coverage.items())
    for qid, row in rows[:limit] if limit else rows:
        counts = row["labels"]
        t.add_row(
            qid,
            str(row["pool"]),
            str(row["judged"]),
            str(row["failed"]),
            f"{row['coverage']:.0%}",
            *(str(counts.get(label, 0)) for label in labels),
        )
    if limit and len(rows) > limit:
        t.caption = f"{len(rows) - limit} more queries (--per-query shows all; --format json has them)"
    return t


def coverage_digest(coverage: Mapping[str, Mapping[str, Any]]) -> str:
    """One line: how many queries are fully judged, and how many have no relevant label."""
    full = sum(1 for r in coverage.values() if r["judged"] == r["pool"])
    none_relevant = sum(1 for r in coverage.values() if r["judged"] and not r["relevant"])
    unjudged = sum(1 for r in coverage.values() if not r["judged"])
    return (
        f"{full} of {len(coverage)} queries fully judged; {unjudged} with no judgment yet; "
        f"{none_relevant} judged with no relevant document"
    )


def agreement_tables(agreement: Mapping[str, Any], ranking: Mapping[str, Any] | None) -> Any:
    from rich.console import Group
    from rich.table import Table

    pairs = agreement["pairs"]
    t = Table(title="label agreement (shared pairs)", show_header=False, title_justify="left")
    t.add_column("what")
    t.add_column("value", justify="right")
    t.add_row("pairs judged by both", f"{pairs['shared']:,}")
    t.add_row(
        "only in the reference / only in the candidate", f"{pairs['reference_only']:,} / {pairs['candidate_only']:,}"
    )
    t.add_row("exact agreement", f"{agreement['exact_agreement']:.4f}")
    for name, value in agreement["kappa"].items():
        t.add_row(f"Cohen's kappa, {name}", "undefined" if value is None else f"{value:.4f}")
    b = agreement["binary"]
    kappa = "undefined" if b["kappa"] is None else f"{b['kappa']:.4f}"
    t.add_row(f"binary (grade >= {b['rel']}): agreement / kappa", f"{b['agreement']:.4f} / {kappa}")
    t.add_row("mean label difference (candidate - reference)", f"{agreement['mean_difference']:+.4f}")
    labels = agreement["confusion"]["labels"]
    cm = Table(title="confusion matrix (rows: reference, columns: candidate)", title_justify="left")
    cm.add_column("")
    for label in labels:
        cm.add_column(str(label), justify="right")
    for label, row in zip(labels, agreement["confusion"]["matrix"], strict=True):
        cm.add_row(str(label), *(str(v) for v in row))
    parts: list[Any] = [t, cm]
    if ranking is not None:
        r = Table(title="system rankings: Kendall's tau-b of scores under both", title_justify="left")
        r.add_column("measure", no_wrap=True)
        r.add_column("tau", justify="right")
        r.add_column("p", justify="right")
        r.add_column("same best system", justify="center")
        r.add_column("reference -> candidate scores")
        for measure, row in ranking["measures"].items():
            scores = ", ".join(f"{s} {row['reference'][s]:.3f}->{row['candidate'][s]:.3f}" for s in ranking["systems"])
            tau = "undefined" if row["tau"] is None else f"{row['tau']:.4f}"
            p = p_text(row["p_value"])
            r.add_row(measure, tau, p, "yes" if row["same_best"] else "no", scores)
        parts.append(r)
    return Group(*parts)
