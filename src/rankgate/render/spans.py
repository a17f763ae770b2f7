"""Text and JSON of span measures (`rankgate.rag.spans.SpanResults`)."""

from __future__ import annotations

import json
import math
from typing import Any

from rankgate.render.terminal import to_text


def render_spans(results: Any, fmt: str, *, per_query: bool = False) -> str:
    """``fmt`` "json" (the shape of ``rankgate eval --format json``) or "table"."""
    if fmt == "json":
        return json.dumps(results.to_dict(per_query=per_query), indent=2, allow_nan=False)
    from rich.table import Table
    from rich.text import Text

    t = Table(title=results.run_name)
    t.add_column("query" if per_query else "measure", no_wrap=True)
    columns = results.names if per_query else ["value"]
    for name in columns:
        t.add_column(name, justify="right", no_wrap=per_query)
    if per_query:
        for qid, row in zip(results.query_ids, results.values.tolist(), strict=True):
            t.add_row(Text(qid), *(f"{v:.4f}" for v in row))
    for name, value in results.aggregate.items():
        if not per_query:
            t.add_row(name, "-" if math.isnan(value) else f"{value:.4f}")
    if per_query:
        t.add_section()
        t.add_row("all", *("-" if math.isnan(v) else f"{v:.4f}" for v in results.aggregate.values()))
    q = results.queries
    footer = (
        f"{q['evaluated']} {'query' if q['evaluated'] == 1 else 'queries'} evaluated; "
        f"{q['missing_from_run']} missing from the run, "
        f"{q['run_only']} only in the run"
    )
    return to_text(t) + footer + "\n"
