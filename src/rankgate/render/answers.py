"""Render answer-aware results (``rankgate rag answers``, ``rankgate rag context``) as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def render(body: Mapping[str, Any], fmt: str, *, title: str) -> str:
    """``body`` (a result's ``to_dict()``) as JSON, or as text: the means, the counts, then per query if present."""
    if fmt == "json":
        return json.dumps(body, indent=2)
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}")
    from rich.table import Table

    from rankgate.render.terminal import to_text

    summary = Table()
    summary.add_column("measure", no_wrap=True)
    summary.add_column("mean", justify="right")
    for name in body["measures"]:
        summary.add_row(name, f"{body['aggregate'][name]:.4f}")
    counts = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in body["queries"].items())
    parts = [f"{title}\n", to_text(summary), f"queries: {counts}\n"]
    for line in body.get("notes", []):
        parts.append(f"note: {line}\n")
    per_query = body.get("per_query")
    if per_query:
        columns = list(next(iter(per_query.values())))
        table = Table(title="per query")
        table.add_column("query", no_wrap=True)
        for c in columns:
            table.add_column(c, justify="right", no_wrap=True)
        for qid, values in per_query.items():
            table.add_row(qid, *(_cell(values[c]) for c in columns))
        parts.append(to_text(table))
    return "".join(parts)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
