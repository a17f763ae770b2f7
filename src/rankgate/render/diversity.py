"""Text and JSON of diversity measures (`rankgate.evaluation.diversity.DiversityResults`)."""

from __future__ import annotations

import json
from typing import Any

from rankgate.render.terminal import to_text


def render_diversity(results: Any, fmt: str, *, per_query: bool = False) -> str:
    """``fmt`` "json" (measures, aggregate, settings; per_query with ``per_query``) or "table"."""
    if fmt == "json":
        out: dict[str, Any] = {
            "measures": list(results.measures),
            "aggregate": dict(results.aggregate),
            "queries": {"evaluated": len(results.per_query)},
            "settings": dict(results.settings),
        }
        if per_query:
            out["per_query"] = results.per_query
        return json.dumps(out, indent=2, allow_nan=False)
    from rich.table import Table
    from rich.text import Text

    t = Table()
    t.add_column("query" if per_query else "measure", no_wrap=True)
    columns = results.measures if per_query else ["value"]
    for name in columns:
        t.add_column(name, justify="right", no_wrap=per_query)
    if per_query:
        for qid, row in results.per_query.items():
            t.add_row(Text(qid), *(f"{row[m]:.4f}" for m in results.measures))
        t.add_section()
        t.add_row("all", *(f"{results.aggregate[m]:.4f}" for m in results.measures))
    else:
        for name in results.measures:
            t.add_row(name, f"{results.aggregate[name]:.4f}")
    n = len(results.per_query)
    return to_text(t) + f"{n} {'query' if n == 1 else 'queries'} of the subtopic judgments evaluated\n"
