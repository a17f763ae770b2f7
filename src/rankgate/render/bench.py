"""A benchmark (`BenchReport`) as a table, JSON, JSONL, CSV or Markdown, and the demo's narrow table."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from rankgate.bench.demo import DEMO_MEASURES
from rankgate.bench.report import BenchReport, caption
from rankgate.render.escape import csv_cell
from rankgate.render.terminal import to_text

FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "csv", "markdown")
_DEMO_COLUMNS = ("retriever", "index", "nDCG@10", "R@10", "RR@10", "nbr recall", "p50 ms", "search q/s", "index MB")
_DEMO_HEADERS = {"nbr recall": "nbr rec", "search q/s": "q/s", "index MB": "MB"}


def render(report: BenchReport, fmt: str) -> str:
    """The report as ``table``, ``json``, ``jsonl`` (one configuration per line), ``csv`` or ``markdown``."""
    if fmt == "markdown":
        return markdown(report)
    if fmt == "json":
        return report.to_json()
    if fmt == "jsonl":
        return "".join(json.dumps(r.to_dict(), allow_nan=False) + "\n" for r in report.results)
    if fmt == "csv":
        return csv_text(report)
    if fmt == "table":
        return to_text(table(report))
    raise ValueError(f"unknown format {fmt!r}")


def table(report: BenchReport) -> Any:
    """A rich table of the report's rows with a caption on the dataset."""
    from rich.table import Table

    rows = report.rows()
    d = report.dataset
    t = Table(
        title=f"rankgate bench: {d.get('name')} ({d.get('documents')} docs, {d.get('queries')} queries)",
        caption=caption(_probe_threads(report)),
    )
    columns = list(rows[0]) if rows else ["retriever", "index", "k"]
    for c in columns:
        name = c in ("retriever", "index")  # identifiers, never shrunk
        t.add_column(c, justify="left" if name else "right", no_wrap=name)
    for row in rows:
        t.add_row(*(cell(c, row[c]) for c in columns))
    return t


def markdown(report: BenchReport) -> str:
    rows = report.rows()
    d = report.dataset
    lines = [
        f"**rankgate bench**: {d.get('name')} ({d.get('documents')} docs, {d.get('queries')} queries)",
        "",
    ]
    if rows:
        columns = list(rows[0])
        align = ["---" if c in ("retriever", "index") else "---:" for c in columns]
        lines.append("| " + " | ".join(columns) + " |")
        lines.append("| " + " | ".join(align) + " |")
        for row in rows:
            cells = (cell(c, row[c]).replace("|", "\\|") for c in columns)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"_{caption(_probe_threads(report))}_")
    return "\n".join(lines) + "\n"


def csv_text(report: BenchReport) -> str:
    rows = report.rows()
    buf = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else csv_cell(v) for k, v in row.items()})
    return buf.getvalue()


def cell(column: str, value: Any) -> str:
    """One cell of the bench table: "-" for nothing, rates with thousands separators, ms and s to 2 places."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if column in ("retriever", "index", "k"):
        return str(value)
    if column in ("search q/s", "enc texts/s"):
        return f"{value:,.0f}"
    if column in ("p50 ms", "p95 ms", "p99 ms", "build s", "index MB"):
        return f"{value:.2f}"
    return f"{value:.4f}"


def _probe_threads(report: BenchReport) -> int | None:
    latency = report.settings.get("latency") or {}
    return latency.get("threads") if isinstance(latency, dict) else None


def demo_table(rows: list[dict[str, Any]]) -> Any:
    """A rich Table of `rankgate.bench.demo.demo_bench_results` rows, narrow enough for 80 columns.

    The index column shows the index type; its parameters go in the caption.
    """
    from rich import box
    from rich.table import Table

    params = sorted({str(r["index"]) for r in rows if r.get("index") and "(" in str(r["index"])})
    text = caption() + "".join(f"; {p.replace('(', ': ', 1).rstrip(')')}" for p in params)
    t = Table(
        title="Retrievers on the demo data (rankgate bench demo)",
        caption=text,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    columns = [c for c in _DEMO_COLUMNS if not rows or c in rows[0]]
    for c in columns:
        t.add_column(_DEMO_HEADERS.get(c, c), justify="left" if c in ("retriever", "index") else "right", no_wrap=True)
    for row in rows:
        t.add_row(*(_short(c, row.get(c)) for c in columns))
    return t


def _short(column: str, value: Any) -> str:
    if column == "index" and value is not None:
        return str(value).split("(", 1)[0]
    text = cell(column, value)
    if (column in DEMO_MEASURES or column == "nbr recall") and text != "-":
        return f"{float(value):.3f}"
    return text
