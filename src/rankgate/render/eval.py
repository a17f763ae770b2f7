"""Render `Results` in the formats of ``rankgate eval --format``."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.evaluation.results import Results
from rankgate.render.escape import csv_cell, trec_id
from rankgate.render.terminal import to_text  # the one width policy

AGGREGATE_ID = "all"  # the query id of the summary row in trec, jsonl, csv and the per-query table


def render(results: Results, fmt: str, *, per_query: bool = False) -> str:
    """``results`` as ``rankgate eval --format FMT`` prints them, with their query groups if any.

    The groups (`Results.with_groups`) are additions that change nothing already there: JSON's
    ``groups`` key, JSONL and CSV rows with query id ``all`` and tag/value/n/small columns, a
    table per tag. trec_eval's format holds per-query lines only, so it leaves them out.
    """
    if fmt == "json":
        return results.to_json(per_query=per_query)
    if fmt == "jsonl":
        return _jsonl(results, per_query) + (_groups_jsonl(results) if results.groups else "")
    if fmt == "csv":
        return _csv(results, per_query)
    if fmt == "trec":
        return _trec(results, per_query)
    if fmt == "table":
        text = to_text(table(results, per_query=per_query))
        return text + to_text(groups_table(results)) if results.groups else text
    raise ValueError(f"unknown format {fmt!r}")


def _value(results: Results, name: str, value: float) -> Any:
    return None if math.isnan(value) else value


def _jsonl(results: Results, per_query: bool) -> str:
    lines = []
    if per_query:
        for qid, values in results.per_query.items():
            lines.append(json.dumps({"query_id": qid, **values}))
    agg = {k: _value(results, k, v) for k, v in results.aggregate.items()}
    lines.append(json.dumps({"query_id": AGGREGATE_ID, **agg}))
    return "\n".join(lines) + "\n"


def _csv(results: Results, per_query: bool) -> str:
    """A row per query (with ``per_query``) and ``all``; with groups, four columns more (tag,
    value, n, small), empty on those rows, and a row per group."""
    extra = ["tag", "value", "n", "small"] if results.groups else []
    pad = [""] * len(extra)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["query_id", *results.names, *extra])
    if per_query:
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            writer.writerow([csv_cell(qid), *(repr(v) for v in row), *pad])
    writer.writerow([AGGREGATE_ID, *("" if math.isnan(v) else repr(v) for v in results.aggregate.values()), *pad])
    for key, value, n, small, aggregate in _group_rows(results):
        means = ("" if math.isnan(v) else repr(v) for v in aggregate.values())
        writer.writerow([AGGREGATE_ID, *means, csv_cell(key), csv_cell(value), n, "true" if small else "false"])
    return buf.getvalue()


def aggregate_collision(results: Results, fmt: str, *, per_query: bool) -> list[str]:
    """A warning when a query is named like the summary row, which the output then holds twice.

    The per-query rows of trec, jsonl, csv and the table end in a row with query id ``all``;
    JSON keeps the aggregate apart and needs no warning.

    >>> import numpy as np
    >>> from rankgate.measures.parse import parse_measure
    >>> r = Results([parse_measure("P@5")], ["all", "q2"], np.zeros((2, 1)), {}, {})
    >>> aggregate_collision(r, "csv", per_query=True)  # doctest: +ELLIPSIS
    ["a query is named 'all', like the summary row of --format csv: ...]
    >>> aggregate_collision(r, "json", per_query=True), aggregate_collision(r, "csv", per_query=False)
    ([], [])
    """
    if not per_query or fmt == "json" or AGGREGATE_ID not in results.query_ids:
        return []
    return [
        f"a query is named {AGGREGATE_ID!r}, like the summary row of --format {fmt}: the output holds two "
        f"rows with query id {AGGREGATE_ID!r}, the query's first and the mean of all queries last"
    ]


def _trec_number(measure_sum: bool, value: float) -> str:
    if math.isnan(value):
        return "nan"
    return str(round(value)) if measure_sum else f"{value:.4f}"


def _trec(results: Results, per_query: bool) -> str:
    """trec_eval -q style: ``measure<TAB>qid<TAB>value``, 4 decimals, counts as integers.

    trec_eval's lines are split on whitespace, so a query id holding any is refused (`trec_id`).
    """
    sums = [m.spec.aggregate == "sum" for m in results.measures]
    lines = []
    if per_query:
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            for name, is_sum, v in zip(results.names, sums, row, strict=True):
                lines.append(f"{name}\t{trec_id(qid)}\t{_trec_number(is_sum, v)}")
    for (name, v), is_sum in zip(results.aggregate.items(), sums, strict=True):
        lines.append(f"{name}\t{AGGREGATE_ID}\t{_trec_number(is_sum, v)}")
    return "\n".join(lines) + "\n"


# -- query groups (eval --tags) --
def _group_rows(results: Results) -> list[tuple[str, str, int, bool, dict[str, float]]]:
    return [
        (key, value, g.n, g.small, g.aggregate)
        for key, values in (results.groups or {}).items()
        for value, g in values.items()
    ]


def _groups_jsonl(results: Results) -> str:
    lines = []
    for key, value, n, small, aggregate in _group_rows(results):
        means = {k: (None if math.isnan(v) else v) for k, v in aggregate.items()}
        row = {"query_id": AGGREGATE_ID, "tag": key, "value": value, "n": n, "small": small, **means}
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def groups_table(results: Results) -> Any:
    """A table per tag: a row per value with its size and means (and intervals under them)."""
    from rich.console import Group
    from rich.table import Table

    from rankgate.evaluation.groups import MIN_GROUP

    sums = [m.spec.aggregate == "sum" for m in results.measures]
    tables = []
    for key, values in (results.groups or {}).items():
        t = Table(title=f"by {key}", caption=f"small: under {MIN_GROUP} queries", caption_justify="left")
        t.add_column(key, no_wrap=True)  # tag values and measure names are identifiers: never cut
        t.add_column("queries", justify="right")
        for name in results.names:
            t.add_column(name, justify="right", no_wrap=True)
        for value, g in values.items():
            cells = []
            for name, is_sum in zip(results.names, sums, strict=True):
                cells.append(format_value(g.aggregate[name], is_sum) + _under(g.ci, name))
            size = f"{g.n} (small)" if g.small else str(g.n)
            t.add_row(value, size, *cells, style="dim" if g.small else None)
        tables.append(t)
    return Group(*tables)


def _ci_label(results: Results) -> str:
    """``95% CI``, or the level the intervals were drawn at."""
    drawn = results.settings.get("ci")
    level = drawn.get("confidence", 0.95) if isinstance(drawn, dict) else 0.95
    return f"{level:.0%} CI"


def _under(ci: Mapping[str, Sequence[float] | None] | None, name: str) -> str:
    """The interval of ``name`` on a line of its own under its mean ("" without one)."""
    interval = ci.get(name) if ci is not None else None
    return "" if interval is None else f"\n[{interval[0]:.4f}, {interval[1]:.4f}]"


def format_value(value: float, is_sum: bool) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.0f}" if is_sum else f"{value:.4f}"


SETTINGS_SHOWN = ("queries", "ties", "rel", "empty", "duplicates", "judged_only")
CHUNK_SETTINGS_SHOWN = ("chunk_sep", "chunk_map", "chunk_agg", "chunk_offsets", "span_overlap")  # when in use


def _settings_line(results: Results) -> str:
    """The semantic choices, echoed under the table as in the JSON's ``settings``."""
    shown = [f"{k}={str(results.settings[k]).lower()}" for k in SETTINGS_SHOWN if k in results.settings]
    chunked = [
        f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"  # repr: a path or separator shows its quotes
        for k in CHUNK_SETTINGS_SHOWN
        if (v := results.settings.get(k)) is not None
    ]
    return ("\nsettings: " + ", ".join(shown + chunked) if shown else "") + _chunks_line(results)


def _chunks_line(results: Results) -> str:
    """How many run rows were chunks of documents, and what folding them did."""
    c = results.chunks
    if c is None:
        return ""
    eg = f" (e.g. {', '.join(repr(x) for x in c.unmapped_ids)})" if c.unmapped_ids else ""
    return (
        f"\nchunks: {c.mapped} rows mapped to documents, {c.unmapped} kept as they were{eg}; "
        f"{c.collapsed} documents had several chunks ({c.dropped} chunk rows folded into them)"
    )


def table(results: Results, *, per_query: bool = False) -> Any:
    """A rich table: one row per measure (or per query with ``per_query``).

    With intervals (``--ci``), the per-measure table has a ``95% CI`` column; the per-query
    table shows each interval under its mean on the ``all`` row (its caption says so).
    Query ids and measure names are identifiers: their columns never shrink (`to_text`).
    """
    from rich.table import Table

    sums = [m.spec.aggregate == "sum" for m in results.measures]
    from rich.console import Group
    from rich.text import Text

    title = f"{results.run_name}" if results.run_name else None
    q = results.queries
    footer = Text(
        f"{q['evaluated']} {'query' if q['evaluated'] == 1 else 'queries'} evaluated; "
        f"{q['missing_from_run']} missing from the run, "
        f"{q['run_only']} only in the run, {q['no_relevant']} without relevant docs" + _settings_line(results),
        style="dim",
    )
    if per_query:
        t = Table(title=title)
        if results.ci is not None:
            t.caption, t.caption_justify = f"{AGGREGATE_ID}: the mean, and its {_ci_label(results)} under it", "left"
        t.add_column("query", no_wrap=True)
        for name in results.names:
            t.add_column(name, justify="right", no_wrap=True)
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            t.add_row(qid, *(format_value(v, s) for v, s in zip(row, sums, strict=True)))
        t.add_section()
        means = zip(results.names, results.aggregate.values(), sums, strict=True)
        t.add_row(AGGREGATE_ID, *(format_value(v, s) + _under(results.ci, name) for name, v, s in means))
        return Group(t, footer)
    t = Table(title=title)
    t.add_column("measure", no_wrap=True)
    t.add_column("value", justify="right")
    if results.ci is not None:
        t.add_column(_ci_label(results), justify="right")
    for (name, v), s in zip(results.aggregate.items(), sums, strict=True):
        cells = [name, format_value(v, s)]
        if results.ci is not None:
            interval = results.ci.get(name)
            cells.append("-" if interval is None else f"[{interval[0]:.4f}, {interval[1]:.4f}]")
        t.add_row(*cells)
    return Group(t, footer)
