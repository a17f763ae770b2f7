"""Render `Results` in the formats of ``rankgate eval --format``."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from rankgate.core.results import Results


def render(results: Results, fmt: str, *, per_query: bool = False) -> str:
    if fmt == "json":
        return results.to_json(per_query=per_query)
    if fmt == "jsonl":
        return _jsonl(results, per_query)
    if fmt == "csv":
        return _csv(results, per_query)
    if fmt == "trec":
        return _trec(results, per_query)
    if fmt == "table":
        return to_text(table(results, per_query=per_query))
    raise ValueError(f"unknown format {fmt!r}")


def _value(results: Results, name: str, value: float) -> Any:
    return None if math.isnan(value) else value


def _jsonl(results: Results, per_query: bool) -> str:
    lines = []
    if per_query:
        for qid, values in results.per_query.items():
            lines.append(json.dumps({"query_id": qid, **values}))
    agg = {k: _value(results, k, v) for k, v in results.aggregate.items()}
    lines.append(json.dumps({"query_id": "all", **agg}))
    return "\n".join(lines) + "\n"


def _csv(results: Results, per_query: bool) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["query_id", *results.names])
    if per_query:
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            writer.writerow([qid, *(repr(v) for v in row)])
    writer.writerow(["all", *("" if math.isnan(v) else repr(v) for v in results.aggregate.values())])
    return buf.getvalue()


def _trec_number(measure_sum: bool, value: float) -> str:
    if math.isnan(value):
        return "nan"
    return str(round(value)) if measure_sum else f"{value:.4f}"


def _trec(results: Results, per_query: bool) -> str:
    """trec_eval -q style: ``measure<TAB>qid<TAB>value``, 4 decimals, counts as integers."""
    sums = [m.spec.aggregate == "sum" for m in results.measures]
    lines = []
    if per_query:
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            for name, is_sum, v in zip(results.names, sums, row, strict=True):
                lines.append(f"{name}\t{qid}\t{_trec_number(is_sum, v)}")
    for (name, v), is_sum in zip(results.aggregate.items(), sums, strict=True):
        lines.append(f"{name}\tall\t{_trec_number(is_sum, v)}")
    return "\n".join(lines) + "\n"


def format_value(value: float, is_sum: bool) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.0f}" if is_sum else f"{value:.4f}"


def table(results: Results, *, per_query: bool = False) -> Any:
    """A rich table: one row per measure (or per query with ``per_query``)."""
    from rich.table import Table

    sums = [m.spec.aggregate == "sum" for m in results.measures]
    from rich.console import Group
    from rich.text import Text

    title = f"{results.run_name}" if results.run_name else None
    q = results.queries
    footer = Text(
        f"{q['evaluated']} queries evaluated; {q['missing_from_run']} missing from the run, "
        f"{q['run_only']} only in the run, {q['no_relevant']} without relevant docs",
        style="dim",
    )
    if per_query:
        t = Table(title=title)
        t.add_column("query")
        for name in results.names:
            t.add_column(name, justify="right")
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            t.add_row(qid, *(format_value(v, s) for v, s in zip(row, sums, strict=True)))
        t.add_section()
        t.add_row("all", *(format_value(v, s) for v, s in zip(results.aggregate.values(), sums, strict=True)))
        return Group(t, footer)
    t = Table(title=title)
    t.add_column("measure")
    t.add_column("value", justify="right")
    if results.ci is not None:
        t.add_column("95% CI", justify="right")
    for (name, v), s in zip(results.aggregate.items(), sums, strict=True):
        cells = [name, format_value(v, s)]
        if results.ci is not None:
            interval = results.ci.get(name)
            cells.append("-" if interval is None else f"[{interval[0]:.4f}, {interval[1]:.4f}]")
        t.add_row(*cells)
    return Group(t, footer)


def to_text(renderable: Any, width: int = 100) -> str:
    """Render a rich object to plain text (no colour codes)."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out)
